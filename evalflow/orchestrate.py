"""Running evalflow's Dagster jobs from the CLI (the model is PUDL's thin operator CLI).

One Dagster run per partition, in-process by default; partitions run concurrently in worker
processes, each executing its job in-process, so one failing run never sinks the others.
The Dagster instance is `$DAGSTER_HOME` when set (share it with `dagster dev`), else a
persistent instance under `<warehouse>/dagster_home`.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evalflow import settings
from evalflow.errors import InputError
from evalflow.storage.catalog import refresh_catalog

# Dagster and the manifest registry are imported where a function first needs them:
# `evalflow query`/`leaderboard` import this module (through cli/runs.py) and must not pay
# seconds for what they never use.
if TYPE_CHECKING:
    import dagster as dg

EXECUTORS = ("in_process", "multiprocess")
_EVALFLOW_ERROR = re.compile(r"^evalflow\.errors\.\w+: ")
# Dagster's per-event lines would drown the CLI's own progress; failures are reported by
# the CLI as one line each (the full story stays in the Dagster instance).
QUIET_LOGS = {"console": {"config": {"log_level": "CRITICAL"}}}


@dataclass(frozen=True)
class Outcome:
    partition: str
    success: bool
    seconds: float
    error: str = ""


def instance(warehouse_root: str) -> dg.DagsterInstance:
    import dagster as dg

    home = settings.dagster_home(warehouse_root)
    if os.environ.get("DAGSTER_HOME"):
        return dg.DagsterInstance.get()
    return dg.DagsterInstance.local_temp(tempdir=str(home))


def evaluate_run_job() -> dg.JobDefinition:
    from evalflow.definitions import defs

    return defs.resolve_job_def("evaluate_run")


def evaluate_run_multiprocess_job() -> dg.JobDefinition:
    from evalflow.definitions import defs

    return defs.resolve_job_def("evaluate_run_multiprocess")


def rank_runs_job() -> dg.JobDefinition:
    from evalflow.definitions import defs

    return defs.resolve_job_def("rank_runs")


def register(warehouse_root: str, manifests: Iterable[Path]) -> list[str]:
    """Record each manifest in the registry and add its partition to the instance."""
    from evalflow.registry import register_manifest

    warehouse = settings.warehouse(warehouse_root)
    keys = [register_manifest(warehouse, path) for path in manifests]
    _ensure_partitions(instance(warehouse_root), keys)
    return keys


def _ensure_partitions(inst: dg.DagsterInstance, keys: list[str]) -> None:
    from evalflow.assets.partitions import evaluations

    existing = set(inst.get_dynamic_partitions(evaluations.name))
    new = [k for k in dict.fromkeys(keys) if k not in existing]
    if new:
        inst.add_dynamic_partitions(evaluations.name, new)


@dataclass(frozen=True)
class JudgeChoice:
    """The CLI's judge options: name, cost limit per framework run, labels file."""

    name: str | None = None
    max_cost_usd: float | None = None
    labels: Path | None = None

    def config(self) -> dict:
        out: dict = {}
        if self.name:
            out["judge"] = self.name
        if self.max_cost_usd is not None:
            out["max_cost_usd"] = float(self.max_cost_usd)
        if self.labels is not None:
            out["labels"] = str(self.labels.resolve())
        return out


@dataclass(frozen=True)
class GateChoice:
    """The CLI's gate options: ignore the gate-result cache, refuse missing isolation."""

    rerun: bool = False
    require_isolation: bool = False

    def config(self) -> dict:
        return {"rerun_gates": self.rerun, "require_isolation": self.require_isolation}


def _run_config(warehouse_root: str, judge: JudgeChoice, gates: GateChoice = GateChoice()) -> dict:
    settings = {"warehouse": warehouse_root, **judge.config(), **gates.config()}
    config: dict = {"evalflow": {"config": settings}}
    return {
        "resources": {**config, "warehouse_io": {"config": {"warehouse": warehouse_root}}},
        "loggers": QUIET_LOGS,
    }


