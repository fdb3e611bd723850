"""Dagster assets, one module per stage; each is a thin call into `evalflow.domain`."""

from evalflow.assets.checks import asset_checks
from evalflow.assets.diff_surface import diff_surface
from evalflow.assets.gates import gates
from evalflow.assets.leaderboard import leaderboard
from evalflow.assets.majority_vote import majority_vote
from evalflow.assets.ranking import elo_bootstrap, final_uncertainty, leaderboard_plots
from evalflow.assets.report import report
from evalflow.assets.rollup import rollup
from evalflow.assets.run_manifest import run_manifest
from evalflow.assets.scoring import scoring_runs

per_run_assets = [run_manifest, diff_surface, gates, *scoring_runs, majority_vote, rollup, report]
cross_run_assets = [elo_bootstrap, final_uncertainty, leaderboard, leaderboard_plots]

__all__ = ["asset_checks", "cross_run_assets", "per_run_assets"]
