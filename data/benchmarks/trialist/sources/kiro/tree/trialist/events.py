"""In-process event log: services emit, tests and future consumers read `emitted`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Event:
    name: str
    payload: dict[str, Any]


@dataclass
class EventLog:
    emitted: list[Event] = field(default_factory=list)

    def emit(self, name: str, payload: dict[str, Any]) -> None:
        self.emitted.append(Event(name, payload))
