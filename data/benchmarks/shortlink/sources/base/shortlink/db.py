"""SQLite access: connections with name-addressable rows, and the schema."""

from __future__ import annotations

import sqlite3
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL
);
"""


def connect(path: str | Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path))
    conn.row_factory = sqlite3.Row
    return conn


def migrate(conn: sqlite3.Connection, schema: str = SCHEMA) -> None:
    """Create the schema; safe to run on an already migrated database."""
    conn.executescript(schema)
    conn.commit()
