"""Entry point of the scheduled reminder job (`python -m reminders.job DB [NOW]`)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from reminders.db import connect, migrate
from reminders.reminders import Outbox, send_due_reminders


def run_job(db_path: Path, now: datetime, outbox: Outbox | None = None) -> int:
    conn = connect(db_path)
    try:
        migrate(conn)
        return send_due_reminders(conn, now, outbox if outbox is not None else [])
    finally:
        conn.close()


def main(argv: list[str]) -> int:
    now = datetime.fromisoformat(argv[1]) if len(argv) > 1 else datetime.now(UTC)
    print(f"sent {run_job(Path(argv[0]), now)} reminder(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
