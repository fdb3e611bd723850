"""Subscription rows: creation, status reads and status changes."""

from __future__ import annotations

import sqlite3


def create_subscription(conn: sqlite3.Connection, email: str) -> int:
    cursor = conn.execute("INSERT INTO subscriptions (email) VALUES (?)", (email,))
    conn.commit()
    return int(cursor.lastrowid or 0)


def status_of(conn: sqlite3.Connection, sub_id: int) -> str:
    row = conn.execute("SELECT status FROM subscriptions WHERE id = ?", (sub_id,)).fetchone()
    if row is None:
        raise KeyError(sub_id)
    return str(row["status"])


def set_status(conn: sqlite3.Connection, sub_id: int, status: str) -> None:
    conn.execute("UPDATE subscriptions SET status = ? WHERE id = ?", (status, sub_id))
    conn.commit()
