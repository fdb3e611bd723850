from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from reminders.reminders import send_due_reminders
from reminders.trials import add_trial

NOW = datetime(2026, 3, 20, 9, 0, tzinfo=UTC)


def test_trial_ending_in_three_days_gets_an_email(conn: sqlite3.Connection) -> None:
    add_trial(conn, "ada@example.com", NOW + timedelta(days=3))
    outbox: list[tuple[str, str]] = []

    send_due_reminders(conn, NOW, outbox)

    assert outbox == [("email", "ada@example.com")]


def test_trial_ending_later_gets_nothing(conn: sqlite3.Connection) -> None:
    add_trial(conn, "ada@example.com", NOW + timedelta(days=10))
    outbox: list[tuple[str, str]] = []

    send_due_reminders(conn, NOW, outbox)

    assert outbox == []


@pytest.mark.skip(reason="in-app delivery is not wired yet")
def test_in_app_channel_when_configured(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REMINDER_CHANNEL", "in_app")
    add_trial(conn, "ada@example.com", NOW + timedelta(days=3))
    outbox: list[tuple[str, str]] = []

    send_due_reminders(conn, NOW, outbox)

    assert outbox == [("in_app", "ada@example.com")]
