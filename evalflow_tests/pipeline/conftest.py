"""Fixtures of the scaling recipes' tests (docs/scaling.md): a throw-away PostgreSQL cluster
and the interpreter that carries the recipes' Dagster libraries.

The recipes' packages (`dagster-postgres`, `dagster-dask` and their pins) are not the project's
own: `EVALFLOW_PG_PYTHON` names an interpreter that has them (`.ci/run` builds one), else the
current one is tried; a test skips, saying why, without them or without a server.
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

PYTHON = os.environ.get("EVALFLOW_PG_PYTHON") or sys.executable
ROOT = Path(__file__).resolve().parents[2]
EVALFLOW = [PYTHON, "-c", "import sys; from evalflow.cli import main; main(sys.argv[1:])"]
CREATE_DATABASE = """
import sys
import psycopg2
connection = psycopg2.connect(host="127.0.0.1", port=int(sys.argv[1]), user="dagster",
                              dbname="postgres")
connection.autocommit = True
connection.cursor().execute("CREATE DATABASE dagster")
"""


# What both warehouses must agree on: every check's vote and every run's roll-up.
RESULT_QUERIES = {
    "majority_vote": "SELECT run_key, check_id, majority FROM majority_vote ORDER BY ALL",
    "final_score": "SELECT run_key, final, complete FROM final_score ORDER BY ALL",
    "ac_score": "SELECT run_key, ac_id, i_score, t_score FROM ac_score ORDER BY ALL",
}


def run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run a command of the recipe from the project root; its output when it fails."""
    done = subprocess.run(
        cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=1200, check=False
    )
    assert done.returncode == 0, (cmd[-6:], done.stdout[-3000:], done.stderr[-3000:])
    return done


def stored_results(env: dict[str, str]) -> dict[str, list]:
    """Every check's vote and every run's roll-up in the warehouse `env` names (`query`)."""
    return {
        name: json.loads(run([*EVALFLOW, "query", sql, "--json"], env).stdout)
        for name, sql in RESULT_QUERIES.items()
    }


def require_module(module: str) -> None:
    """Skip, saying how to get it, when the recipes' interpreter lacks `module`."""
    check = subprocess.run(
        [PYTHON, "-c", f"import {module}"], check=False, capture_output=True, timeout=120
    )
    if check.returncode != 0:
        pytest.skip(
            f"{PYTHON} has no {module}: install docs/scaling.md's pins there "
            "or set EVALFLOW_PG_PYTHON to an interpreter that has them"
        )


def postgres_dagster_yaml(port: int) -> str:
    """docs/scaling.md section 2's instance storage, on the test cluster."""
    return (
        "storage:\n  postgres:\n    postgres_db:\n      hostname: 127.0.0.1\n"
        f"      port: {port}\n      db_name: dagster\n      username: dagster\n"
        '      password: ""\ntelemetry:\n  enabled: false\n'
    )


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def postgres() -> Iterator[int]:
    """A throw-away cluster on 127.0.0.1; yields its port (database `dagster`, trust auth)."""
    binaries = _server_binaries()
    if binaries is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql")
    require_module("dagster_postgres")
    prefix = _as_server_user()
    base = Path(tempfile.mkdtemp(prefix="evalflow-pg-"))
    if prefix:
        shutil.chown(base, user="postgres")
    data, port = base / "data", free_port()
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
