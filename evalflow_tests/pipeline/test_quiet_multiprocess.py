"""The multiprocess executor is as quiet as the in-process one: no Dagster DEBUG lines.

A multiprocess step's child process logs STEP_WORKER_STARTED (DEBUG) through a console
logger whose level comes from the instance's `python_logs.python_log_level`, not from the
run config's quiet console, so the `dagster.yaml` evalflow writes is what keeps it quiet.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
import yaml

from evalflow.io import settings
from evalflow.pipeline import orchestrate


@dg.asset
def tiny_first() -> int:
    return 1


@dg.asset
def tiny_second(tiny_first: int) -> int:
    return tiny_first + 1


def tiny_job() -> dg.JobDefinition:
    """Two steps on the multiprocess executor: each runs in a child process."""
    return dg.Definitions(
        assets=[tiny_first, tiny_second],
        jobs=[
            dg.define_asset_job(
                "tiny", selection=[tiny_first, tiny_second], executor_def=dg.multiprocess_executor
            )
        ],
    ).resolve_job_def("tiny")


def run_tiny(warehouse_root: str) -> None:
    """As `orchestrate.run_partition` runs a job: evalflow's instance, quiet loggers."""
    with dg.execute_job(
        dg.reconstructable(tiny_job),
        instance=orchestrate.instance(warehouse_root),
        run_config={"loggers": orchestrate.QUIET_LOGS},
    ) as result:
        assert result.success


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    return env


def test_the_dagster_yaml_evalflow_writes_keeps_step_workers_quiet(tmp_path: Path) -> None:
    home = settings.dagster_home(str(tmp_path / "wh"))
    config = yaml.safe_load((home / settings.DAGSTER_YAML).read_text())
    assert config == {"telemetry": {"enabled": False}, "python_logs": {"python_log_level": "INFO"}}
    instance = dg.DagsterInstance.local_temp(tempdir=str(home))
    assert instance.python_log_level == "INFO"


@pytest.mark.slow  # 10-65 s: two step workers, each a fresh interpreter importing Dagster
def test_a_multiprocess_run_prints_no_debug_line(tmp_path: Path) -> None:
    code = f"from {__name__} import run_tiny; run_tiny({str(tmp_path / 'wh')!r})"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=_clean_env(),
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # The two step workers did run in child processes (their events are in the instance)...
    instance = orchestrate.instance(str(tmp_path / "wh"))
    (run,) = instance.get_runs()
    started = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_WORKER_STARTED)
    assert len(started) == 2
    # ...and said nothing on the console.
    assert "DEBUG" not in done.stdout + done.stderr, done.stderr


@pytest.mark.slow  # 1-7 min: the run's step starts an interpreter importing Dagster
def test_materialize_with_the_multiprocess_executor_shows_only_progress(
    mini: Path, tmp_path: Path
) -> None:
    root = str(tmp_path / "wh")
    cli = str(Path(sys.executable).with_name("evalflow"))
    register = [cli, "register", "--warehouse", root, str(mini / "runs" / "good.yaml")]
    env = _clean_env()
    subprocess.run(register, check=True, capture_output=True, env=env, timeout=300)
    done = subprocess.run(
        [cli, "materialize", "--warehouse", root, "--executor", "multiprocess"],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "✓ mini.good.r1" in done.stderr
    assert "DEBUG" not in done.stdout + done.stderr, done.stderr
    assert " - dagster - " not in done.stdout + done.stderr, done.stderr
