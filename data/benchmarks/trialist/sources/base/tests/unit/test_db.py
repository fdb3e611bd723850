from __future__ import annotations

import sqlite3

from trialist.db import migrate


def test_migrate_creates_users_and_is_idempotent(conn: sqlite3.Connection) -> None:
    migrate(conn)
    tables = {row["name"] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert "users" in tables
