"""Trial sign-up (Story 1.1, FR1-FR3)."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

from trialist.events import EventBus
from trialist.models import Trial

TRIAL_DAYS = 14


class ActiveTrialExistsError(Exception):
    """FR2: one active trial per email."""


def start_trial(conn: sqlite3.Connection, email: str, now: datetime, bus: EventBus) -> Trial:
    row = conn.execute("SELECT id FROM trials WHERE email = ?", (email,)).fetchone()
    if row is not None:
        raise ActiveTrialExistsError(email)

    ends_at = now + timedelta(days=TRIAL_DAYS)
    with conn:
        conn.execute(
            "INSERT OR IGNORE INTO users (email, created_at) VALUES (?, ?)",
            (email, now.isoformat()),
        )
        (user_id,) = conn.execute("SELECT id FROM users WHERE email = ?", (email,)).fetchone()
        trial_id = conn.execute(
            "INSERT INTO trials (user_id, email, started_at, ends_at) VALUES (?, ?, ?, ?)",
            (user_id, email, now.isoformat(), ends_at.isoformat()),
        ).lastrowid
        subscription_id = conn.execute(
            "INSERT INTO subscriptions (user_id, trial_id, period_start, period_end)"
            " VALUES (?, ?, ?, ?)",
            (user_id, trial_id, now.isoformat(), ends_at.isoformat()),
        ).lastrowid

    payload = {"userId": user_id, "trialEndsAt": ends_at.isoformat()}
    bus.emit("trial_started", payload)
    return Trial(
        id=trial_id, user_id=user_id, subscription_id=subscription_id, email=email, ends_at=ends_at
    )
