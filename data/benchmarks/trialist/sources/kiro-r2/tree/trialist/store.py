"""Persistence for trials and subscriptions (design: Data Models)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class TrialRecord:
    id: int
    user_id: int
    email: str
    ends_at: datetime


@dataclass(frozen=True)
class SubscriptionRecord:
    id: int
    status: str
    period_end: datetime
    access_ends_at: datetime | None


def _trial(row: sqlite3.Row) -> TrialRecord:
    ends_at = datetime.fromisoformat(row["ends_at"])
    return TrialRecord(row["id"], row["user_id"], row["email"], ends_at)


def _subscription(row: sqlite3.Row) -> SubscriptionRecord:
    access = row["access_ends_at"]
    return SubscriptionRecord(
        row["id"],
        row["status"],
        datetime.fromisoformat(row["period_end"]),
        datetime.fromisoformat(access) if access else None,
    )


class Store:
    """All SQL lives here; services only see records."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def has_active_trial(self, email: str) -> bool:
        sql = "SELECT id FROM trials WHERE email = ? AND status = 'trialing'"
        return self.conn.execute(sql, (email,)).fetchone() is not None

    def create_trial(self, email: str, starts_at: datetime, ends_at: datetime) -> TrialRecord:
        """Insert the user (if new), the trial and its trialing subscription in one transaction."""
        with self.conn:
            self.conn.execute(
                "INSERT OR IGNORE INTO users (email, created_at) VALUES (?, ?)",
                (email, starts_at.isoformat()),
            )
            user_id = self.conn.execute(
                "SELECT id FROM users WHERE email = ?", (email,)
            ).fetchone()["id"]
            trial_id = self.conn.execute(
                "INSERT INTO trials (user_id, email, starts_at, ends_at) VALUES (?, ?, ?, ?)",
                (user_id, email, starts_at.isoformat(), ends_at.isoformat()),
            ).lastrowid
            self.conn.execute(
                "INSERT INTO subscriptions (user_id, trial_id, period_end) VALUES (?, ?, ?)",
                (user_id, trial_id, ends_at.isoformat()),
            )
        return TrialRecord(trial_id, user_id, email, ends_at)

    def count_trials(self, email: str) -> int:
        sql = "SELECT COUNT(*) FROM trials WHERE email = ?"
        return self.conn.execute(sql, (email,)).fetchone()[0]

    def trials_ending_between(self, start: datetime, end: datetime) -> list[TrialRecord]:
        rows = self.conn.execute(
            "SELECT * FROM trials WHERE status = 'trialing' AND ends_at > ? AND ends_at <= ?"
            " AND reminded_at IS NULL",
            (start.isoformat(), end.isoformat()),
        ).fetchall()
        return [_trial(row) for row in rows]

    def mark_reminded(self, trial_id: int, at: datetime) -> None:
        with self.conn:
            self.conn.execute(
                "UPDATE trials SET reminded_at = ? WHERE id = ?", (at.isoformat(), trial_id)
            )

    def subscription(self, sub_id: int) -> SubscriptionRecord | None:
        row = self.conn.execute("SELECT * FROM subscriptions WHERE id = ?", (sub_id,)).fetchone()
        return _subscription(row) if row else None

    def subscription_for_trial(self, trial_id: int) -> SubscriptionRecord | None:
        sql = "SELECT * FROM subscriptions WHERE trial_id = ?"
        row = self.conn.execute(sql, (trial_id,)).fetchone()
        return _subscription(row) if row else None

    def status_of(self, sub_id: int) -> str | None:
        sub = self.subscription(sub_id)
        return sub.status if sub else None

    def set_status(self, sub_id: int, status: str) -> None:
        with self.conn:
            self.conn.execute("UPDATE subscriptions SET status = ? WHERE id = ?", (status, sub_id))

    def set_access_end(self, sub_id: int, access_ends_at: datetime) -> None:
        with self.conn:
            self.conn.execute(
                "UPDATE subscriptions SET access_ends_at = ? WHERE id = ?",
                (access_ends_at.isoformat(), sub_id),
            )
