from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime

import pytest

from shortlink.routes import make_app


class ApiClient:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.now = datetime(2026, 1, 15, 8, 0, tzinfo=UTC)
        self.app = make_app(conn, lambda: self.now)

    def create(self, body: dict, api_key: str = "team-key"):
        return self.app.handle(
            "POST", "/links", {"X-Api-Key": api_key}, json.dumps(body).encode()
        )

    def visit(self, code: str):
        return self.app.handle("GET", f"/{code}")


@pytest.fixture
def api(conn: sqlite3.Connection) -> ApiClient:
    return ApiClient(conn)
