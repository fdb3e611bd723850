"""Trial rows."""

from __future__ import annotations

import sqlite3
from datetime import datetime


def add_trial(conn: sqlite3.Connection, email: str, ends_at: datetime) -> int:
    cursor = conn.execute(
        "INSERT INTO trials (email, ends_at) VALUES (?, ?)", (email, ends_at.isoformat())
    )
    conn.commit()
    return int(cursor.lastrowid or 0)
