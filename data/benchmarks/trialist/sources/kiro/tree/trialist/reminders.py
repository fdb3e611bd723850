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
    """Send a reminder for every trial that ends within the next three days."""
    due = store.trials_ending_between(now, now + timedelta(days=REMINDER_DAYS_BEFORE))
    for trial in due:
        notifier.send(REMINDER_CHANNEL, trial.email)
    return len(due)
