from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from trialist.db import connect, migrate
from trialist.events import EventLog
from trialist.store import Store

NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    connection = connect(tmp_path / "trialist.db")
    migrate(connection)
    yield connection
    connection.close()


@pytest.fixture
def store(conn: sqlite3.Connection) -> Store:
    return Store(conn)


@pytest.fixture
def events() -> EventLog:
    return EventLog()
