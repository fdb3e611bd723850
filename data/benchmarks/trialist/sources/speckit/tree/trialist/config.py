"""Runtime configuration read from the environment (FR-014: the reminder channel)."""

from __future__ import annotations

import os

DEFAULT_REMINDER_CHANNEL = "email"
REMINDER_CHANNELS = ("email", "in_app")


class ConfigError(ValueError):
    """A configuration value is outside its allowed set."""


def reminder_channel() -> str:
    """The channel trial-ending reminders go out on; email unless configured otherwise."""
    channel = os.environ.get("TRIALIST_REMINDER_CHANNEL", DEFAULT_REMINDER_CHANNEL)
    if channel not in REMINDER_CHANNELS:
        raise ConfigError(
            f"TRIALIST_REMINDER_CHANNEL must be one of {REMINDER_CHANNELS}, got {channel!r}"
        )
    return channel
