"""Domain events (FR-004): an in-process bus that records what was emitted, in order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Event:
    name: str
    payload: dict[str, Any]


class EventBus:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, name: str, payload: dict[str, Any]) -> None:
        self.events.append(Event(name, dict(payload)))
