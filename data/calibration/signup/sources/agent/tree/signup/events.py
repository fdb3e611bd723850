"""In-process event bus: every emitted event is kept and handed to the subscribers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Subscriber = Callable[[str, dict[str, Any]], None]


class EventBus:
    def __init__(self) -> None:
        self.subscribers: list[Subscriber] = []
        self.emitted: list[tuple[str, dict[str, Any]]] = []

    def subscribe(self, subscriber: Subscriber) -> None:
        self.subscribers.append(subscriber)

    def emit(self, name: str, payload: dict[str, Any]) -> None:
        self.emitted.append((name, payload))
        for subscriber in self.subscribers:
            subscriber(name, payload)
