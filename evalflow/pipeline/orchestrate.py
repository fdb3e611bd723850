"""Running evalflow's Dagster jobs from the CLI (the model is PUDL's thin operator CLI).

One Dagster run per partition, in-process by default; partitions run concurrently in worker
processes, each executing its job in-process, so one failing run never sinks the others.
The Dagster instance is `$DAGSTER_HOME` when set (share it with `dagster dev`), else a
persistent instance under `<warehouse>/dagster_home`.
"""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import re
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evalflow.errors import EvalflowError, InputError, InternalError, environment_failure
from evalflow.io import settings
from evalflow.storage.catalog import CatalogUnavailableError, refresh_catalog

# Dagster and the manifest registry are imported where a function first needs them:
# `evalflow query`/`leaderboard` import this module (through cli/runs.py) and must not pay
# seconds for what they never use.
if TYPE_CHECKING:
    import dagster as dg

EXECUTORS = ("in_process", "multiprocess")
INSTANCE_LOCK = ".evalflow-instance.lock"
# Any name serves to touch the partition storage; this one is the evaluations' own.
_PARTITIONS_DEF_NAME = "evaluations"
_EVALFLOW_ERROR = re.compile(r"^evalflow\.errors\.\w+: ")
# How Python prints an OSError: "[Errno 28] No space left on device: '/path'".
_OS_ERROR = re.compile(r"\[Errno (?P<errno>\d+)\] [^:\n]*(?:: '(?P<where>[^'\n]*)')?")
# Dagster's per-event lines would drown the CLI's own progress; failures are reported by
# the CLI as one line each (the full story stays in the Dagster instance). A multiprocess
# step worker announces itself before these apply, at the instance's `python_log_level`:
# the `dagster.yaml` evalflow writes (`settings.DAGSTER_YAML_TEXT`) keeps that line quiet.
QUIET_LOGS = {"console": {"config": {"log_level": "CRITICAL"}}}


# Blocking asset checks that fail on the operator's input (not on evalflow's own invariants).
INPUT_CHECKS = frozenset({"one_baseline_per_benchmark"})

# Runs the CLI ranks itself, so the `rank_after_evaluation` sensor leaves them alone.
RANKED_INLINE_TAG = "evalflow/ranked_inline"


@dataclass(frozen=True)
class Outcome:
    partition: str
    success: bool
    seconds: float
    error: str = ""
    skipped: bool = False  # every per-run asset was fresh: nothing executed (no Dagster run)
    # Failed for a reason evalflow cannot tell the operator how to fix (a bug: exit 3); a
    # failure naming bad input or the machine (a full disk) keeps its fix (exit 2).
    internal: bool = False


def instance(warehouse_root: str) -> dg.DagsterInstance:
    """The Dagster instance, its storage created by one opener at a time.

    Opening a fresh home creates its SQLite databases (runs, schedules, the event-log index)
    and stamps their schema revision. Dagster's run and schedule storages do that without
    guarding against a concurrent opener, so two processes (parallel first commands) or two
    threads (a run and its progress display) opening one fresh home raced into "table …
    already exists" or a `runs.db` stamped with two alembic heads that broke every later
    command. An exclusive lock on a file in the home serialises the openings; it is held
    only while the instance is built and its storages first touched."""
    import dagster as dg

    home = settings.dagster_home(warehouse_root)
    with open(home / INSTANCE_LOCK, "a+b") as lock:
        # flock (not fcntl's per-process locks) so that two threads of one process exclude
        # each other too: each holds its own open file description.
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if os.environ.get("DAGSTER_HOME"):
                inst = dg.DagsterInstance.get()
            else:
                inst = dg.DagsterInstance.local_temp(tempdir=str(home))
            # The storages are built lazily: touch each one that creates tables while locked.
            inst.get_runs(limit=1)
            inst.get_dynamic_partitions(_PARTITIONS_DEF_NAME)
            inst.get_latest_materialization_event(dg.AssetKey(_PARTITIONS_DEF_NAME))
        except Exception as error:
            # A home an older evalflow broke by that race stays broken for every command.
            if "more than one head" not in str(error):
                raise
            raise InputError(
                "the Dagster home's run database is stamped with two schema revisions "
                "(a race between first commands of an older evalflow)",
                where=str(home),
                fix=f"delete it (rm -rf {home}); the warehouse's tables are kept and the next "
                "command makes a new one",
            ) from None
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    _remember_partitions(inst)
    return inst


