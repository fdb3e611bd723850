"""Accounts: creation, lookup and the `account_created` event."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from signup.events import EventBus

PLANS = ("free", "team")


class DuplicateEmailError(Exception):
    """The email already belongs to an account."""


def normalise_email(email: str) -> str:
    """Canonical form of an address: surrounding blanks removed, lower case."""
    return email.strip().lower()


def find_account(conn: sqlite3.Connection, email: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM accounts WHERE email = ?", (email,)).fetchone()


def create_account(conn: sqlite3.Connection, bus: EventBus, email: str, plan: str = "free") -> int:
    """Insert the account and announce it; DuplicateEmailError when the email is taken."""
    if plan not in PLANS:
        raise ValueError(f"unknown plan {plan!r}")
    if find_account(conn, email) is not None:
        raise DuplicateEmailError(email)
    cursor = conn.execute(
        "INSERT INTO accounts (email, plan, created_at) VALUES (?, ?, ?)",
        (email, plan, datetime.now(UTC).isoformat()),
    )
    conn.commit()
    account_id = int(cursor.lastrowid or 0)
    payload = {"accountId": account_id, "email": email}
    bus.emit("account_created", payload)
    return account_id
