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
import subprocess
from pathlib import Path

import pytest

from evalflow_tests.pipeline.conftest import PYTHON, postgres_dagster_yaml

ROOT = Path(__file__).resolve().parents[2]
EVALFLOW = [PYTHON, "-c", "import sys; from evalflow.cli import main; main(sys.argv[1:])"]
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


def test_a_run_is_recorded_in_a_postgres_instance(postgres: int, mini: Path, tmp_path) -> None:
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(postgres_dagster_yaml(postgres))
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
