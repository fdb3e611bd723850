from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

import pytest

from tests.support import RecordingNotifier
from trialist.config import ConfigError
from trialist.events import EventBus
from trialist.reminders import send_due_reminders
from trialist.trials import start_trial


@pytest.fixture
def due_trial(conn: sqlite3.Connection, now: datetime, bus: EventBus) -> None:
    """A trial that ends exactly three days after `now`."""
    start_trial(conn, "a@example.com", now - timedelta(days=11), bus)


@pytest.fixture(autouse=True)
def default_channel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRIALIST_REMINDER_CHANNEL", raising=False)


@pytest.mark.usefixtures("due_trial")
def test_reminder_goes_out_by_email_three_days_before_the_end(
    conn: sqlite3.Connection, now: datetime
) -> None:
    notifier = RecordingNotifier()
    assert send_due_reminders(conn, now, notifier) == 1
    assert notifier.sent == [("email", "a@example.com")]


@pytest.mark.usefixtures("due_trial")
def test_in_app_channel_when_configured(
    conn: sqlite3.Connection, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIALIST_REMINDER_CHANNEL", "in_app")
    notifier = RecordingNotifier()
    send_due_reminders(conn, now, notifier)
    assert notifier.sent == [("in_app", "a@example.com")]


@pytest.mark.usefixtures("due_trial")
def test_at_most_one_reminder_however_often_the_job_runs(
    conn: sqlite3.Connection, now: datetime
) -> None:
    notifier = RecordingNotifier()
    send_due_reminders(conn, now, notifier)
    assert send_due_reminders(conn, now, notifier) == 0
    assert send_due_reminders(conn, now + timedelta(days=1), notifier) == 0
    assert len(notifier.sent) == 1


def test_trials_ending_later_are_not_reminded_yet(
    conn: sqlite3.Connection, now: datetime, bus: EventBus
) -> None:
    start_trial(conn, "later@example.com", now, bus)
    notifier = RecordingNotifier()
    send_due_reminders(conn, now, notifier)
    assert notifier.sent == []


@pytest.mark.usefixtures("due_trial")
def test_failed_delivery_is_retried_on_the_next_run(
    conn: sqlite3.Connection, now: datetime
) -> None:
    assert send_due_reminders(conn, now, RecordingNotifier(frozenset({"a@example.com"}))) == 0
    notifier = RecordingNotifier()
    assert send_due_reminders(conn, now, notifier) == 1
    assert notifier.sent == [("email", "a@example.com")]


@pytest.mark.usefixtures("due_trial")
def test_unknown_channel_is_a_configuration_error(
    conn: sqlite3.Connection, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIALIST_REMINDER_CHANNEL", "sms")
    with pytest.raises(ConfigError):
        send_due_reminders(conn, now, RecordingNotifier())
