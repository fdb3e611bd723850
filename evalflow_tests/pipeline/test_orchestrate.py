"""orchestrate.py: one opener at a time creates a fresh Dagster home's storage."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from evalflow.errors import InputError
from evalflow.io import settings
from evalflow.pipeline import orchestrate

REPO_ROOT = Path(__file__).resolve().parents[2]


def _open_and_use(root: str, key: str) -> str:
    inst = orchestrate.instance(root)
    orchestrate._ensure_partitions(inst, [key])
    return key


def test_six_threads_opening_one_fresh_home_all_succeed(tmp_path: Path, monkeypatch) -> None:
    # A run and its progress display open the instance from two threads of one process; the
    # unguarded opening raced into "table … already exists" or two alembic heads.
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    # (Creating a home costs Dagster seconds, so one attempt: it failed on the old code.)
    root = str(tmp_path / "warehouse")
    keys = [f"b.f{i}.r1" for i in range(6)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        assert sorted(pool.map(lambda k: _open_and_use(root, k), keys)) == keys
    inst = orchestrate.instance(root)
    assert sorted(inst.get_dynamic_partitions("evaluations")) == keys


def test_a_home_broken_by_an_older_race_is_one_line_naming_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    root = str(tmp_path / "warehouse")
    orchestrate.instance(root)
    runs_db = tmp_path / "warehouse" / "dagster_home" / "history" / "runs.db"
    with sqlite3.connect(runs_db) as db:
        db.execute("INSERT INTO alembic_version VALUES ('0000extra')")
    with pytest.raises(InputError) as error:
        orchestrate.instance(root)
    assert "dagster_home" in error.value.one_line() and "delete" in error.value.one_line()


@pytest.mark.slow
def test_six_first_commands_at_once_on_a_fresh_home(mini: Path, tmp_path: Path) -> None:
    """Six `evalflow register` processes start together on a warehouse with no Dagster home:
    every one succeeds and the home holds all six partitions."""
    good = yaml.safe_load((mini / "runs" / "good.yaml").read_text())
    manifests = []
    for i in range(6):
        path = mini / "runs" / f"f{i}.yaml"
        path.write_text(yaml.safe_dump({**good, "framework": f"f{i}"}))
        manifests.append(path)
    root = tmp_path / "warehouse"
    env = {**os.environ, "EVALFLOW_WAREHOUSE": str(root), "PYTHONPATH": str(REPO_ROOT)}
    env.pop("DAGSTER_HOME", None)
    code = "import sys; from evalflow.cli import main; main(sys.argv[1:])"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", code, "register", str(path)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for path in manifests
    ]
    results = [(child.wait(timeout=300), child.stderr.read()) for child in children]
    for child in children:
        child.stdout.close()
        child.stderr.close()
    assert [code for code, _ in results] == [0] * 6, [err for _, err in results]
    inst = orchestrate.instance(str(root))
    assert sorted(inst.get_dynamic_partitions("evaluations")) == [f"mini.f{i}.r1" for i in range(6)]


@pytest.mark.slow
def test_a_bad_run_among_three_never_sinks_the_others(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three runs in one command, the middle one refused (head is its base commit): the
    other two are evaluated and stored, the bad one is reported with its own line, and the
    ranking covers the two."""
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    good = yaml.safe_load((mini / "runs" / "good.yaml").read_text())
    bad = mini / "runs" / "bad.yaml"
    bad.write_text(yaml.safe_dump({**good, "framework": "bad", "head": "base"}))
    root = str(tmp_path / "wh")
    names = ("good.yaml", "partial.yaml", "bad.yaml")
    keys = orchestrate.register(root, [mini / "runs" / name for name in names])
    outcomes = orchestrate.materialize(root, keys)
    assert [(o.partition, o.success) for o in outcomes] == [
        ("mini.good.r1", True),
        ("mini.partial.r1", True),
        ("mini.bad.r1", False),
        ("rank_runs", True),
    ]
    assert "changed nothing" in outcomes[2].error
    wh = settings.warehouse(root)
    assert [wh.has("final_score", k) for k in keys] == [True, True, False]
    assert sorted(wh.read("leaderboard")["run_key"]) == ["mini.good.r1", "mini.partial.r1"]
    error = orchestrate.failures_error(outcomes)
    assert error is not None and "1 of 4 run(s) failed" in error.one_line()
    assert "the other runs were stored" in error.one_line()


def test_each_pool_worker_opens_one_instance_for_all_its_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--workers 2` over four stale runs: the command opens one instance and each worker one
    for every run it executes (≈ 0.5 s CPU each), not one per run; a fresh run starts no
    worker."""
    opened = tmp_path / "opened"

    def fake_instance(root: str) -> object:
        with opened.open("a") as log:
            log.write(f"{os.getpid()}\n")
        return object()

    def fake_execute(root, key, selection, judge, executor, gates, inst=None):
        assert inst is not None or selection == [], f"{key}: executed without an open instance"
        return orchestrate.Outcome(key, True, 0.0, skipped=selection == [])

    keys = [f"b.f{i}.r1" for i in range(5)]
    monkeypatch.setattr(orchestrate, "instance", fake_instance)
    monkeypatch.setattr(orchestrate, "resolve_partitions", lambda root, wanted: wanted)
    monkeypatch.setattr(orchestrate, "check_judges", lambda *args: None)
    monkeypatch.setattr(orchestrate, "_ensure_partitions", lambda *args: None)
    monkeypatch.setattr(
        orchestrate,
        "plan",
        lambda inst, root, wanted, *a: {k: [] if k == keys[0] else None for k in wanted},
    )
    monkeypatch.setattr(orchestrate, "execute", fake_execute)
    monkeypatch.setattr(orchestrate, "rank", lambda *a: orchestrate.Outcome("rank_runs", True, 0.0))
    monkeypatch.setattr(orchestrate, "refresh_catalog", lambda warehouse: None)
    outcomes = orchestrate.materialize(str(tmp_path / "wh"), keys, workers=2)
    assert [(o.partition, o.skipped) for o in outcomes] == [
        (keys[0], True),
        *[(k, False) for k in keys[1:]],
        ("rank_runs", False),
    ]
    pids = opened.read_text().split()
    assert len(pids) == len(set(pids)) <= 3  # the command, then at most one per worker
