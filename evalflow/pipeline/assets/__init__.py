"""Dagster assets: the per-run ones are the stages of one multi-asset (`evaluation`), one
module per stage, each a thin call into `evalflow.domain`; the cross-run and harness ones are
assets of their own."""

import dagster as dg

from evalflow.pipeline.assets.common import KINDS
from evalflow.pipeline.assets.evaluation import evaluation
from evalflow.pipeline.assets.harness import harness_assets
from evalflow.pipeline.assets.leaderboard import judge_cost, leaderboard
from evalflow.pipeline.assets.ledger import ledger_entry as _ledger_entry
from evalflow.pipeline.assets.ranking import elo_bootstrap, final_uncertainty, leaderboard_plots
from evalflow.pipeline.assets.suite import suite_plots, suite_rating

# The ledger records what these assets evaluated, so it sits downstream of them in the lineage.
LEDGER_SOURCES = ["report", "plugin_composite", "retrieval_eval", "judge_calibration"]
(ledger_entry,) = dg.map_asset_specs(
    lambda spec: spec.merge_attributes(deps=LEDGER_SOURCES, kinds=KINDS), [_ledger_entry]
)

per_run_assets = [evaluation]
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

__all__ = ["cross_run_assets", "harness_assets", "per_run_assets"]
