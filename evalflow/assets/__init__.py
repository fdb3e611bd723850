"""Dagster assets, one module per stage; each is a thin call into `evalflow.domain`."""

import dagster as dg

from evalflow.assets.checks import asset_checks
from evalflow.assets.common import KINDS
from evalflow.assets.diff_surface import diff_surface
from evalflow.assets.gates import gates
from evalflow.assets.harness import harness_assets
from evalflow.assets.leaderboard import judge_cost, leaderboard
from evalflow.assets.ledger import ledger_entry as _ledger_entry
from evalflow.assets.majority_vote import majority_vote
from evalflow.assets.plugins import plugineval
from evalflow.assets.ranking import elo_bootstrap, final_uncertainty, leaderboard_plots
from evalflow.assets.report import report
from evalflow.assets.rollup import rollup
from evalflow.assets.run_manifest import run_manifest
from evalflow.assets.scoring import scoring_runs
from evalflow.assets.side_metrics import side_metrics
from evalflow.assets.suite import suite_plots, suite_rating

# The ledger records what these assets evaluated, so it sits downstream of them in the lineage.
LEDGER_SOURCES = ["report", "plugin_composite", "retrieval_eval", "judge_calibration"]
(ledger_entry,) = dg.map_asset_specs(
    lambda spec: spec.merge_attributes(deps=LEDGER_SOURCES, kinds=KINDS), [_ledger_entry]
)

per_run_assets = [
    run_manifest,
    diff_surface,
    gates,
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
