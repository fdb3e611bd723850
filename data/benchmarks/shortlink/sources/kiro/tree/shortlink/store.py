"""Link persistence: the links table and every query on it."""

from __future__ import annotations

import secrets
import sqlite3
import string
from dataclasses import dataclass
from datetime import datetime

from shortlink.db import migrate

CODE_LENGTH = 7
_ALPHABET = string.ascii_letters + string.digits

LINKS_SCHEMA = """
CREATE TABLE IF NOT EXISTS links (
    code TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    owner_key TEXT NOT NULL,
    expires_at TEXT,
    clicks INTEGER NOT NULL DEFAULT 0
);
"""


@dataclass(frozen=True)
class Link:
    code: str
    url: str
    expires_at: datetime | None
    clicks: int


class LinkStore:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        migrate(conn, LINKS_SCHEMA)

    def generate_code(self) -> str:
        return "".join(secrets.choice(_ALPHABET) for _ in range(CODE_LENGTH))

    def add(self, url: str, owner_key: str, expires_at: datetime | None) -> Link:
        code = self.generate_code()
        with self.conn:
            self.conn.execute(
                "INSERT INTO links (code, url, owner_key, expires_at) VALUES (?, ?, ?, ?)",
                (code, url, owner_key, expires_at.isoformat() if expires_at else None),
            )
        return Link(code, url, expires_at, 0)

    def find(self, code: str) -> Link | None:
        row = self.conn.execute("SELECT * FROM links WHERE code = ?", (code,)).fetchone()
        if row is None:
            return None
        expires = datetime.fromisoformat(row["expires_at"]) if row["expires_at"] else None
        return Link(row["code"], row["url"], expires, row["clicks"])

    def record_click(self, code: str) -> None:
        with self.conn:
            self.conn.execute("UPDATE links SET clicks = clicks + 1 WHERE code = ?", (code,))
