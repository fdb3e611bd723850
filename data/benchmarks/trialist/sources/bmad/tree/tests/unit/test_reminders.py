from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

import pytest

from trialist.config import ConfigurationError, reminder_channel
from trialist.events import EventBus
from trialist.reminders import send_due_reminders
from trialist.trials import start_trial


class SpyNotifier:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def send(self, channel: str, email: str) -> None:
        self.sent.append((channel, email))


@pytest.fixture
def trial_ending_in_three_days(conn: sqlite3.Connection, now: datetime, bus: EventBus) -> None:
    start_trial(conn, "a@example.com", now - timedelta(days=11), bus)


@pytest.mark.usefixtures("trial_ending_in_three_days")
def test_reminder_defaults_to_email(
    conn: sqlite3.Connection, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRIALIST_REMINDER_CHANNEL", raising=False)
    notifier = SpyNotifier()

    send_due_reminders(conn, now, notifier)

    assert notifier.sent == [("email", "a@example.com")]


@pytest.mark.usefixtures("trial_ending_in_three_days")
def test_reminder_uses_in_app_channel_when_configured(
    conn: sqlite3.Connection, now: datetime
) -> None:
    notifier = SpyNotifier()
    channel = reminder_channel({"TRIALIST_REMINDER_CHANNEL": "in_app"})

    send_due_reminders(conn, now, notifier, channel=channel)

    assert notifier.sent == [("in_app", "a@example.com")]


@pytest.mark.usefixtures("trial_ending_in_three_days")
def test_reminder_is_sent_only_once(conn: sqlite3.Connection, now: datetime) -> None:
    notifier = SpyNotifier()

    send_due_reminders(conn, now, notifier, channel="email")

    assert send_due_reminders(conn, now, notifier, channel="email") == 0
    assert len(notifier.sent) == 1


def test_unsupported_channel_is_rejected() -> None:
    with pytest.raises(ConfigurationError):
        reminder_channel({"TRIALIST_REMINDER_CHANNEL": "sms"})