def _remember_partitions(inst: dg.DagsterInstance) -> None:
    """Answer "is this partition registered?" from memory once the instance has said yes.

    A step of a run over a dynamic partition asks it for every input and output it resolves
    (≈ 270 times per framework run), and each question opens two SQLite connections (the
    partitions table's existence, then the row): half of the index database's queries of a
    first evaluation (docs/performance.md, "CPU per framework run"). A registered partition
    stays registered for the command, unless this instance deletes it; a "no" is always asked
    again, so a partition another process adds is seen."""
    known: set[tuple[str, str]] = set()
    has_partition = inst.has_dynamic_partition
    delete_partition = inst.delete_dynamic_partition

    def has_dynamic_partition(partitions_def_name: str, partition_key: str) -> bool:
        if (partitions_def_name, partition_key) in known:
            return True
        found = has_partition(partitions_def_name, partition_key)
        if found:
            known.add((partitions_def_name, partition_key))
        return found

    def delete_dynamic_partition(partitions_def_name: str, partition_key: str) -> None:
        known.discard((partitions_def_name, partition_key))
        delete_partition(partitions_def_name, partition_key)

    inst.has_dynamic_partition = has_dynamic_partition  # type: ignore[method-assign]
    inst.delete_dynamic_partition = delete_dynamic_partition  # type: ignore[method-assign]


def evaluate_run_job() -> dg.JobDefinition:
    from evalflow.pipeline.definitions import defs

    return defs.resolve_job_def("evaluate_run")


def evaluate_run_multiprocess_job() -> dg.JobDefinition:
    from evalflow.pipeline.definitions import defs

    return defs.resolve_job_def("evaluate_run_multiprocess")


def rank_runs_job() -> dg.JobDefinition:
    from evalflow.pipeline.definitions import defs

    return defs.resolve_job_def("rank_runs")


def register(warehouse_root: str, manifests: Iterable[Path]) -> list[str]:
    """Record each manifest in the registry and add its partition to the instance."""
    from evalflow.io.registry import register_manifest

    warehouse = settings.warehouse(warehouse_root)
    keys = [register_manifest(warehouse, path) for path in manifests]
    _ensure_partitions(instance(warehouse_root), keys)
    return keys


def _ensure_partitions(inst: dg.DagsterInstance, keys: list[str]) -> None:
    from evalflow.pipeline.assets.partitions import evaluations

    existing = set(inst.get_dynamic_partitions(evaluations.name))
    new = [k for k in dict.fromkeys(keys) if k not in existing]
    if new:
        inst.add_dynamic_partitions(evaluations.name, new)


@dataclass(frozen=True)
class JudgeChoice:
    """The CLI's judge options: name, cost limit per framework run, labels file, and
    `rejudge` ("unscored": ask again what stored answers left UNSCORED)."""

    name: str | None = None
    max_cost_usd: float | None = None
    labels: Path | None = None
    rejudge: str | None = None

    def config(self) -> dict:
        out: dict = {}
        if self.name:
            out["judge"] = self.name
        if self.max_cost_usd is not None:
            out["max_cost_usd"] = float(self.max_cost_usd)
        if self.labels is not None:
            out["labels"] = str(self.labels.resolve())
        if self.rejudge:
            out["rejudge"] = self.rejudge
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


