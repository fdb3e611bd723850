from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

import pytest

from tests.support import count_trials
from trialist.events import EventBus
from trialist.trials import DuplicateTrialError, InvalidEmailError, start_trial


def test_trial_ends_fourteen_days_after_signup(
    conn: sqlite3.Connection, now: datetime, bus: EventBus
) -> None:
    trial = start_trial(conn, "a@example.com", now, bus)
    assert trial.ends_at == now + timedelta(days=14)


def test_trial_started_event_carries_user_and_end_date(
    conn: sqlite3.Connection, now: datetime, bus: EventBus
) -> None:
    trial = start_trial(conn, "a@example.com", now, bus)
    events = bus.events
    assert [event.name for event in events] == ["trial_started"]
    assert events[0].payload["userId"] == trial.user_id
    assert events[0].payload["trialEndsAt"] == trial.ends_at.isoformat()


def test_second_active_trial_for_same_email_is_refused(
    conn: sqlite3.Connection, now: datetime, bus: EventBus
) -> None:
    start_trial(conn, "a@example.com", now, bus)
    with pytest.raises(DuplicateTrialError):
        start_trial(conn, "  A@Example.COM ", now, bus)
    assert count_trials(conn, "a@example.com") == 1
    assert len(bus.events) == 1


@pytest.mark.parametrize("email", ["", "no-at-sign", "a@b", "a b@example.com"])
def test_malformed_email_is_refused(
    conn: sqlite3.Connection, now: datetime, bus: EventBus, email: str
) -> None:
    with pytest.raises(InvalidEmailError):
        start_trial(conn, email, now, bus)
    assert bus.events == []


def test_database_rejects_a_racing_second_active_trial(
    conn: sqlite3.Connection, now: datetime, bus: EventBus
) -> None:
    trial = start_trial(conn, "a@example.com", now, bus)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO trials (user_id, email, started_at, ends_at) VALUES (?, ?, ?, ?)",
            (trial.user_id, "a@example.com", now.isoformat(), now.isoformat()),
        )
