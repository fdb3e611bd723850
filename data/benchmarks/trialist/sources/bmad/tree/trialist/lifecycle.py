"""Subscription lifecycle: cancellation (Story 3.1, FR9) and upgrades (Story 3.2, FR10)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from trialist.models import Subscription
from trialist.proration import prorated_upgrade_charge
from trialist.repository import (
    get_subscription,
    record_cancellation,
    set_plan,
    set_status,
)


class LifecycleError(Exception):
    """The subscription is not in a status that allows the operation."""


def cancel_subscription(conn: sqlite3.Connection, sub_id: int, now: datetime) -> Subscription:
    sub = get_subscription(conn, sub_id)
    if sub.status == "canceled":
        raise LifecycleError("subscription is already canceled")
    set_status(conn, sub_id, "canceled")
    access_ends_at = sub.period_end
    record_cancellation(conn, sub_id, canceled_at=now, access_ends_at=access_ends_at)
    return get_subscription(conn, sub_id)


def upgrade_plan(conn: sqlite3.Connection, sub_id: int, new_plan: str, now: datetime) -> int:
    """Switch an active subscription to `new_plan`; return the prorated charge in cents."""
    sub = get_subscription(conn, sub_id)
    if sub.status != "active":
        raise LifecycleError("only active subscriptions can be upgraded")
    charge = prorated_upgrade_charge(sub.plan, new_plan, sub.period_start, sub.period_end, now)
    set_plan(conn, sub_id, new_plan)
    return charge
