"""Subscription state (FR-006..FR-009, FR-016): reads, the status machine, cancellation."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime

# FR-016: `canceled` is terminal, so a late or replayed payment webhook cannot revive it.
_TRANSITIONS: dict[str, frozenset[str]] = {
    "trialing": frozenset({"active", "past_due", "canceled"}),
    "active": frozenset({"active", "past_due", "canceled"}),
    "past_due": frozenset({"active", "past_due", "canceled"}),
    "canceled": frozenset(),
}


class UnknownSubscriptionError(LookupError):
    """No subscription has this id."""


class InvalidTransitionError(Exception):
    """The requested status change is not allowed from the current status."""


@dataclass(frozen=True)
class Subscription:
    id: int
    user_id: int
    status: str
    period_end: datetime
    access_ends_at: datetime | None


def get_subscription(conn: sqlite3.Connection, sub_id: int) -> Subscription:
    row = conn.execute("SELECT * FROM subscriptions WHERE id = ?", (sub_id,)).fetchone()
    if row is None:
        raise UnknownSubscriptionError(sub_id)
    access = row["access_ends_at"]
    return Subscription(
        id=row["id"],
        user_id=row["user_id"],
        status=row["status"],
        period_end=datetime.fromisoformat(row["period_end"]),
        access_ends_at=datetime.fromisoformat(access) if access else None,
    )


def set_status(conn: sqlite3.Connection, sub_id: int, status: str) -> None:
    """Change the status inside the caller's transaction, enforcing FR-016."""
    current = get_subscription(conn, sub_id).status
    if status not in _TRANSITIONS[current]:
        raise InvalidTransitionError(f"subscription {sub_id}: {current} -> {status}")
    conn.execute("UPDATE subscriptions SET status = ? WHERE id = ?", (status, sub_id))


def set_period_end(conn: sqlite3.Connection, sub_id: int, period_end: datetime) -> None:
    conn.execute(
        "UPDATE subscriptions SET period_end = ? WHERE id = ?", (period_end.isoformat(), sub_id)
    )


def cancel(conn: sqlite3.Connection, sub_id: int) -> Subscription:
    """FR-009: mark canceled; access runs to the end of the period already paid for."""
    with conn:
        sub = get_subscription(conn, sub_id)
        set_status(conn, sub_id, "canceled")
        access_ends_at = sub.period_end
        conn.execute(
            "UPDATE subscriptions SET access_ends_at = ? WHERE id = ?",
            (access_ends_at.isoformat(), sub_id),
        )
    return get_subscription(conn, sub_id)
