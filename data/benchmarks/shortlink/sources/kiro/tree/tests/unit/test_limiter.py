from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shortlink.limiter import SlidingWindowLimiter

T0 = datetime(2026, 2, 1, tzinfo=UTC)


def test_limit_is_ten_per_minute() -> None:
    limiter = SlidingWindowLimiter()
    for i in range(10):
        assert limiter.allow("k", T0 + timedelta(seconds=i))
    assert limiter.allow("k", T0 + timedelta(seconds=30)) is False
    assert limiter.allow("k", T0 + timedelta(seconds=60))
