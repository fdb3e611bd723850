from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from reminders.db import connect, migrate
from reminders.job import run_job
from reminders.trials import add_trial

NOW = datetime(2026, 3, 20, 9, 0, tzinfo=UTC)


def test_the_job_reminds_each_trial_once(tmp_path: Path) -> None:
    db_path = tmp_path / "reminders.db"
    conn = connect(db_path)
    migrate(conn)
    add_trial(conn, "ada@example.com", NOW + timedelta(days=3))
    conn.close()

    assert run_job(db_path, NOW) == 1
    assert run_job(db_path, NOW) == 0
