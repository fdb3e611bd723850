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
    params: Mapping[str, str] = field(default_factory=dict)

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
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Request], Response]


def _match(pattern: str, path: str) -> dict[str, str] | None:
    """Path parameters when `path` fits `pattern` (`/links/{code}`), else None."""
    want, got = pattern.strip("/").split("/"), path.strip("/").split("/")
    if len(want) != len(got):
        return None
    params: dict[str, str] = {}
    for part, value in zip(want, got, strict=True):
        if part.startswith("{") and part.endswith("}"):
            if not value:
                return None
            params[part[1:-1]] = value
        elif part != value:
            return None
    return params


class App:
    """Routes requests to handlers registered per (method, path pattern)."""

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
        lowered = {name.lower(): value for name, value in (headers or {}).items()}
        allowed = False
        # Literal routes win over parameter routes: `/links/x/stats` is never `/{code}`.
        for (known_method, pattern), handler in sorted(
            self.routes.items(), key=lambda item: item[0][1].count("{")
        ):
            params = _match(pattern, path)
            if params is None:
                continue
            if known_method != method:
                allowed = True
                continue
            return handler(Request(method, path, lowered, body_bytes, params))
        if allowed:
            return Response(405, {"error": "method not allowed"})
        return Response(404, {"error": "not found"})
