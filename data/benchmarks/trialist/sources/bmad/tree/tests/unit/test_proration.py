from __future__ import annotations

from datetime import UTC, datetime

import pytest

from trialist.proration import InvalidUpgradeError, prorated_upgrade_charge

PERIOD_START = datetime(2026, 3, 1, tzinfo=UTC)
PERIOD_END = datetime(2026, 3, 31, tzinfo=UTC)


def test_upgrade_at_period_start_charges_full_difference() -> None:
    assert prorated_upgrade_charge("starter", "pro", PERIOD_START, PERIOD_END, PERIOD_START) == 2000


def test_upgrade_at_period_end_charges_nothing() -> None:
    assert prorated_upgrade_charge("starter", "pro", PERIOD_START, PERIOD_END, PERIOD_END) == 0


def test_upgrade_charge_is_rounded_to_the_nearest_cent() -> None:
    # 10 of 30 days left: 2000 * 10 / 30 = 666.67 cents
    now = datetime(2026, 3, 21, tzinfo=UTC)
    assert prorated_upgrade_charge("starter", "pro", PERIOD_START, PERIOD_END, now) == 667


def test_downgrade_is_not_supported() -> None:
    with pytest.raises(InvalidUpgradeError):
        prorated_upgrade_charge("pro", "starter", PERIOD_START, PERIOD_END, PERIOD_START)
