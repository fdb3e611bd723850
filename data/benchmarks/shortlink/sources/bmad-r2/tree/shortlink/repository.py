"""LinkRepository (architecture §4): SQL for the links table."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from shortlink.db import migrate

_SCHEMA = """
CREATE TABLE IF NOT EXISTS links (
    code TEXT PRIMARY KEY,
    target TEXT NOT NULL,
    api_key TEXT NOT NULL,
    expires_at TEXT,
    clicks INTEGER NOT NULL DEFAULT 0
);
"""


class LinkRepository:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        migrate(conn, _SCHEMA)

    def insert(self, code: str, target: str, api_key: str, expires_at: datetime | None) -> bool:
        """False when the code is taken (the caller draws another)."""
        try:
            with self.conn:
                self.conn.execute(
                    "INSERT INTO links (code, target, api_key, expires_at) VALUES (?, ?, ?, ?)",
                    (code, target, api_key, expires_at.isoformat() if expires_at else None),
                )
        except sqlite3.IntegrityError:
            return False
        return True

    def get(self, code: str) -> sqlite3.Row | None:
        return self.conn.execute("SELECT * FROM links WHERE code = ?", (code,)).fetchone()
