"""The nightly re-evaluation schedule, the sensor that finds new run manifests, and the
sensor that re-ranks after each daemon evaluation.

Nothing here writes while it is only evaluated (a tick or `dagster sensor preview`): the
schedule and the manifest sensor read the registry, the Dagster instance and the manifests,
and return what to do — run requests with the stale assets only (`assets.freshness`), new
partitions as `SensorResult(dynamic_partitions_requests=...)`, and a cursor. A requested run
registers its manifest when it starts (`MANIFEST_TAG`, asset `run_manifest`). Dagster's
partitioned-schedule helper rejects dynamic partitions, so the schedule emits one run request
per stale partition itself.
"""

import hashlib
import json
import os
from pathlib import Path

import dagster as dg
from dagster._core.definitions.unresolved_asset_job_definition import UnresolvedAssetJobDefinition
from dagster._utils.schedules import is_valid_cron_string

from evalflow.errors import EvalflowError, InputError
from evalflow.io import settings
from evalflow.io.inputs import load_manifest
from evalflow.io.registry import REGISTRY_TABLE, manifest_for
from evalflow.pipeline.assets.common import MANIFEST_TAG
from evalflow.pipeline.assets.freshness import (
    PER_RUN_KEYS,
    RANK_INPUTS_TAG,
    rank_inputs_version,
    rank_is_fresh,
    stale_by_partition,
    stale_keys,
)
from evalflow.pipeline.assets.partitions import evaluations
from evalflow.pipeline.orchestrate import RANKED_INLINE_TAG
from evalflow.pipeline.resources import EvalflowResource

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


def _request(key: str, stale: list[dg.AssetKey], **fields) -> dg.RunRequest:
    """One partition's run: the whole job, or only its stale assets."""
    return dg.RunRequest(
        partition_key=key, asset_selection=None if stale == PER_RUN_KEYS else stale, **fields
    )


def nightly_schedule(job: UnresolvedAssetJobDefinition) -> dg.ScheduleDefinition:
    @dg.schedule(
        name="nightly_reevaluation",
        job=job,
        cron_schedule=_cron(),
        execution_timezone="UTC",
        description="Re-evaluate the stale assets of every registered framework run (02:00 UTC "
        "by default); an unchanged run is skipped and named in the tick's log and run tags.",
    )
    def _nightly(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest] | dg.SkipReason:
        keys = sorted(context.instance.get_dynamic_partitions(evaluations.name))
        if not keys:
            return dg.SkipReason("no registered evaluations")
        evalflow = EvalflowResource()
        warehouse = evalflow.get_warehouse()
        stamp = context.scheduled_execution_time.strftime("%Y%m%d")
        manifests: dict[str, Path] = {}
        for key in keys:
            if not warehouse.has(REGISTRY_TABLE, key):
                context.log.warning(f"{key}: not in this warehouse's run_registry, not evaluated")
                continue
            manifests[key] = manifest_for(warehouse, key)
        selections = stale_by_partition(context.instance, evalflow, manifests)
        stale = {key: selection for key, selection in selections.items() if selection}
        skipped = [key for key, selection in selections.items() if not selection]
        if skipped:
            context.log.info(
                f"unchanged since their last evaluation, skipped: {', '.join(skipped)}"
            )
        if not stale:
            return dg.SkipReason(f"every registered run is unchanged: {', '.join(skipped)}")
        tags = {"evalflow/skipped_unchanged": str(len(skipped))}
        return [
            _request(key, selection, run_key=f"nightly-{stamp}-{key}", tags=tags)
            for key, selection in stale.items()
        ]

    return _nightly


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def manifest_sensor(job: UnresolvedAssetJobDefinition) -> dg.SensorDefinition:
    @dg.sensor(
        name="run_manifest_sensor",
        job=job,
        minimum_interval_seconds=60,
        description="Finds new or changed manifests under <benchmarks>/*/runs/*.yaml and "
        "requests their stale assets; a run already evaluated with the same fingerprint is "
        "not requested again. The cursor maps each manifest to the digest last seen.",
    )
    def _sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult:
        seen: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
        evalflow = EvalflowResource()
        known = set(context.instance.get_dynamic_partitions(evaluations.name))
        cursor: dict[str, str] = {}
        new_keys: list[str] = []
        requests: list[dg.RunRequest] = []
        for path in sorted(settings.benchmarks_root().glob("*/runs/*.yaml")):
            digest = cursor[str(path)] = _digest(path)
            if seen.get(str(path)) == digest:
                continue
            try:
                key = load_manifest(path).manifest.run_key
                stale = stale_keys(context.instance, evalflow, key, path)
            except EvalflowError as exc:
                context.log.warning(f"skipping manifest: {exc.one_line()}")
                continue
            if not stale:
                context.log.info(f"{key}: already evaluated with the same fingerprint")
                continue
            if key not in known and key not in new_keys:
                new_keys.append(key)
            tags = {MANIFEST_TAG: str(path.resolve())}
            requests.append(_request(key, stale, run_key=f"{key}:{digest}", tags=tags))
        return dg.SensorResult(
            run_requests=requests,
            dynamic_partitions_requests=[evaluations.build_add_request(new_keys)]
            if new_keys
            else [],
            cursor=json.dumps(cursor, sort_keys=True),
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
        # Running by default: without it a daemon deployment's leaderboard and ledger_entry
        # would lag every scheduled or sensor-requested evaluation.
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Re-rank every benchmark when a framework run has been evaluated by the "
        "daemon (the CLI ranks its own runs).",
    )
    def _rank(context: dg.RunStatusSensorContext) -> dg.RunRequest | dg.SkipReason:
        if context.dagster_run.tags.get(RANKED_INLINE_TAG):
            return dg.SkipReason("the CLI ranks the runs it evaluates itself")
        warehouse = EvalflowResource().get_warehouse()
        version = rank_inputs_version(context.instance, warehouse, settings.rank_judge())
        if rank_is_fresh(context.instance, warehouse, version):
            return dg.SkipReason("the cross-run tables already rank these inputs")
        return dg.RunRequest(
            run_key=f"rank-after-{context.dagster_run.run_id}", tags={RANK_INPUTS_TAG: version}
        )

    return _rank
