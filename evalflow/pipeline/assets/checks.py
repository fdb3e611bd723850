"""Asset checks: the invariants a benchmark operator relies on, checked on every run.

Each is evaluated by the `evaluation` step right after the stage that writes its asset
(`assets.evaluation`); a blocking one that fails stops every stage downstream of that asset.

- `weights_consistent` (final_score): Σw equals the priority table applied to the PRD;
- `met_has_valid_evidence` (majority_vote): every MET majority cites evidence that still
  validates against the repository at head;
- `one_baseline_per_benchmark` (run_manifest): every run of a benchmark used the same
  frozen baseline hash, so its Finals are comparable;
- `read_only_guard` (report): the evaluated repository is exactly as it was before scoring;
- `borderline_rate` (majority_vote, warning): the share of borderline checks stays under the
  configured threshold (persistent disagreement means ambiguous check wording).
"""

from collections.abc import Callable
from dataclasses import dataclass
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
from evalflow.pipeline.resources import EvalflowResource
from evalflow.repo.guard import RepoState, capture_state, changes


@dataclass(frozen=True)
class Check:
    """A check of asset `asset`; `compute`'s parameters name the tables it reads."""

    compute: Callable[..., dg.AssetCheckResult]
    asset: str
    description: str
    blocking: bool = False

    @property
    def name(self) -> str:
        return self.compute.__name__


def _cited(item: dict) -> dict:
    """A stored `lines` evidence struct as the fields of `Evidence` (the struct also has the
    fields of a `run` probe, null here)."""
    return {name: item[name] for name in Evidence.model_fields}


def weights_consistent(
    context: dg.AssetExecutionContext, evalflow: EvalflowResource, final_score: pd.DataFrame
) -> dg.AssetCheckResult:
    bench = benchmark(context, evalflow)
    expected = sum(PRIORITY_WEIGHTS[s.priority] for s in bench.prd.stories)
    got = int(final_score["sum_w"].iloc[0])
    return dg.AssetCheckResult(
        passed=got == expected,
        metadata={"sum_w": got, "expected_sum_w": expected},
        description=None if got == expected else f"Σw {got} ≠ {expected} from the PRD's priorities",
    )


def met_has_valid_evidence(
    context: dg.AssetExecutionContext,
    evalflow: EvalflowResource,
    majority_vote: pd.DataFrame,
    scoring_run_1: pd.DataFrame,
    scoring_run_2: pd.DataFrame,
    scoring_run_3: pd.DataFrame,
) -> dg.AssetCheckResult:
    snapshot = open_snapshot(prepare(context, evalflow))
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


def one_baseline_per_benchmark(
    evalflow: EvalflowResource, run_manifest: pd.DataFrame
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


def read_only_guard(run_manifest: pd.DataFrame) -> dg.AssetCheckResult:
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


def borderline_rate(evalflow: EvalflowResource, majority_vote: pd.DataFrame) -> dg.AssetCheckResult:
    rate = float(majority_vote["borderline"].mean()) if len(majority_vote) else 0.0
    return dg.AssetCheckResult(
        passed=rate <= evalflow.borderline_max,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"borderline_rate": rate, "threshold": evalflow.borderline_max},
    )


CHECKS = (
    Check(
        one_baseline_per_benchmark,
        "run_manifest",
        "Every run of the benchmark used the same frozen baseline hash (comparable)",
        blocking=True,
    ),
    Check(
        met_has_valid_evidence,
        "majority_vote",
        "Every MET majority cites evidence that still validates at head",
    ),
    Check(
        borderline_rate,
        "majority_vote",
        "Warns when the share of borderline checks exceeds `borderline_max`",
    ),
    Check(
        weights_consistent,
        "final_score",
        # From the roll-up's own table: the text said "P2 1" while the roll-up weighs P2 at 0.
        "Σw equals the PRD's priority weights ("
        + ", ".join(f"{p} {w}" for p, w in PRIORITY_WEIGHTS.items())
        + "); blocks the report",
        blocking=True,
    ),
    Check(
        read_only_guard,
        "report",
        "The evaluated repository is exactly as it was before scoring (read-only)",
    ),
)
