from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta

from shortlink.app import build_app
from shortlink.http import Response


class FakeClock:
    def __init__(self) -> None:
        self.current = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.current

    def tick(self, **delta: float) -> None:
        self.current += timedelta(**delta)


class Api:
    def __init__(self, conn: sqlite3.Connection, clock: FakeClock) -> None:
        self.app = build_app(conn, clock)

    def post(self, body: dict, key: str = "client-a") -> Response:
        return self.app.handle("POST", "/links", {"X-Api-Key": key}, json.dumps(body).encode())

    def get(self, path: str) -> Response:
        return self.app.handle("GET", path)


def target_of(conn: sqlite3.Connection, code: str) -> str | None:
    row = conn.execute("SELECT url FROM links WHERE code = ?", (code,)).fetchone()
    return row["url"] if row else None


def count_links(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COUNT(*) FROM links").fetchone()[0]
