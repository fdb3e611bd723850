"""Trial-ending reminders (FR-014, FR-015): who is due, on which channel, at most once."""

from __future__ import annotations

import logging
import sqlite3
from datetime import datetime, timedelta
from typing import Protocol

from trialist.config import reminder_channel

REMINDER_DAYS_BEFORE = 3

log = logging.getLogger(__name__)


class Notifier(Protocol):
    def send(self, channel: str, email: str) -> None: ...


def send_due_reminders(
    conn: sqlite3.Connection, now: datetime, notifier: Notifier, channel: str | None = None
) -> int:
    """Remind every active trial ending within the next three days; return how many were sent.

    Each trial is claimed (reminded_at set) before delivery, so overlapping or repeated runs
    never remind twice. A failed delivery releases the claim and the next run retries it.
    """
    channel = channel if channel is not None else reminder_channel()
    horizon = now + timedelta(days=REMINDER_DAYS_BEFORE)
    due = conn.execute(
        "SELECT id, email FROM trials WHERE status = 'trialing' AND ends_at > ?"
        " AND ends_at <= ? AND reminded_at IS NULL ORDER BY ends_at",
        (now.isoformat(), horizon.isoformat()),
    ).fetchall()
    sent = 0
    for trial in due:
        with conn:
            claimed = conn.execute(
                "UPDATE trials SET reminded_at = ? WHERE id = ? AND reminded_at IS NULL",
                (now.isoformat(), trial["id"]),
            ).rowcount
        if not claimed:
            continue
        try:
            notifier.send(channel, trial["email"])
        except Exception:
            log.exception("reminder for trial %s failed; it will be retried", trial["id"])
            with conn:
                conn.execute("UPDATE trials SET reminded_at = NULL WHERE id = ?", (trial["id"],))
            continue
        sent += 1
    log.info("sent %d trial-ending reminders via %s", sent, channel)
    return sent
