"""docs/scaling.md section 4, verified: `evaluate_run` on Dagster's Celery executor.

The code location is the recipe's own file (`distributed_definitions` with `celery_executor`),
run by `dagster job execute` against the shared PostgreSQL instance of section 2, with a Redis
broker on loopback (Debian's `redis-server`, started here) and a `dagster-celery` worker of two
processes: every step of a run executes in a worker process, not in the launching one. Two runs
of the mini benchmark materialise that way, and their tables equal an in-process
`evalflow materialize` of the same runs. Needs the recipes' packages (`dagster-celery`, `redis`,
`dagster-postgres` and their pins: `EVALFLOW_PG_PYTHON`, see conftest.py), a PostgreSQL server
and `redis-server`; skips, saying why, without them.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalflow_tests.pipeline.conftest import (
    EVALFLOW,
    PYTHON,
    free_port,
    postgres_dagster_yaml,
    require_module,
    run,
    stored_results,
)

ROOT = Path(__file__).resolve().parents[2]
DAGSTER = [PYTHON, "-c", "import sys; from dagster._cli import main; sys.exit(main())"]
CELERY = [PYTHON, "-c", "import sys; from dagster_celery.cli import main; sys.exit(main())"]
# The recipe of docs/scaling.md section 4 (its Celery executor), with the test's broker.
DEPLOY = """
from dagster_celery import celery_executor

from evalflow.pipeline.definitions import distributed_definitions

EXECUTOR = celery_executor.configured({{"broker": "{broker}", "backend": "{backend}"}})
defs = distributed_definitions(EXECUTOR)
"""
WORKER_CONFIG = "execution:\n  config:\n    broker: {broker}\n    backend: {backend}\n"
# Per run: its status, and the processes its steps started in (from the instance's event log).
STEP_PIDS = """
import json
import dagster as dg
instance = dg.DagsterInstance.get()
out = {}
for run in instance.get_runs():
    pids = {r.dagster_event.pid for r in instance.all_logs(run.run_id)
            if r.dagster_event and r.dagster_event.event_type_value == "STEP_START"}
    launched = {r.dagster_event.pid for r in instance.all_logs(run.run_id)
                if r.dagster_event and r.dagster_event.event_type_value == "RUN_START"}
    out[run.tags.get("dagster/partition")] = [run.status.value, sorted(pids), sorted(launched)]
print(json.dumps(out))
"""

pytestmark = pytest.mark.slow  # a Postgres cluster, Redis and a Celery worker: ~2-4 min


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("no redis-server (Debian package redis-server) for the Celery broker")
    port = free_port()
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"redis://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=60)


@pytest.fixture
def deployment(postgres: int, redis_url: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """The Postgres instance, a warehouse and a two-process dagster-celery worker that shares
    them (it executes the steps, so it reads the same instance and warehouse); yields the
    environment of the deployment and writes its code location to `<tmp>/deploy`."""
    require_module("dagster_celery")
    require_module("redis")
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(postgres_dagster_yaml(postgres))
    env = {**os.environ, "DAGSTER_HOME": str(home), "EVALFLOW_WAREHOUSE": str(tmp_path / "wh")}
    broker = {"broker": f"{redis_url}/0", "backend": f"{redis_url}/1"}
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    (deploy / "evalflow_deploy.py").write_text(DEPLOY.format(**broker))
    (deploy / "celery.yaml").write_text(WORKER_CONFIG.format(**broker))
    log = tmp_path / "worker.log"
    config = str(deploy / "celery.yaml")
    start = [*CELERY, "worker", "start", "-A", "dagster_celery.app", "-y", config, "-l", "info"]
    # dagster-celery starts the `celery` command of the recipes' interpreter from PATH.
    path = f"{Path(PYTHON).parent}{os.pathsep}{env.get('PATH', '')}"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*start, "--", "--concurrency", "2"],
            cwd=ROOT,
            env={**env, "PATH": path},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + 300
    while " ready." not in log.read_text(errors="replace"):
        assert process.poll() is None, f"the Celery worker stopped: {log.read_text()[-3000:]}"
        assert time.monotonic() < deadline, f"no ready worker: {log.read_text()[-3000:]}"
        time.sleep(1)
    try:
        yield env
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def test_two_runs_on_celery_workers_equal_the_in_process_result(
    deployment: dict[str, str], mini: Path, tmp_path: Path
) -> None:
    manifests = [str(mini / "runs" / f"{name}.yaml") for name in ("good", "partial")]
    deploy = tmp_path / "deploy" / "evalflow_deploy.py"
    env = deployment
    registered = run([*EVALFLOW, "register", *manifests, "--json"], env).stdout
    keys = [entry["run_key"] for entry in json.loads(registered)]
    for key in keys:
        job = ["-f", str(deploy), "-a", "defs", "-j", "evaluate_run"]
        tags = ["--tags", json.dumps({"dagster/partition": key})]
        run([*DAGSTER, "job", "execute", *job, *tags], env)
    runs = json.loads(run([PYTHON, "-c", STEP_PIDS], env).stdout)
    assert sorted(runs) == sorted(keys)
    for key, (status, step_pids, launcher_pids) in runs.items():
        assert status == "SUCCESS", key
        # Every step ran in a worker process, none in the process that launched the run.
        assert step_pids and not set(step_pids) & set(launcher_pids), (key, runs[key])

    local = {
        **os.environ,
        "DAGSTER_HOME": str(tmp_path / "dagster_home_local"),
        "EVALFLOW_WAREHOUSE": str(tmp_path / "wh_local"),
    }
    Path(local["DAGSTER_HOME"]).mkdir()
    run([*EVALFLOW, "register", *manifests], local)
    run([*EVALFLOW, "materialize"], local)
    expected = stored_results(local)
    assert expected["final_score"], "the in-process score stored no final_score"
    # No CLI materialisation wrote the distributed warehouse's catalog: `catalog` does.
    run([*EVALFLOW, "catalog"], env)
    assert stored_results(env) == expected
