"""Starting free trials (FR-001..FR-005, FR-013): validation, the duplicate rule, the event."""

from __future__ import annotations

import logging
import re
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta

from trialist.events import EventBus

TRIAL_DAYS = 14
MAX_EMAIL_LENGTH = 254
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")

log = logging.getLogger(__name__)


class InvalidEmailError(ValueError):
    """FR-002: the address is missing or malformed."""


class DuplicateTrialError(Exception):
    """FR-003: the address already has an active trial."""


@dataclass(frozen=True)
class Trial:
    id: int
    user_id: int
    subscription_id: int
    email: str
    ends_at: datetime


def normalize_email(raw: str) -> str:
    email = raw.strip().lower()
    if len(email) > MAX_EMAIL_LENGTH or not _EMAIL.match(email):
        raise InvalidEmailError(f"not a valid email address: {raw!r}")
    return email


def start_trial(conn: sqlite3.Connection, email: str, now: datetime, bus: EventBus) -> Trial:
    """Create the trial and its `trialing` subscription, then emit `trial_started`."""
    email = normalize_email(email)
    existing = conn.execute(
        "SELECT id FROM trials WHERE email = ? AND status = 'trialing'", (email,)
    ).fetchone()
    if existing is not None:
        raise DuplicateTrialError(email)
    ends_at = now + timedelta(days=TRIAL_DAYS)
    try:
        with conn:
            conn.execute(
                "INSERT INTO users (email, created_at) VALUES (?, ?) ON CONFLICT(email) DO NOTHING",
                (email, now.isoformat()),
            )
            user_id = conn.execute("SELECT id FROM users WHERE email = ?", (email,)).fetchone()[0]
            trial_id = conn.execute(
                "INSERT INTO trials (user_id, email, started_at, ends_at) VALUES (?, ?, ?, ?)",
                (user_id, email, now.isoformat(), ends_at.isoformat()),
            ).lastrowid
            subscription_id = conn.execute(
                "INSERT INTO subscriptions (user_id, trial_id, status, period_end)"
                " VALUES (?, ?, 'trialing', ?)",
                (user_id, trial_id, ends_at.isoformat()),
            ).lastrowid
    except sqlite3.IntegrityError as exc:
        # A concurrent sign-up passed the check above first; the partial unique index caught it.
        raise DuplicateTrialError(email) from exc
    payload = {"userId": user_id, "trialEndsAt": ends_at.isoformat()}
    bus.emit("trial_started", payload)
    log.info("trial %s started for user %s, ends %s", trial_id, user_id, payload["trialEndsAt"])
    return Trial(trial_id, user_id, subscription_id, email, ends_at)
