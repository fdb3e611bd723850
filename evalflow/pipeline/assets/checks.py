"""Asset checks: the invariants a benchmark operator relies on, checked on every run.

- `weights_consistent` (final_score): Σw equals the priority table applied to the PRD;
- `met_has_valid_evidence` (majority_vote): every MET majority cites evidence that still
  validates against the repository at head;
- `one_baseline_per_benchmark` (run_manifest): every run of a benchmark used the same
  frozen baseline hash, so its Finals are comparable;
- `read_only_guard` (report): the evaluated repository is exactly as it was before scoring;
- `borderline_rate` (majority_vote, warning): the share of borderline checks stays under the
  configured threshold (persistent disagreement means ambiguous check wording).
"""

import warnings
from pathlib import Path

import dagster as dg
import pandas as pd

from evalflow.domain.cells import listed
from evalflow.domain.models import Evidence
from evalflow.domain.rollup import PRIORITY_WEIGHTS
from evalflow.errors import InputError
from evalflow.io.evaluation import open_snapshot
from evalflow.io.inputs import load_benchmark, load_manifest
from evalflow.judges.validator import evidence_problem
from evalflow.pipeline.assets.common import benchmark, prepare
from evalflow.pipeline.assets.partitions import evaluations
from evalflow.pipeline.resources import EvalflowResource
from evalflow.repo.guard import RepoState, capture_state, changes

# Checks on partitioned assets need `partitions_def`, a Dagster preview feature; without it a
# check of one run would be evaluated against the asset as a whole. The warning is silenced
# because it is printed on every import; docs/scaling.md ("Dagster preview and beta features")
# says why the feature is used and what upgrading Dagster must re-check.
warnings.filterwarnings("ignore", category=dg.PreviewWarning, message=".*partitions_def.*")


def _cited(item: dict) -> dict:
    """A stored `lines` evidence struct as the fields of `Evidence` (the struct also has the
    fields of a `run` probe, null here)."""
    return {name: item[name] for name in Evidence.model_fields}


@dg.asset_check(
    asset="final_score",
    partitions_def=evaluations,
    blocking=True,
    # From the roll-up's own table: the text said "P2 1" while the roll-up weighs P2 at 0.
    description="Σw equals the PRD's priority weights ("
    + ", ".join(f"{p} {w}" for p, w in PRIORITY_WEIGHTS.items())
    + "); blocks the report",
)
def weights_consistent(
    context: dg.AssetCheckExecutionContext, evalflow: EvalflowResource, final_score: pd.DataFrame
) -> dg.AssetCheckResult:
    bench = benchmark(context, evalflow)  # type: ignore[arg-type]
    expected = sum(PRIORITY_WEIGHTS[s.priority] for s in bench.prd.stories)
    got = int(final_score["sum_w"].iloc[0])
    return dg.AssetCheckResult(
        passed=got == expected,
        metadata={"sum_w": got, "expected_sum_w": expected},
        description=None if got == expected else f"Σw {got} ≠ {expected} from the PRD's priorities",
    )


@dg.asset_check(
    asset="majority_vote",
    partitions_def=evaluations,
    description="Every MET majority cites evidence that still validates at head",
    additional_ins={
        "scoring_run_1": dg.AssetIn(),
        "scoring_run_2": dg.AssetIn(),
        "scoring_run_3": dg.AssetIn(),
    },
)
def met_has_valid_evidence(
    context: dg.AssetCheckExecutionContext,
    evalflow: EvalflowResource,
    majority_vote: pd.DataFrame,
    scoring_run_1: pd.DataFrame,
    scoring_run_2: pd.DataFrame,
    scoring_run_3: pd.DataFrame,
) -> dg.AssetCheckResult:
    snapshot = open_snapshot(prepare(context, evalflow))  # type: ignore[arg-type]
    verdicts = pd.concat([scoring_run_1, scoring_run_2, scoring_run_3], ignore_index=True)
    met = set(majority_vote.loc[majority_vote["majority"] == "MET", "check_id"])
    failing = []
    for check_id in sorted(met):
        rows = verdicts[(verdicts["check_id"] == check_id) & (verdicts["status"] == "MET")]
        valid = any(
            item.get("kind") == "run"  # behavioural evidence: evalflow ran it (acceptance_runs)
            or evidence_problem(Evidence.model_validate(_cited(item)), snapshot) is None
            for raw in rows["evidence"]
            for item in listed(raw)
        )
        if not valid:
            failing.append(check_id)
    return dg.AssetCheckResult(
        passed=not failing,
        metadata={"met_checks": len(met), "without_valid_evidence": ", ".join(failing) or "none"},
    )


