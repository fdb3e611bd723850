from __future__ import annotations

from shortlink.ratelimit import TokenBucketLimiter


def test_bucket_refuses_the_eleventh_request() -> None:
    limiter = TokenBucketLimiter()
    for _ in range(10):
        assert limiter.consume("k", 0.0)
    assert limiter.consume("k", 0.0) is False
    assert limiter.consume("k", 6.0) is True
