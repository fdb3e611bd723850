"""The single `dagster.Definitions` of evalflow (loaded by workspace.yaml and the CLI).

Jobs run in-process (Dagster's multiprocess executor starts an interpreter per step: ~3 s
per step on a quiet 2-core machine against ~0.1 s in-process, and a demo run ~5× slower on a
loaded one, docs/performance.md "Executors"); parallelism comes from concurrent
per-partition runs.
`evaluate_run_multiprocess` is the same selection on the multiprocess executor
(`evalflow materialize --executor multiprocess`). Each job fixes its executor, so run config
from the UI or a file can never switch it by accident. After every successful evaluation the
cross-run tables are refreshed (`rank_after_evaluation`), so a daemon deployment keeps the
leaderboard current without an operator.
"""

from __future__ import annotations

import dagster as dg

from evalflow.pipeline.assets import cross_run_assets, harness_assets, per_run_assets
from evalflow.pipeline.automation import (
    NIGHTLY_HARNESS_CRON,
    manifest_sensor,
    nightly_schedule,
    rank_after_evaluation,
)
from evalflow.pipeline.io_manager import ParquetIOManagerFactory
from evalflow.pipeline.resources import EvalflowResource

EVALUATE_DESCRIPTION = "Score one run: manifest → diff → 3 scoring runs → vote → roll-up → report."
evaluate_run = dg.define_asset_job(
    "evaluate_run",
    selection=dg.AssetSelection.assets(*per_run_assets),
    executor_def=dg.in_process_executor,
    description=EVALUATE_DESCRIPTION,
)
evaluate_run_multiprocess = dg.define_asset_job(
    "evaluate_run_multiprocess",
    selection=dg.AssetSelection.assets(*per_run_assets),
    executor_def=dg.multiprocess_executor,
    description=f"{EVALUATE_DESCRIPTION} (one process per step)",
)

rank_runs = dg.define_asset_job(
    "rank_runs",
    selection=dg.AssetSelection.assets(*cross_run_assets),
    executor_def=dg.in_process_executor,
    description="Cross-run tables over every evaluated partition (leaderboard).",
)

harness = dg.define_asset_job(
    "harness",
    selection=dg.AssetSelection.assets(*harness_assets),
    executor_def=dg.in_process_executor,
    description="Measure the judge against gold labels and gate the evidence retrieval.",
)


def _definitions(evaluate_executor: dg.ExecutorDefinition | None = None) -> dg.Definitions:
    """evalflow's assets, jobs, schedules and sensors; `evaluate_executor` replaces the two
    per-run jobs by one `evaluate_run` on that executor (a distributed deployment)."""
    evaluate = (
        [evaluate_run, evaluate_run_multiprocess]
        if evaluate_executor is None
        else [
            dg.define_asset_job(
                "evaluate_run",
                selection=dg.AssetSelection.assets(*per_run_assets),
                executor_def=evaluate_executor,
                description=EVALUATE_DESCRIPTION,
            )
        ]
    )
    return dg.Definitions(
        assets=[*per_run_assets, *cross_run_assets, *harness_assets],
        jobs=[*evaluate, rank_runs, harness],
        schedules=[
            nightly_schedule(evaluate[0]),
            dg.ScheduleDefinition(
                name="nightly_harness",
                job=harness,
                cron_schedule=NIGHTLY_HARNESS_CRON,
                execution_timezone="UTC",
                description="Re-calibrate the judge and re-gate retrieval before the nightly runs.",
            ),
        ],
        sensors=[manifest_sensor(evaluate[0]), rank_after_evaluation(evaluate[0], rank_runs)],
        resources={
            "evalflow": EvalflowResource(),
            "warehouse_io": ParquetIOManagerFactory(),
        },
    )


defs = _definitions()


def distributed_definitions(executor: dg.ExecutorDefinition) -> dg.Definitions:
    """The code location of a distributed deployment (docs/scaling.md section 4): evalflow's
    definitions with `evaluate_run` on `executor` (Dask, Celery, Kubernetes...), so each of a
    run's steps may execute on another worker; the other jobs stay in-process."""
    return _definitions(executor)
