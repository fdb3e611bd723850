"""Read-backs and fakes shared by the unit and e2e tests."""

from __future__ import annotations

import sqlite3


def count_trials(conn: sqlite3.Connection, email: str) -> int:
    return conn.execute("SELECT COUNT(*) FROM trials WHERE email = ?", (email,)).fetchone()[0]


def status_of(conn: sqlite3.Connection, sub_id: int) -> str:
    return conn.execute("SELECT status FROM subscriptions WHERE id = ?", (sub_id,)).fetchone()[0]


def subscription_for(conn: sqlite3.Connection, email: str) -> int:
    return conn.execute(
        "SELECT s.id FROM subscriptions s JOIN users u ON u.id = s.user_id WHERE u.email = ?",
        (email,),
    ).fetchone()[0]


class RecordingNotifier:
    def __init__(self, failing: frozenset[str] = frozenset()) -> None:
        self.sent: list[tuple[str, str]] = []
        self.failing = failing

    def send(self, channel: str, email: str) -> None:
        if email in self.failing:
            raise ConnectionError(f"delivery to {email} failed")
        self.sent.append((channel, email))
