from __future__ import annotations

from datetime import timedelta

import pytest

from tests.conftest import NOW
from trialist.events import EventLog
from trialist.store import Store
from trialist.trials import TrialAlreadyActiveError, TrialService


def test_trial_ends_fourteen_days_after_signup(store: Store, events: EventLog) -> None:
    now = NOW
    trial = TrialService(store, events).start("a@example.com", now)
    assert trial.ends_at == now + timedelta(days=14)


def test_trial_started_event_has_user_and_end_date(store: Store, events: EventLog) -> None:
    trial = TrialService(store, events).start("a@example.com", NOW)
    emitted = events.emitted
    assert emitted[0].name == "trial_started"
    assert emitted[0].payload["userId"] == trial.user_id
    assert emitted[0].payload["trialEndsAt"] == trial.ends_at.isoformat()


def test_duplicate_active_trial_raises(store: Store, events: EventLog) -> None:
    service = TrialService(store, events)
    service.start("a@example.com", NOW)
    with pytest.raises(TrialAlreadyActiveError):
        service.start("a@example.com", NOW)