def _failure_message(result: dg.ExecuteJobResult) -> tuple[str, bool]:
    """The first failed step's one line, and whether the input or the machine is to blame.

    Dagster wraps what an asset raised (`DagsterExecutionStepExecutionError` → the error →
    its causes). The outermost evalflow error is the one that says what to fix (an inner
    cause such as "git rev-parse failed: exit 1" or pydantic's "For further information
    visit …" does not); without one, an OS error an operator can fix (a full disk) is
    reported with its fix; anything else is an internal failure, its innermost last line."""
    for event in result.all_events:
        evaluation = getattr(event, "event_specific_data", None)
        if (
            getattr(event, "event_type_value", None) == "ASSET_CHECK_EVALUATION"
            and not evaluation.passed
        ):
            # A failed blocking check stops the run; its description says why. Only checks on
            # what the operator configured are the input's fault; the others guard evalflow.
            name = evaluation.asset_check_key.name
            line = f"{event.step_key}: {evaluation.description or name}"
            return line, name in INPUT_CHECKS
        if not event.is_step_failure:
            continue
        chain = []
        error = event.step_failure_data.error
        while error is not None:
            chain.append(error)
            error = error.cause
        for info in chain:
            if match := _EVALFLOW_ERROR.match(info.message):
                return f"{event.step_key}: {info.message[match.end() :].strip()}", True
        for info in chain:
            if (os_error := _OS_ERROR.search(info.message)) is not None:
                where = os_error["where"]
                failure = environment_failure(int(os_error["errno"]), where)
                if failure is not None:
                    return f"{event.step_key}: {failure.one_line()}", True
        if any(info.cls_name == "DagsterExecutionInterruptedError" for info in chain):
            # A signal (Ctrl-C, a timeout, a shutdown) stopped it: no bug, and nothing to fix.
            return f"{event.step_key}: interrupted by a signal before it finished", True
        text = (chain[-1].message if chain else event.message or "").strip().splitlines()
        last = next((line.strip() for line in reversed(text) if line.strip()), "failed")
        return f"{event.step_key}: {last}", False
    return "run failed", False


def failures_error(outcomes: list[Outcome]) -> EvalflowError | None:
    """One error for the runs that failed, or None: the first failure's own line (what, where,
    fix); an internal failure among them comes first and makes it exit 3."""
    failed = sorted((o for o in outcomes if not o.success), key=lambda o: not o.internal)
    if not failed:
        return None
    first = failed[0]
    what = f"{len(failed)} of {len(outcomes)} run(s) failed; first: {first.partition}: "
    what += first.error
    # Said only when true: a ranking over no stored run is no run stored.
    stored = any(o.success and o.partition != "rank_runs" for o in outcomes)
    others = "; the other runs were stored" if stored else ""
    if first.internal:
        return InternalError(
            what,
            fix="a bug in evalflow: report it with that Dagster run's logs (`dagster dev` shows "
            f"them){others}",
        )
    return InputError(what, fix=others.removeprefix("; ") or None)


def plan(
    inst: dg.DagsterInstance,
    warehouse_root: str,
    partitions: list[str],
    judge: JudgeChoice,
    gates: GateChoice = GateChoice(),
    force: bool = False,
) -> dict[str, list[dg.AssetKey] | None]:
    """What each partition's Dagster run materialises: None for every per-run asset (with
    `force`, `--rerun-gates` or `--rejudge`), else its stale ones, [] for none (no run)."""
    from evalflow.io.registry import manifest_for
    from evalflow.pipeline.assets.freshness import PER_RUN_KEYS, stale_by_partition
    from evalflow.pipeline.resources import EvalflowResource

    # --rejudge unscored re-runs every step: the stored answers replay, the unusable re-ask.
    if force or gates.rerun or judge.rejudge:
        return dict.fromkeys(partitions)
    resource = EvalflowResource(warehouse=warehouse_root, **judge.config())
    warehouse = settings.warehouse(warehouse_root)
    manifests = {key: manifest_for(warehouse, key) for key in partitions}
    stale = stale_by_partition(inst, resource, manifests)
    return {key: None if keys == PER_RUN_KEYS else keys for key, keys in stale.items()}


