from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from shortlink.api import create_app
from shortlink.http import App, Response


class Clock:
    """A settable clock, so expiry and rate windows are tested without sleeping."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


class Client:
    def __init__(self, app: App) -> None:
        self.app = app

    def shorten(self, body: object, key: str = "key-1", ip: str = "203.0.113.7") -> Response:
        headers = {"X-Api-Key": key, "X-Forwarded-For": ip}
        return self.app.handle("POST", "/links", headers, json.dumps(body).encode())

    def get(self, path: str) -> Response:
        return self.app.handle("GET", path)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def client(conn: sqlite3.Connection, clock: Clock) -> Client:
    return Client(create_app(conn, clock))


def target_of(conn: sqlite3.Connection, code: str) -> str | None:
    row = conn.execute("SELECT url FROM links WHERE code = ?", (code,)).fetchone()
    return row["url"] if row else None


def count_links(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COUNT(*) FROM links").fetchone()[0]


def clicks_of(conn: sqlite3.Connection, code: str) -> int:
    return conn.execute("SELECT clicks FROM links WHERE code = ?", (code,)).fetchone()[0]
