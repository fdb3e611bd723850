"""Which per-run assets of a partition are stale, so an unchanged run is never scored again.

Every per-run output records evalflow's version as its code version and the run's
fingerprint (PRD, baseline, commits, judge and prompt, elicitation files, evalflow version:
`evaluation.fingerprint`) as its data version. An asset is *fresh* for a partition when its
latest materialisation in the Dagster instance carries the current fingerprint and code
version and its warehouse part (for a judge-dependent table: the evaluation's judge's part)
still exists; otherwise it is stale, and so is everything downstream of it. Re-scoring with
judge A after judge B changes the fingerprint (it covers the judge), so A's steps run again
and replace A's parts only; B's stay. Dagster's in-process execution runs every step it is
given, so the CLI, the nightly schedule and the manifest sensor give it only the stale ones
(`stale_by_partition`).

The check is cheap, because an unchanged re-evaluation is mostly this check: the fingerprint
is computed from the resolved commits without diffing (`resolve_run`), and the latest data
versions of all the partitions come from one indexed query per per-run table
(`get_latest_tags_by_partition`), not one query per table and partition.

One exception keeps the numbers honest: a run left incomplete by a non-deterministic judge is
stale while one of its UNSCORED checks was decided by no answer (a spent budget, a failed API
call: `judges.cache.unanswered`), a gap a new attempt can fill. An UNSCORED check that an
answer decided (refused, invalid, never submitted) is not: the answer is stored, a re-run
would replay it to the same outcome, and asking again is the operator's choice
(`--rejudge unscored`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

import dagster as dg
from dagster._core.definitions.data_version import DATA_VERSION_TAG
from dagster._core.events import DagsterEventType

from evalflow.errors import EvalflowError
from evalflow.io import settings
from evalflow.io.evaluation import K_RUNS, fingerprint, resolve_run
from evalflow.io.ledger import ledger_path_for
from evalflow.io.registry import REGISTRY_TABLE
from evalflow.io.suites import SUITES_DIR
from evalflow.judges.cache import unanswered
from evalflow.pipeline.assets import cross_run_assets, per_run_assets
from evalflow.pipeline.assets.common import CODE_VERSION, data_version
from evalflow.pipeline.resources import EvalflowResource
from evalflow.storage.warehouse import Warehouse

PER_RUN_KEYS = sorted(key for a in per_run_assets for key in a.keys)
CROSS_RUN_KEYS = sorted(key for a in cross_run_assets for key in a.keys)
# The per-run tables the cross-run assets read (ledger_entry reads the ledger file instead).
RANK_INPUTS = sorted({k for a in cross_run_assets for k in a.dependency_keys} & set(PER_RUN_KEYS))
# The cross-run tables' layout: a leaderboard ranked before one result per judge (no
# `ranking_key`) is re-ranked once, whatever else changed.
RANK_LAYOUT = 2
# Tag of a `rank_runs` run: the `rank_inputs_version` it ranked.
RANK_INPUTS_TAG = "evalflow/rank_inputs"


def current_fingerprint(evalflow: EvalflowResource, manifest_path: Path) -> str:
    """The fingerprint a run of this manifest would record now (reads only)."""
    resolved = resolve_run(manifest_path, evalflow.get_warehouse().workdir)
    return fingerprint(resolved, evalflow.get_judge(resolved.manifest.judge))


def _expected(evalflow: EvalflowResource, partition: str, manifest_path: Path) -> str | None:
    """The partition's current fingerprint, or None when every asset is to run: it is not
    registered to `manifest_path` yet, or its fingerprint cannot be computed (the run itself
    registers it or reports the error)."""
    warehouse = evalflow.get_warehouse()
    if not warehouse.has(REGISTRY_TABLE, partition):
        return None
    registered = Path(warehouse.read(REGISTRY_TABLE, partition)["manifest_path"].iloc[0])
    if registered.resolve() != Path(manifest_path).resolve():
        return None
    try:
        return current_fingerprint(evalflow, manifest_path)
    except EvalflowError:
        return None


def _retry_incomplete(warehouse: Warehouse, partition: str, judge: str) -> bool:
    if not (
        warehouse.has("final_score", partition, judge)
        and warehouse.has("run_manifest", partition, judge)
    ):
        return True
    final = warehouse.read("final_score", partition, judge).iloc[0]
    manifest = warehouse.read("run_manifest", partition, judge).iloc[0]
    if bool(final["complete"]) or bool(manifest["judge_deterministic"]):
        return False
    for run in range(1, K_RUNS + 1):
        table = f"scoring_run_{run}"
        if not warehouse.has(table, partition, judge):
            return True
        verdicts = warehouse.read(table, partition, judge)
        reasons = verdicts.loc[verdicts["status"] == "UNSCORED", "rationale"]
        if any(unanswered(reason) for reason in reasons):
            return True
    return False


def _downstream(stale: set[dg.AssetKey]) -> set[dg.AssetKey]:
    """`stale` with everything that reads it."""
    return set(dg.AssetSelection.assets(*stale).downstream().resolve(per_run_assets))


def stale_by_partition(
    instance: dg.DagsterInstance, evalflow: EvalflowResource, manifests: Mapping[str, Path]
) -> dict[str, list[dg.AssetKey]]:
    """The per-run assets to materialise for each partition of `manifests` (partition →
    its manifest): sorted, empty when all are fresh.

    Only the data version is compared: every per-run asset's code version is evalflow's
    version, which the fingerprint covers, and Dagster indexes the data-version tag alone
    for by-partition queries. The report's also carries its renderers' digest
    (`common.data_version`)."""
    warehouse = evalflow.get_warehouse()
    expected = {p: _expected(evalflow, p, path) for p, path in manifests.items()}
    # The judge this evaluation uses: a judge-dependent table is fresh only with its part.
    judges = {p: evalflow.judge_for(p) for p, fp in expected.items() if fp is not None}
    checked = [
        p
        for p, fp in expected.items()
        if fp is not None and not _retry_incomplete(warehouse, p, judges[p])
    ]
    latest = {
        key: instance.event_log_storage.get_latest_tags_by_partition(
            key, DagsterEventType.ASSET_MATERIALIZATION, [DATA_VERSION_TAG], checked
        )
        for key in (PER_RUN_KEYS if checked else [])
    }
    out: dict[str, list[dg.AssetKey]] = {}
    for partition in manifests:
        if partition not in checked:
            out[partition] = list(PER_RUN_KEYS)
            continue
        stale = {
            key
            for key in PER_RUN_KEYS
            if latest[key].get(partition, {}).get(DATA_VERSION_TAG)
            != data_version(key.path[-1], expected[partition])
            or not warehouse.has(key.path[-1], partition, judges[partition])
        }
        out[partition] = sorted(_downstream(stale)) if stale else []
    return out


def stale_keys(
    instance: dg.DagsterInstance,
    evalflow: EvalflowResource,
    partition: str,
    manifest_path: Path,
) -> list[dg.AssetKey]:
    """`stale_by_partition` for one partition."""
    return stale_by_partition(instance, evalflow, {partition: manifest_path})[partition]


def rank_inputs_version(
    instance: dg.DagsterInstance, warehouse: Warehouse, rank_judge: str | None = None
) -> str:
    """What the cross-run tables are computed from: the latest materialisation of each per-run
    table they read, in every partition, the ledger's and the suite files' bytes, the code
    version, the judge the rankings are pinned to and the warehouse layout."""
    storage = instance.event_log_storage
    material: dict[str, object] = {
        key.to_user_string(): dict(
            storage.get_latest_storage_id_by_partition(key, DagsterEventType.ASSET_MATERIALIZATION)
        )
        for key in RANK_INPUTS
    }
    ledger = ledger_path_for(warehouse.workdir)
    material["ledger"] = (
        hashlib.sha256(ledger.read_bytes()).hexdigest() if ledger.is_file() else None
    )
    # The suite assets also read the suite files, which live outside Dagster.
    material["suites"] = {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted((settings.benchmarks_root() / SUITES_DIR).glob("*.yaml"))
    }
    material["code_version"] = CODE_VERSION
    material["rank_judge"] = rank_judge
    material["layout"] = RANK_LAYOUT
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def rank_is_fresh(instance: dg.DagsterInstance, warehouse: Warehouse, version: str) -> bool:
    """A successful `rank_runs` run already ranked exactly these inputs and its tables exist."""
    ranked = instance.get_runs(
        filters=dg.RunsFilter(
            job_name="rank_runs",
            statuses=[dg.DagsterRunStatus.SUCCESS],
            tags={RANK_INPUTS_TAG: version},
        ),
        limit=1,
    )
    return bool(ranked) and all(warehouse.has(key.path[-1]) for key in CROSS_RUN_KEYS)