def _failure_message(result: dg.ExecuteJobResult) -> str:
    for event in result.all_events:
        if event.is_step_failure:
            error = event.step_failure_data.error
            while error is not None and error.cause is not None:
                error = error.cause
            text = (error.message if error else event.message or "").strip().splitlines()
            for line in reversed(text):
                if line.strip():
                    return f"{event.step_key}: {_EVALFLOW_ERROR.sub('', line.strip())}"
    return "run failed"


def run_partition(
    warehouse_root: str,
    partition: str,
    judge: JudgeChoice,
    executor: str,
    gates: GateChoice = GateChoice(),
) -> Outcome:
    """Materialise every per-run asset of one partition in its own Dagster run."""
    import dagster as dg

    start = time.perf_counter()
    job = evaluate_run_job if executor == "in_process" else evaluate_run_multiprocess_job
    with dg.execute_job(
        dg.reconstructable(job),
        instance=instance(warehouse_root),
        run_config=_run_config(warehouse_root, judge, gates),
        tags={"dagster/partition": partition},
    ) as result:
        ok = result.success
        error = "" if ok else _failure_message(result)
    return Outcome(partition, ok, time.perf_counter() - start, error)


def rank(warehouse_root: str) -> Outcome:
    import dagster as dg

    start = time.perf_counter()
    with dg.execute_job(
        dg.reconstructable(rank_runs_job),
        instance=instance(warehouse_root),
        run_config={
            "resources": {
                "evalflow": {"config": {"warehouse": warehouse_root}},
                "warehouse_io": {"config": {"warehouse": warehouse_root}},
            },
            "loggers": QUIET_LOGS,
        },
    ) as result:
        ok = result.success
        error = "" if ok else _failure_message(result)
    return Outcome("rank_runs", ok, time.perf_counter() - start, error)


def resolve_partitions(warehouse_root: str, partitions: list[str] | None) -> list[str]:
    """The requested partition keys (default: every registered one), all known."""
    from evalflow.registry import registered_keys

    known = registered_keys(settings.warehouse(warehouse_root))
    wanted = partitions or known
    unknown = [p for p in wanted if p not in known]
    if unknown:
        raise InputError(
            f"unknown partition key {unknown[0]!r}",
            fix=f"register its manifest or use one of: {', '.join(known) or 'none'}",
        )
    if not wanted:
        raise InputError("no registered runs", fix="evalflow register MANIFEST")
    return wanted


def materialize(
    warehouse_root: str,
    partitions: list[str] | None,
    *,
    judge: JudgeChoice = JudgeChoice(),
    executor: str = "in_process",
    workers: int = 1,
    on_done: Callable[[Outcome], None] = lambda _: None,
    gates: GateChoice = GateChoice(),
) -> list[Outcome]:
    """Evaluate the given partitions (default: all registered), then rank and refresh the
    DuckDB catalog. Returns one outcome per partition plus the ranking run."""
    if executor not in EXECUTORS:
        raise InputError(f"unknown executor {executor!r}", fix=f"use one of {', '.join(EXECUTORS)}")
    warehouse = settings.warehouse(warehouse_root)
    wanted = resolve_partitions(warehouse_root, partitions)
    _ensure_partitions(instance(warehouse_root), wanted)
    outcomes: list[Outcome] = []
    if workers <= 1 or len(wanted) == 1:
        for key in wanted:
            outcomes.append(run_partition(warehouse_root, key, judge, executor, gates))
            on_done(outcomes[-1])
    else:
        with ProcessPoolExecutor(max_workers=min(workers, len(wanted))) as pool:
            futures = [
                pool.submit(run_partition, warehouse_root, k, judge, executor, gates)
                for k in wanted
            ]
            for future in as_completed(futures):
                outcomes.append(future.result())
                on_done(outcomes[-1])
    outcomes.sort(key=lambda o: wanted.index(o.partition))
    ranked = rank(warehouse_root)
    on_done(ranked)
    refresh_catalog(warehouse)
    return [*outcomes, ranked]
