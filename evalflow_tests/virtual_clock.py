"""A clock for the tests of code that waits: time passes only when the code sleeps on it."""

from __future__ import annotations

import threading
import time


class VirtualClock:
    """Monotonic time that passes only when a thread sleeps on it: an API limiter's back-off
    (1 s, doubling with each 429/529 or lost answer in a row) then costs no wall time while
    the limiter and the transport decide exactly as they would on `time.monotonic`. A sleeper
    wakes at the time it last read plus its pause, so threads waiting out one pause together
    move the clock once; the clock is never set back."""

    def __init__(self) -> None:
        self._now = 0.0
        self._lock = threading.Lock()
        self._read = threading.local()

    def __call__(self) -> float:
        with self._lock:
            self._read.at = self._now
            return self._now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self._now = max(self._now, getattr(self._read, "at", self._now) + max(seconds, 0.0))
        time.sleep(0)  # lets the other threads run, as a real pause would
