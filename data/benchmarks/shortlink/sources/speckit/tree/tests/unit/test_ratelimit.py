from __future__ import annotations

from shortlink.ratelimit import RateLimiter


def test_eleventh_hit_in_the_window_is_refused() -> None:
    limiter = RateLimiter()
    assert all(limiter.hit("k", 100.0 + i) for i in range(10))
    assert limiter.hit("k", 110.0) is False
    assert limiter.retry_after("k", 110.0) == 50


def test_window_resets_after_a_minute() -> None:
    limiter = RateLimiter()
    for i in range(11):
        limiter.hit("k", float(i))
    assert limiter.hit("k", 60.0) is True
