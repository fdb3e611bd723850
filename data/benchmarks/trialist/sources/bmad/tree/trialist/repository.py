"""Data access for subscriptions (Architecture §Repository layer)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from trialist.models import Subscription, SubscriptionStatus


class SubscriptionNotFoundError(LookupError):
    """No subscription with the given id."""


def get_subscription(conn: sqlite3.Connection, sub_id: int) -> Subscription:
    row = conn.execute("SELECT * FROM subscriptions WHERE id = ?", (sub_id,)).fetchone()
    if row is None:
        raise SubscriptionNotFoundError(sub_id)
    return Subscription.from_row(row)


def set_status(conn: sqlite3.Connection, sub_id: int, status: SubscriptionStatus) -> None:
    with conn:
        cursor = conn.execute("UPDATE subscriptions SET status = ? WHERE id = ?", (status, sub_id))
    if cursor.rowcount == 0:
        raise SubscriptionNotFoundError(sub_id)


def record_cancellation(
    conn: sqlite3.Connection, sub_id: int, canceled_at: datetime, access_ends_at: datetime
) -> None:
    with conn:
        conn.execute(
            "UPDATE subscriptions SET canceled_at = ?, access_ends_at = ? WHERE id = ?",
            (canceled_at.isoformat(), access_ends_at.isoformat(), sub_id),
        )


def set_plan(conn: sqlite3.Connection, sub_id: int, plan: str) -> None:
    with conn:
        conn.execute("UPDATE subscriptions SET plan = ? WHERE id = ?", (plan, sub_id))
