from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from signup.db import connect, migrate
from signup.events import EventBus
from signup.http import Response
from signup.routes import create_app


class ApiClient:
    """Drives the app in-process against a real SQLite file."""

    def __init__(self, db_path: Path) -> None:
        self.conn: sqlite3.Connection = connect(db_path)
        migrate(self.conn)
        self.bus = EventBus()
        self.app = create_app(self.conn, self.bus)

    def post(self, path: str, payload: dict[str, Any]) -> Response:
        return self.app.handle("POST", path, {}, json.dumps(payload).encode())


@pytest.fixture
def api(tmp_path: Path) -> Iterator[ApiClient]:
    client = ApiClient(tmp_path / "signup-e2e.db")
    yield client
    client.conn.close()
