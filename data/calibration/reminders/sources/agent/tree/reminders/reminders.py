"""The trial-ending reminder job: who is due, which channel, and remembering who was told."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime, timedelta

REMIND_DAYS_BEFORE = 3
REMINDER_CHANNEL = "email"

Outbox = list[tuple[str, str]]


def _send_email(outbox: Outbox, email: str) -> None:
    outbox.append(("email", email))


def _send_in_app(outbox: Outbox, email: str) -> None:
    outbox.append(("in_app", email))


SENDERS: dict[str, Callable[[Outbox, str], None]] = {
    "email": _send_email,
    "in_app": _send_in_app,
}


def due_trials(conn: sqlite3.Connection, now: datetime) -> list[sqlite3.Row]:
    """Trials ending on the day three days from `now` that have not been reminded yet."""
    day = (now + timedelta(days=REMIND_DAYS_BEFORE)).date().isoformat()
    return conn.execute(
        "SELECT id, email FROM trials WHERE date(ends_at) = ? AND reminded_at IS NULL",
        (day,),
    ).fetchall()


def send_due_reminders(conn: sqlite3.Connection, now: datetime, outbox: Outbox) -> int:
    """Send every due reminder once; returns how many were sent."""
    send = SENDERS[REMINDER_CHANNEL]
    sent = 0
    for row in due_trials(conn, now):
        send(outbox, row["email"])
        conn.execute(
            "UPDATE trials SET reminded_at = ? WHERE id = ?", (now.isoformat(), row["id"])
        )
        sent += 1
    conn.commit()
    return sent
