"""Trial sign-up (Requirement 1)."""

from __future__ import annotations

from datetime import datetime, timedelta

from trialist.events import EventLog
from trialist.store import Store, TrialRecord

TRIAL_DAYS = 14


class TrialAlreadyActiveError(Exception):
    """The email already has a trial in progress (Requirement 1.3)."""


class TrialService:
    def __init__(self, store: Store, events: EventLog) -> None:
        self.store = store
        self.events = events

    def start(self, email: str, now: datetime) -> TrialRecord:
        if self.store.has_active_trial(email):
            raise TrialAlreadyActiveError(email)
        trial = self.store.create_trial(email, now, now + timedelta(days=TRIAL_DAYS))
        payload = {"userId": trial.user_id, "trialEndsAt": trial.ends_at.isoformat()}
        self.events.emit("trial_started", payload)
        return trial
