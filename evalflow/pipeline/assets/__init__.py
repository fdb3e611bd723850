"""Dagster assets, one module per stage; each is a thin call into `evalflow.domain`."""

import dagster as dg

from evalflow.pipeline.assets.acceptance import acceptance_runs
from evalflow.pipeline.assets.checks import asset_checks
from evalflow.pipeline.assets.common import KINDS
from evalflow.pipeline.assets.diff_surface import diff_surface
from evalflow.pipeline.assets.gates import gates
from evalflow.pipeline.assets.harness import harness_assets
from evalflow.pipeline.assets.leaderboard import judge_cost, leaderboard
from evalflow.pipeline.assets.ledger import ledger_entry as _ledger_entry
from evalflow.pipeline.assets.majority_vote import majority_vote
from evalflow.pipeline.assets.plugins import plugineval
from evalflow.pipeline.assets.ranking import elo_bootstrap, final_uncertainty, leaderboard_plots
from evalflow.pipeline.assets.report import report
from evalflow.pipeline.assets.rollup import rollup
from evalflow.pipeline.assets.run_manifest import run_manifest
from evalflow.pipeline.assets.scoring import scoring_runs
from evalflow.pipeline.assets.side_metrics import side_metrics
from evalflow.pipeline.assets.suite import suite_plots, suite_rating

# The ledger records what these assets evaluated, so it sits downstream of them in the lineage.
LEDGER_SOURCES = ["report", "plugin_composite", "retrieval_eval", "judge_calibration"]
(ledger_entry,) = dg.map_asset_specs(
    lambda spec: spec.merge_attributes(deps=LEDGER_SOURCES, kinds=KINDS), [_ledger_entry]
)

per_run_assets = [
    run_manifest,
    diff_surface,
    gates,
    acceptance_runs,
    *scoring_runs,
    majority_vote,
    rollup,
    side_metrics,
    report,
    plugineval,
]
cross_run_assets = [
    judge_cost,
    elo_bootstrap,
    final_uncertainty,
    leaderboard,
    leaderboard_plots,
    ledger_entry,
    suite_rating,
    suite_plots,
]

__all__ = ["asset_checks", "cross_run_assets", "harness_assets", "per_run_assets"]
