"""Sliding-window rate limiter: at most RATE_LIMIT requests per key in any 60 seconds."""

from __future__ import annotations

from collections import defaultdict, deque
from datetime import datetime, timedelta

RATE_LIMIT = 10
WINDOW = timedelta(minutes=1)


class SlidingWindowLimiter:
    def __init__(self, limit: int = RATE_LIMIT, window: timedelta = WINDOW) -> None:
        self.limit = limit
        self.window = window
        self._hits: dict[str, deque[datetime]] = defaultdict(deque)

    def allow(self, key: str, now: datetime) -> bool:
        hits = self._hits[key]
        while hits and now - hits[0] >= self.window:
            hits.popleft()
        if len(hits) >= self.limit:
            return False
        hits.append(now)
        return True

    def seconds_until_free(self, key: str, now: datetime) -> int:
        hits = self._hits[key]
        if not hits:
            return 0
        return max(1, int((hits[0] + self.window - now).total_seconds()))
