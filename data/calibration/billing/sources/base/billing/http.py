"""A tiny in-process HTTP-style router: enough to exercise handlers without a server."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """Header lookup; names are case-insensitive (stored lower-cased by `App.handle`)."""
        return self.headers.get(name.lower())

    def json(self) -> Any:
        """The body decoded as JSON. Raises ValueError when it is not valid JSON."""
        return json.loads(self.body or b"null")


@dataclass(frozen=True)
class Response:
    status: int
    body: dict[str, Any] = field(default_factory=dict)


Handler = Callable[[Request], Response]


class App:
    """Routes requests to handlers registered per (method, path)."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], Handler] = {}

    def route(self, method: str, path: str) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            self.routes[(method.upper(), path)] = handler
            return handler

        return register

    def handle(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str] | None = None,
        body_bytes: bytes = b"",
    ) -> Response:
        method = method.upper()
        handler = self.routes.get((method, path))
        if handler is None:
            if any(known == path for _, known in self.routes):
                return Response(405, {"error": "method not allowed"})
            return Response(404, {"error": "not found"})
        lowered = {name.lower(): value for name, value in (headers or {}).items()}
        return handler(Request(method, path, lowered, body_bytes))
