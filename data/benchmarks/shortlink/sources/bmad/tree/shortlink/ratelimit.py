"""Token bucket per API key (story 1.3): MAX_LINKS_PER_MINUTE tokens refilled per window."""

from __future__ import annotations

from dataclasses import dataclass

from shortlink.config import MAX_LINKS_PER_MINUTE, RATE_WINDOW_SECONDS


@dataclass
class _Bucket:
    tokens: float
    updated: float


class TokenBucketLimiter:
    def __init__(
        self, capacity: int = MAX_LINKS_PER_MINUTE, window: float = RATE_WINDOW_SECONDS
    ) -> None:
        self.capacity = capacity
        self.rate = capacity / window
        self._buckets: dict[str, _Bucket] = {}

    def consume(self, key: str, now: float) -> bool:
        bucket = self._buckets.setdefault(key, _Bucket(self.capacity, now))
        bucket.tokens = min(self.capacity, bucket.tokens + (now - bucket.updated) * self.rate)
        bucket.updated = now
        if bucket.tokens < 1:
            return False
        bucket.tokens -= 1
        return True

    def wait_seconds(self, key: str) -> int:
        bucket = self._buckets[key]
        return max(1, round((1 - bucket.tokens) / self.rate))
