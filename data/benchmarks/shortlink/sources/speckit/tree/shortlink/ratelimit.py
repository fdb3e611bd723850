"""Per-key rate limit (FR-006): a fixed one-minute window per API key."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

LINKS_PER_MINUTE = 10
WINDOW_SECONDS = 60


@dataclass
class RateLimiter:
    """Counts creations per key in windows of WINDOW_SECONDS that start at the first hit."""

    limit: int = LINKS_PER_MINUTE
    window: float = WINDOW_SECONDS
    _windows: dict[str, tuple[float, int]] = field(default_factory=dict)

    def hit(self, key: str, now: float) -> bool:
        """Count one request of `key` at `now` (seconds); False when it is over the limit."""
        start, used = self._windows.get(key, (now, 0))
        if now - start >= self.window:
            start, used = now, 0
        if used >= self.limit:
            self._windows[key] = (start, used)
            return False
        self._windows[key] = (start, used + 1)
        return True

    def retry_after(self, key: str, now: float) -> int:
        """Whole seconds until `key`'s window resets (at least 1)."""
        start, _ = self._windows.get(key, (now, 0))
        return max(1, math.ceil(start + self.window - now))
