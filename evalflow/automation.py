"""The nightly re-evaluation schedule and the sensor that registers new run manifests.

Dagster's partitioned-schedule helper rejects dynamic partitions, so the schedule emits one
run request per registered partition itself. The sensor watches
`<EVALFLOW_BENCHMARKS>/*/runs/*.yaml`; a new or changed manifest registers its key and
requests its run (the run key includes the manifest's hash, so an unchanged file never
triggers twice).
"""

import hashlib
import os

import dagster as dg
from dagster._core.definitions.unresolved_asset_job_definition import UnresolvedAssetJobDefinition
from dagster._utils.schedules import is_valid_cron_string

from evalflow import settings
from evalflow.assets.partitions import evaluations
from evalflow.errors import EvalflowError, InputError
from evalflow.registry import register_manifest

NIGHTLY_CRON_ENV = "EVALFLOW_NIGHTLY_CRON"
DEFAULT_NIGHTLY_CRON = "0 2 * * *"
# The harness (judge calibration, retrieval gate) runs first, so a regression shows up in the
# morning next to the scores it would have affected.
NIGHTLY_HARNESS_CRON = "30 1 * * *"


def _cron() -> str:
    value = os.environ.get(NIGHTLY_CRON_ENV) or DEFAULT_NIGHTLY_CRON
    if not is_valid_cron_string(value):
        raise InputError(
            f"{NIGHTLY_CRON_ENV}={value!r} is not a cron expression",
            fix="use five fields, e.g. '0 2 * * *' (02:00 UTC every day)",
        )
    return value


def nightly_schedule(job: UnresolvedAssetJobDefinition) -> dg.ScheduleDefinition:
    @dg.schedule(
        name="nightly_reevaluation",
        job=job,
        cron_schedule=_cron(),
        execution_timezone="UTC",
        description="Re-evaluate every registered framework run (02:00 UTC by default).",
    )
    def _nightly(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest] | dg.SkipReason:
        keys = context.instance.get_dynamic_partitions(evaluations.name)
        if not keys:
            return dg.SkipReason("no registered evaluations")
        stamp = context.scheduled_execution_time.strftime("%Y%m%d")
        return [
            dg.RunRequest(run_key=f"nightly-{stamp}-{key}", partition_key=key)
            for key in sorted(keys)
        ]

    return _nightly


def manifest_sensor(job: UnresolvedAssetJobDefinition) -> dg.SensorDefinition:
    @dg.sensor(
        name="run_manifest_sensor",
        job=job,
        minimum_interval_seconds=60,
        description="Registers new manifests under <benchmarks>/*/runs/*.yaml and runs them.",
    )
    def _sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult:
        warehouse = settings.warehouse()
        known = set(context.instance.get_dynamic_partitions(evaluations.name))
        new_keys: list[str] = []
        requests: list[dg.RunRequest] = []
        for path in sorted(settings.benchmarks_root().glob("*/runs/*.yaml")):
            try:
                key = register_manifest(warehouse, path)
            except EvalflowError as exc:
                context.log.warning(f"skipping manifest: {exc.one_line()}")
                continue
            if key not in known and key not in new_keys:
                new_keys.append(key)
            digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            requests.append(dg.RunRequest(run_key=f"{key}:{digest}", partition_key=key))
        return dg.SensorResult(
            run_requests=requests,
            dynamic_partitions_requests=[evaluations.build_add_request(new_keys)]
            if new_keys
            else [],
        )

    return _sensor


def rank_after_evaluation(
    evaluated: UnresolvedAssetJobDefinition, rank: UnresolvedAssetJobDefinition
) -> dg.SensorDefinition:
    """Refresh the cross-run tables (leaderboard, ratings, ledger) after each evaluation."""

    @dg.run_status_sensor(
        name="rank_after_evaluation",
        run_status=dg.DagsterRunStatus.SUCCESS,
        monitored_jobs=[evaluated],
        request_job=rank,
        description="Re-rank every benchmark when a framework run has been evaluated.",
    )
    def _rank(context: dg.RunStatusSensorContext) -> dg.RunRequest:
        return dg.RunRequest(run_key=f"rank-after-{context.dagster_run.run_id}")

    return _rank