def execute(
    warehouse_root: str,
    partition: str,
    selection: list[dg.AssetKey] | None,
    judge: JudgeChoice,
    executor: str,
    gates: GateChoice = GateChoice(),
    inst: dg.DagsterInstance | None = None,
) -> Outcome:
    """Materialise `selection` (None: every per-run asset) of one partition in its own
    Dagster run; an empty selection runs nothing. `inst`: the caller's open instance (a
    worker process opens its own)."""
    import dagster as dg

    if selection == []:
        return Outcome(partition, True, 0.0, skipped=True)
    start = time.perf_counter()
    job = evaluate_run_job if executor == "in_process" else evaluate_run_multiprocess_job
    with dg.execute_job(
        dg.reconstructable(job),
        instance=inst or instance(warehouse_root),
        run_config=_run_config(warehouse_root, judge, gates),
        tags={"dagster/partition": partition, RANKED_INLINE_TAG: "true"},
        asset_selection=selection,
    ) as result:
        ok = result.success
        error, fixable = ("", True) if ok else _failure_message(result)
    return Outcome(partition, ok, time.perf_counter() - start, error, internal=not fixable)


# A pool worker's instance, opened once by `_open_worker_instance` for every partition it runs.
_WORKER: dict[str, dg.DagsterInstance] = {}


def _open_worker_instance(warehouse_root: str) -> None:
    _WORKER["instance"] = instance(warehouse_root)


def _execute_in_worker(
    warehouse_root: str,
    partition: str,
    selection: list[dg.AssetKey] | None,
    judge: JudgeChoice,
    executor: str,
    gates: GateChoice,
) -> Outcome:
    inst = _WORKER["instance"]
    return execute(warehouse_root, partition, selection, judge, executor, gates, inst)


def run_partition(
    warehouse_root: str,
    partition: str,
    judge: JudgeChoice,
    executor: str,
    gates: GateChoice = GateChoice(),
    force: bool = False,
) -> Outcome:
    """Materialise the stale per-run assets of one partition in its own Dagster run (all of
    them with `force` or `--rerun-gates`); a partition with none stale runs nothing."""
    inst = instance(warehouse_root)
    selection = plan(inst, warehouse_root, [partition], judge, gates, force)[partition]
    return execute(warehouse_root, partition, selection, judge, executor, gates, inst)


def rank(
    warehouse_root: str,
    force: bool = False,
    inst: dg.DagsterInstance | None = None,
    rank_judge: str | None = None,
) -> Outcome:
    """Refresh the cross-run tables, unless a successful ranking already used exactly the
    current per-run tables and ledger (`force` ranks anyway). `inst`: the caller's open one.
    `rank_judge`: the judge every benchmark is ranked by (default: $EVALFLOW_RANK_JUDGE,
    else per benchmark the judge covering the most runs)."""
    import dagster as dg

    from evalflow.pipeline.assets.freshness import (
        RANK_INPUTS_TAG,
        rank_inputs_version,
        rank_is_fresh,
    )

    start = time.perf_counter()
    inst = inst or instance(warehouse_root)
    warehouse = settings.warehouse(warehouse_root)
    pinned = rank_judge or settings.rank_judge()
    version = rank_inputs_version(inst, warehouse, pinned)
    if not force and rank_is_fresh(inst, warehouse, version):
        return Outcome("rank_runs", True, time.perf_counter() - start, skipped=True)
    with dg.execute_job(
        dg.reconstructable(rank_runs_job),
        instance=inst,
        tags={RANK_INPUTS_TAG: version},
        run_config={
            "resources": {
                "evalflow": {"config": {"warehouse": warehouse_root, "rank_judge": pinned or ""}},
                "warehouse_io": {"config": {"warehouse": warehouse_root}},
            },
            "loggers": QUIET_LOGS,
        },
    ) as result:
        ok = result.success
        error, fixable = ("", True) if ok else _failure_message(result)
    return Outcome("rank_runs", ok, time.perf_counter() - start, error, internal=not fixable)


