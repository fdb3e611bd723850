from __future__ import annotations

import sqlite3


def target_of(conn: sqlite3.Connection, code: str) -> str | None:
    row = conn.execute("SELECT target FROM links WHERE code = ?", (code,)).fetchone()
    return row[0] if row else None


def count_links(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COUNT(*) FROM links").fetchone()[0]


def clicks_of(conn: sqlite3.Connection, code: str) -> int:
    return conn.execute("SELECT clicks FROM links WHERE code = ?", (code,)).fetchone()[0]
