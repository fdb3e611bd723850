"""Trial-ending reminders (Requirement 3)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol

from trialist.store import Store

REMINDER_DAYS_BEFORE = 3
REMINDER_CHANNEL = "email"


class Notifier(Protocol):
    def send(self, channel: str, email: str) -> None: ...


def send_due_reminders(store: Store, now: datetime, notifier: Notifier) -> int:
    """Send one reminder to every trial ending within the next three days (Requirement 3.2:
    a trial already reminded is skipped, however often the job runs)."""
    due = store.trials_ending_between(now, now + timedelta(days=REMINDER_DAYS_BEFORE))
    for trial in due:
        notifier.send(REMINDER_CHANNEL, trial.email)
        store.mark_reminded(trial.id, now)
    return len(due)
