from __future__ import annotations

from datetime import UTC, datetime

import pytest

from trialist.events import EventBus


@pytest.fixture
def now() -> datetime:
    return datetime(2026, 3, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def bus() -> EventBus:
    return EventBus()
