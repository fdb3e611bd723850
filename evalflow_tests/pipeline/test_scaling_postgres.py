"""docs/scaling.md section 2, verified: a Dagster instance on a real local PostgreSQL.

Starts a throw-away cluster (initdb in a temporary directory, 127.0.0.1, a free port), writes
the documented `dagster.yaml`, scores one run of the mini benchmark through the evalflow CLI
with that `DAGSTER_HOME`, and reads the runs back from Postgres. It needs the recipe's
packages (`dagster-postgres` and its pins), which the project's own environment does not
carry: `EVALFLOW_PG_PYTHON` names an interpreter that has them (`.ci/run` builds one), else
the current one is tried; the test skips, saying why, without them or without a server.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON = os.environ.get("EVALFLOW_PG_PYTHON") or sys.executable
EVALFLOW = [PYTHON, "-c", "import sys; from evalflow.cli import main; main(sys.argv[1:])"]
CREATE_DATABASE = """
import sys
import psycopg2
connection = psycopg2.connect(host="127.0.0.1", port=int(sys.argv[1]), user="dagster",
                              dbname="postgres")
connection.autocommit = True
connection.cursor().execute("CREATE DATABASE dagster")
"""
RUNS = """
import json
import dagster as dg
instance = dg.DagsterInstance.get()
print(json.dumps({
    "storage": type(instance.run_storage).__name__,
    "runs": sorted(
        [r.job_name, r.status.value, r.tags.get("dagster/partition")]
        for r in instance.get_runs()
    ),
}))
"""

pytestmark = pytest.mark.slow  # a cluster start plus one run through Postgres: ~1 min


def _server_binaries() -> dict[str, str] | None:
    found = {name: shutil.which(name) for name in ("initdb", "pg_ctl")}
    if not all(found.values()):
        pg_config = shutil.which("pg_config")
        if pg_config:
            bindir = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, check=False, timeout=60
            ).stdout.strip()
            found = {name: shutil.which(name, path=bindir) for name in found}
    return found if all(found.values()) else None  # type: ignore[return-value]


def _as_server_user() -> list[str]:
    """PostgreSQL refuses to run as root: as root, run it as the `postgres` account."""
    if os.geteuid() != 0:
        return []
    runuser = shutil.which("runuser")
    try:
        import pwd

        pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("running as root and there is no `postgres` user to run the server as")
    if runuser is None:
        pytest.skip("running as root and `runuser` is missing to start the server as postgres")
    return [runuser, "-u", "postgres", "--"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def postgres() -> Iterator[int]:
    """A throw-away cluster on 127.0.0.1; yields its port (database `dagster`, trust auth)."""
    binaries = _server_binaries()
    if binaries is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql")
    check = subprocess.run(
        [PYTHON, "-c", "import dagster_postgres"], check=False, capture_output=True, timeout=120
    )
    if check.returncode != 0:
        pytest.skip(
            f"{PYTHON} has no dagster-postgres: install docs/scaling.md section 2's pins there "
            "or set EVALFLOW_PG_PYTHON to an interpreter that has them"
        )
    prefix = _as_server_user()
    base = Path(tempfile.mkdtemp(prefix="evalflow-pg-"))
    if prefix:
        shutil.chown(base, user="postgres")
    data, port = base / "data", _free_port()
    subprocess.run(
        [*prefix, binaries["initdb"], "-D", str(data), "-A", "trust", "-U", "dagster"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    # Durability is not under test: without fsync a loaded CI machine is not slowed down.
    options = f"-h 127.0.0.1 -p {port} -k {base} -c fsync=off -c synchronous_commit=off"
    pg_ctl = [*prefix, binaries["pg_ctl"], "-D", str(data)]
    subprocess.run(
        [*pg_ctl, "-o", options, "-l", str(base / "server.log"), "-w", "start"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    try:
        subprocess.run(
            [PYTHON, "-c", CREATE_DATABASE, str(port)], check=True, capture_output=True, timeout=120
        )
        yield port
    finally:
        subprocess.run(
            [*pg_ctl, "-m", "immediate", "-w", "stop"],
            check=False,
            capture_output=True,
            timeout=120,
        )
        shutil.rmtree(base, ignore_errors=True)


def test_a_run_is_recorded_in_a_postgres_instance(postgres: int, mini: Path, tmp_path) -> None:
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(
        "storage:\n  postgres:\n    postgres_db:\n      hostname: 127.0.0.1\n"
        f"      port: {postgres}\n      db_name: dagster\n      username: dagster\n"
        '      password: ""\ntelemetry:\n  enabled: false\n'
    )
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "EVALFLOW_WAREHOUSE": str(tmp_path / "warehouse"),
    }
    done = subprocess.run(
        [*EVALFLOW, "score", str(mini / "runs" / "good.yaml"), "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["final"] == 1.0
    recorded = subprocess.run(
        [PYTHON, "-c", RUNS], capture_output=True, text=True, env=env, check=True, timeout=120
    )
    assert json.loads(recorded.stdout) == {
        "storage": "PostgresRunStorage",
        "runs": [["evaluate_run", "SUCCESS", "mini.good.r1"], ["rank_runs", "SUCCESS", None]],
    }
