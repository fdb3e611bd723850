"""Domain records (Architecture §Data Models) built from database rows."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

SubscriptionStatus = Literal["trialing", "active", "past_due", "canceled"]


@dataclass(frozen=True, slots=True)
class Trial:
    id: int
    user_id: int
    subscription_id: int
    email: str
    ends_at: datetime


@dataclass(frozen=True, slots=True)
class Subscription:
    id: int
    plan: str
    status: SubscriptionStatus
    period_start: datetime
    period_end: datetime
    access_ends_at: datetime | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Subscription:
        access = row["access_ends_at"]
        return cls(
            id=row["id"],
            plan=row["plan"],
            status=row["status"],
            period_start=datetime.fromisoformat(row["period_start"]),
            period_end=datetime.fromisoformat(row["period_end"]),
            access_ends_at=datetime.fromisoformat(access) if access else None,
        )
