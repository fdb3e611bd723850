"""Configuration from environment variables (NFR4)."""

from __future__ import annotations

import os
from collections.abc import Mapping

DEFAULT_REMINDER_CHANNEL = "email"
ALLOWED_REMINDER_CHANNELS = ("email", "in_app")


class ConfigurationError(ValueError):
    """An environment variable holds an unsupported value."""


def reminder_channel(environ: Mapping[str, str] | None = None) -> str:
    """FR7: the product picks the reminder channel; email unless configured otherwise."""
    env = os.environ if environ is None else environ
    channel = env.get("TRIALIST_REMINDER_CHANNEL", DEFAULT_REMINDER_CHANNEL)
    if channel not in ALLOWED_REMINDER_CHANNELS:
        raise ConfigurationError(
            f"TRIALIST_REMINDER_CHANNEL={channel!r} is not one of {ALLOWED_REMINDER_CHANNELS}"
        )
    return channel
