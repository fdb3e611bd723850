"""Stage `side_metrics`: `test_inventory` and the side metrics E, S, R, D of one framework run.

One stage, so the inventory (tree-sitter, every test case with file:line) is built once
and feeds test distribution D and robustness R; elicitation E and scope S read the run's
spec.md/tasks.md. Side metrics are reported beside Final and never folded into it. The
report's E/S/R/D sections are rendered here (`side_metrics_section`) from the same objects.
"""

import dagster as dg
import pandas as pd

from evalflow.domain.side_metrics.markdown import side_metrics_markdown
from evalflow.io.evaluation import open_snapshot
from evalflow.io.side_metrics import conventions_for, feature_inventory, side_metrics_for_run
from evalflow.pipeline.assets.common import prepare, run_output, stamp
from evalflow.pipeline.resources import EvalflowResource
from evalflow.repo.diff_lines import parse_unified_diff
from evalflow.repo.diff_surface import unified_diff
from evalflow.repo.snapshot import WORKTREE
from evalflow.repo.test_inventory import inventory_frame

SIDE_TABLES = (
    "test_tier", "distribution", "robustness", "elicitation_category", "elicitation_addition",
    "elicitation_item", "elicitation_summary", "scope_finding", "scope_summary",
    "sanctioned_requirement",
)  # fmt: skip
SIDE_METRICS_OUTPUTS = ("test_inventory", *SIDE_TABLES, "side_metrics_section")


def side_metrics(
    context: dg.AssetExecutionContext,
    evalflow: EvalflowResource,
    run_manifest: pd.DataFrame,
    majority_vote: pd.DataFrame,
    scoring_run_1: pd.DataFrame,
    scoring_run_2: pd.DataFrame,
    scoring_run_3: pd.DataFrame,
):
    """Test inventory, D (tiers), R (weighted extra tests), E (elicitation), S (scope)."""
    prepared = prepare(context, evalflow)
    bench = prepared.benchmark
    snapshot = open_snapshot(prepared)
    head = WORKTREE if prepared.worktree else prepared.head_sha
    diff_text = unified_diff(prepared.repo, prepared.base_sha, head)
    untracked = [f.path for f in prepared.diff if f.status == "untracked"]
    diff = parse_unified_diff(diff_text)
    if untracked:
        diff = diff.model_copy(update={"new_files": diff.new_files | set(untracked)})
    cases = feature_inventory(snapshot, diff, conventions_for(bench.baseline.test_levels))
    metrics = side_metrics_for_run(
        prd=bench.prd,
        baseline=bench.baseline,
        snapshot=snapshot,
        unified_diff=diff_text,
        spec_dir=prepared.manifest.spec_dir,
        benchmark_dir=bench.baseline_path.parent,
        framework=prepared.manifest.framework,
        votes=majority_vote,
        verdicts=pd.concat([scoring_run_1, scoring_run_2, scoring_run_3], ignore_index=True),
        untracked=untracked,
        cases=cases,
        diff_lines=diff,
    )
    inventory = stamp(inventory_frame(cases), run_manifest)
    yield run_output("test_inventory", inventory, run_manifest)
    frames = metrics.frames()
    for name in SIDE_TABLES:
        yield run_output(name, stamp(frames[name], run_manifest), run_manifest)
    markdown = side_metrics_markdown(metrics)
    section = stamp(pd.DataFrame([{"markdown": markdown}]), run_manifest)
    yield run_output(
        "side_metrics_section",
        section,
        run_manifest,
        {"preview": dg.MetadataValue.md(markdown)},
    )