@dg.asset_check(
    asset="run_manifest",
    partitions_def=evaluations,
    blocking=True,
    description="Every run of the benchmark used the same frozen baseline hash (comparable)",
)
def one_baseline_per_benchmark(
    context: dg.AssetCheckExecutionContext, evalflow: EvalflowResource, run_manifest: pd.DataFrame
) -> dg.AssetCheckResult:
    warehouse = evalflow.get_warehouse()
    everything = warehouse.read("run_manifest")
    bench = run_manifest["benchmark"].iloc[0]
    mine = str(run_manifest["baseline_sha256"].iloc[0])
    others = everything[
        (everything["benchmark"] == bench)
        & (everything["run_key"] != run_manifest["run_key"].iloc[0])
    ]
    # A run stored with an older hash whose manifest now resolves to this run's baseline was
    # scored before a re-freeze: stale (re-scored when it is next materialised), not a mix.
    mixed = {
        row.run_key: row.baseline_sha256
        for row in others.itertuples()
        if row.baseline_sha256 != mine and _current_baseline_hash(row.manifest_path) != mine
    }
    named = "; ".join(f"{key} uses {sha[:16]}" for key, sha in sorted(mixed.items()))
    return dg.AssetCheckResult(
        passed=not mixed,
        metadata={
            "benchmark": bench,
            "baseline_hashes": ", ".join(sorted({mine[:16], *(h[:16] for h in mixed.values())})),
        },
        description=None
        if not mixed
        else (
            f"benchmark {bench} mixes baseline hashes: this run uses {mine[:16]}; {named}; "
            "its Finals are not comparable — point every manifest of the benchmark at one "
            "frozen baseline (manifest key `baseline`) and re-score the others"
        ),
    )


def _current_baseline_hash(manifest_path: str) -> str | None:
    """The hash of the baseline the manifest points to now (None when it no longer loads)."""
    try:
        loaded = load_manifest(Path(manifest_path))
        return load_benchmark(loaded.resolve(loaded.manifest.baseline)).baseline_sha256
    except InputError:
        return None


@dg.asset_check(
    asset="report",
    partitions_def=evaluations,
    additional_ins={"run_manifest": dg.AssetIn()},
    description="The evaluated repository is exactly as it was before scoring (read-only)",
)
def read_only_guard(
    context: dg.AssetCheckExecutionContext, evalflow: EvalflowResource, run_manifest: pd.DataFrame
) -> dg.AssetCheckResult:
    m = run_manifest.iloc[0]
    before = RepoState(
        head=m["repo_head_before"],
        status=m["repo_status_before"],
        content_sha256=m["repo_content_sha256_before"],
    )
    found = changes(before, capture_state(Path(m["repo"])))
    return dg.AssetCheckResult(
        passed=not found, metadata={"changes": "; ".join(found) or "none", "repo": m["repo"]}
    )


@dg.asset_check(
    asset="majority_vote",
    partitions_def=evaluations,
    description="Warns when the share of borderline checks exceeds `borderline_max`",
)
def borderline_rate(evalflow: EvalflowResource, majority_vote: pd.DataFrame) -> dg.AssetCheckResult:
    rate = float(majority_vote["borderline"].mean()) if len(majority_vote) else 0.0
    return dg.AssetCheckResult(
        passed=rate <= evalflow.borderline_max,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"borderline_rate": rate, "threshold": evalflow.borderline_max},
    )


asset_checks = [
    weights_consistent,
    met_has_valid_evidence,
    one_baseline_per_benchmark,
    read_only_guard,
    borderline_rate,
]
