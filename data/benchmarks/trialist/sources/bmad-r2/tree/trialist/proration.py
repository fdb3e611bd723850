"""Plan upgrades with proration (Story 3.2, FR10)."""

from __future__ import annotations

from datetime import datetime, timedelta

PLAN_PRICES_CENTS: dict[str, int] = {"starter": 900, "pro": 2900, "business": 7900}


class InvalidUpgradeError(ValueError):
    """Unknown plan, or a move that is not to a more expensive plan."""


def prorated_upgrade_charge(
    current_plan: str,
    new_plan: str,
    period_start: datetime,
    period_end: datetime,
    now: datetime,
) -> int:
    """Cents to charge now: the price difference for the unused share of the period."""
    if current_plan not in PLAN_PRICES_CENTS or new_plan not in PLAN_PRICES_CENTS:
        raise InvalidUpgradeError(f"unknown plan: {current_plan!r} -> {new_plan!r}")
    difference = PLAN_PRICES_CENTS[new_plan] - PLAN_PRICES_CENTS[current_plan]
    if difference <= 0:
        raise InvalidUpgradeError("only upgrades to a more expensive plan are supported")
    remaining = max(period_end - now, timedelta(0)) / (period_end - period_start)
    return round(difference * min(remaining, 1.0))
