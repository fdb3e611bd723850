from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

import pytest

from trialist.events import EventBus
from trialist.trials import ActiveTrialExistsError, start_trial


def test_trial_lasts_fourteen_days(conn: sqlite3.Connection, now: datetime, bus: EventBus) -> None:
    trial = start_trial(conn, "a@example.com", now, bus)

    assert trial.ends_at == now + timedelta(days=14)


def test_trial_started_event_is_emitted(
    conn: sqlite3.Connection, now: datetime, bus: EventBus
) -> None:
    trial = start_trial(conn, "a@example.com", now, bus)

    events = bus.history
    assert len(events) == 1
    assert events[0].name == "trial_started"
    assert events[0].payload["userId"] == trial.user_id


def test_second_active_trial_is_rejected(
    conn: sqlite3.Connection, now: datetime, bus: EventBus
) -> None:
    start_trial(conn, "a@example.com", now, bus)

    with pytest.raises(ActiveTrialExistsError):
        start_trial(conn, "a@example.com", now, bus)