def resolve_partitions(warehouse_root: str, partitions: list[str] | None) -> list[str]:
    """The requested partition keys (default: every registered one), all known."""
    from evalflow.io.registry import registered_keys

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


def check_judges(warehouse_root: str, partitions: list[str], judge: JudgeChoice) -> None:
    """Make each judge the runs will use once, before any Dagster run starts: a missing API
    key, labels file, unknown judge name or unreadable cost limit is one line (exit 2), not
    a failed run per partition followed by a ranking of nothing."""
    from evalflow.io.inputs import load_manifest
    from evalflow.io.registry import manifest_for
    from evalflow.judges.registry import make_judge
    from evalflow.pipeline.resources import EvalflowResource

    EvalflowResource(warehouse=warehouse_root, **judge.config()).cost_limit()
    warehouse = settings.warehouse(warehouse_root)
    names = {
        judge.name or load_manifest(manifest_for(warehouse, key)).manifest.judge
        for key in partitions
    }
    for name in sorted(n or settings.default_judge() for n in names):
        make_judge(name, labels_path=judge.labels)


def materialize(
    warehouse_root: str,
    partitions: list[str] | None,
    *,
    judge: JudgeChoice = JudgeChoice(),
    executor: str = "in_process",
    workers: int = 1,
    on_done: Callable[[Outcome], None] = lambda _: None,
    gates: GateChoice = GateChoice(),
    force: bool = False,
) -> list[Outcome]:
    """Evaluate the given partitions (default: all registered; only their stale assets
    unless `force`), then rank and refresh the DuckDB catalog. Returns one outcome per
    partition plus the ranking run."""
    if executor not in EXECUTORS:
        raise InputError(f"unknown executor {executor!r}", fix=f"use one of {', '.join(EXECUTORS)}")
    warehouse = settings.warehouse(warehouse_root)
    wanted = resolve_partitions(warehouse_root, partitions)
    check_judges(warehouse_root, wanted, judge)
    # Parts of a warehouse written before one part per judge get their judge's name now, so
    # every reader after this command sees `judge_name` on every judge-dependent row.
    warehouse.migrate()
    # One instance for the whole command: opening one costs ≈ 0.5 s CPU (its storages check
    # their schema revisions), as much as an unchanged run's whole freshness check.
    inst = instance(warehouse_root)
    _ensure_partitions(inst, wanted)
    selections = plan(inst, warehouse_root, wanted, judge, gates, force)
    outcomes: list[Outcome] = []
    if workers <= 1 or len(wanted) == 1:
        for key in wanted:
            outcomes.append(
                execute(warehouse_root, key, selections[key], judge, executor, gates, inst)
            )
            on_done(outcomes[-1])
    else:
        stale = [k for k in wanted if selections[k] != []]
        for key in wanted:
            if key not in stale:
                outcomes.append(execute(warehouse_root, key, [], judge, executor, gates))
                on_done(outcomes[-1])
        # Spawned, not forked: this process has threads (the progress reader holds the
        # instance's SQLite), and a child forked while one held a lock waited on it for ever.
        with ProcessPoolExecutor(
            max_workers=max(1, min(workers, len(stale))),
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_open_worker_instance,
            initargs=(warehouse_root,),
        ) as pool:
            futures = [
                pool.submit(
                    _execute_in_worker, warehouse_root, k, selections[k], judge, executor, gates
                )
                for k in stale
            ]
            for future in as_completed(futures):
                outcomes.append(future.result())
                on_done(outcomes[-1])
    outcomes.sort(key=lambda o: wanted.index(o.partition))
    ranked = rank(warehouse_root, force, inst)
    on_done(ranked)
    start = time.perf_counter()
    try:
        refresh_catalog(warehouse)
    except CatalogUnavailableError as exc:
        # Every table is stored and `query` reads it; only external DuckDB clients lose the
        # file, so the evaluation succeeded and the operator is told what to install.
        catalog = Outcome("catalog", True, time.perf_counter() - start, exc.one_line())
        on_done(catalog)
        return [*outcomes, ranked, catalog]
    return [*outcomes, ranked]
