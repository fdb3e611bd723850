"""Domain event bus (Architecture §Events): synchronous, in-process, with a history."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class DomainEvent:
    name: str
    payload: dict[str, Any]


class EventBus:
    def __init__(self) -> None:
        self.history: list[DomainEvent] = []

    def emit(self, name: str, payload: dict[str, Any]) -> None:
        self.history.append(DomainEvent(name=name, payload=payload))
