"""Trial-ending reminder job (Story 1.2, FR7-FR8)."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from typing import Protocol

from trialist.config import reminder_channel

REMINDER_DAYS_BEFORE = 3


class Notifier(Protocol):
    def send(self, channel: str, email: str) -> None: ...


def send_due_reminders(
    conn: sqlite3.Connection, now: datetime, notifier: Notifier, channel: str | None = None
) -> int:
    """Notify trials ending within three days that were not reminded yet; return the count."""
    selected_channel = channel or reminder_channel()
    window_end = now + timedelta(days=REMINDER_DAYS_BEFORE)
    rows = conn.execute(
        "SELECT id, email FROM trials"
        " WHERE status = 'trialing' AND ends_at > ? AND ends_at <= ? AND reminded_at IS NULL",
        (now.isoformat(), window_end.isoformat()),
    ).fetchall()
    for trial_id, email in rows:
        notifier.send(selected_channel, email)
        with conn:
            conn.execute(
                "UPDATE trials SET reminded_at = ? WHERE id = ?", (now.isoformat(), trial_id)
            )
    return len(rows)
