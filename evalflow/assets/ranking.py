"""Cross-run ranking assets: ratings with bootstrap CIs, the uncertainty of each Final, plots.

- `elo_bootstrap`: per benchmark, AC-by-AC matches between runs → Bradley–Terry (headline,
  order-independent) and sequential Elo (SPEC §2 constants), 500 seeded bootstrap samples,
  95 % percentile CIs, percentile and separability;
- `final_uncertainty` / `final_pair`: per benchmark, each check redrawn from its k-run vote
  split (seeded) ⇒ a CI on every Final and P(A > B) for every pair of runs;
- `leaderboard_plots`: rating forest plot, Final-vs-cost Pareto plot and per-story heat map
  (PNG and SVG) per benchmark.
All of them depend on every partition and only rank runs that share one baseline hash.
"""

from pathlib import Path

import dagster as dg
import pandas as pd

from evalflow.assets.common import IO
from evalflow.assets.leaderboard import effective_costs
from evalflow.domain.ranking.bootstrap import rate
from evalflow.domain.ranking.final_uncertainty import final_uncertainty as simulate
from evalflow.domain.ranking.matches import form_matches
from evalflow.domain.ranking.pareto import pareto_frontier
from evalflow.domain.rollup import PRIORITY_WEIGHTS
from evalflow.evaluation import checks_frame
from evalflow.inputs import load_benchmark, load_manifest
from evalflow.reports import plots
from evalflow.resources import EvalflowResource
from evalflow.storage.tables import columns

GROUP = "ranking"
RANKING_SEED = 0


def _ac_scores(ac_score: pd.DataFrame, run_manifest: pd.DataFrame) -> pd.DataFrame:
    meta = run_manifest[["run_key", "benchmark", "framework", "baseline_sha256", "prd_sha256"]]
    frame = ac_score[ac_score["scored"]].merge(meta, on="run_key", how="inner")
    return frame.assign(prd_id=frame["prd_sha256"].str[:12])


@dg.asset(io_manager_key=IO, group_name=GROUP)
def elo_bootstrap(ac_score: pd.DataFrame, run_manifest: pd.DataFrame) -> pd.DataFrame:
    """Bradley–Terry and Elo ratings per benchmark with seeded 500-sample bootstrap CIs."""
    parts = []
    for benchmark, scores in _ac_scores(ac_score, run_manifest).groupby("benchmark", sort=True):
        if scores["run_key"].nunique() < 2:
            continue
        report = rate(form_matches(scores), seed=RANKING_SEED)
        parts.append(
            report.rating.assign(
                benchmark=benchmark,
                separability=report.separability,
                n_samples=report.n_samples,
                seed=report.seed,
            )
        )
    if not parts:
        return pd.DataFrame(columns=columns("elo_bootstrap"))
    return pd.concat(parts, ignore_index=True)[columns("elo_bootstrap")]


def _check_votes(
    majority_vote: pd.DataFrame, ac_score: pd.DataFrame, run_manifest: pd.DataFrame
) -> pd.DataFrame:
    """The vote table joined to each check's AC, kind and story weight."""
    frames = []
    for manifest_path, runs in run_manifest.groupby("manifest_path", sort=True):
        loaded = load_manifest(Path(manifest_path))
        bench = load_benchmark(loaded.resolve(loaded.manifest.baseline))
        checks = checks_frame(bench.baseline)[["check_id", "ac_id", "kind"]]
        votes = majority_vote[majority_vote["run_key"].isin(runs["run_key"])]
        frames.append(votes.merge(checks, on="check_id", how="inner"))
    joined = pd.concat(frames, ignore_index=True)
    stories = ac_score[["run_key", "ac_id", "story_id", "priority"]]
    joined = joined.merge(stories, on=["run_key", "ac_id"], how="inner")
    return joined.assign(weight=joined["priority"].map(PRIORITY_WEIGHTS))


@dg.multi_asset(
    group_name=GROUP,
    outs={
        "final_uncertainty": dg.AssetOut(io_manager_key=IO, description="CI of each Final"),
        "final_pair": dg.AssetOut(io_manager_key=IO, description="P(A > B) per pair of runs"),
    },
)
def final_uncertainty(
    majority_vote: pd.DataFrame, ac_score: pd.DataFrame, run_manifest: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Monte Carlo of Final from each check's k-run disagreement (2,000 seeded draws)."""
    votes = _check_votes(majority_vote, ac_score, run_manifest)
    benchmark_of = run_manifest.set_index("run_key")["benchmark"]
    runs, pairs = [], []
    for benchmark, group in votes.groupby(votes["run_key"].map(benchmark_of), sort=True):
        result = simulate(group, seed=RANKING_SEED)
        runs.append(
            result.runs.assign(
                benchmark=benchmark, n_simulations=result.n_simulations, seed=result.seed
            )
        )
        pairs.append(result.pairs.assign(benchmark=benchmark))
    run_frame = pd.concat(runs, ignore_index=True) if runs else pd.DataFrame()
    pair_frame = pd.concat(pairs, ignore_index=True) if pairs else pd.DataFrame()
    return (
        run_frame.reindex(columns=columns("final_uncertainty")),
        pair_frame.reindex(columns=columns("final_pair")),
    )


@dg.asset(io_manager_key=IO, group_name=GROUP)
def leaderboard_plots(
    evalflow: EvalflowResource,
    leaderboard: pd.DataFrame,
    elo_bootstrap: pd.DataFrame,
    story_score: pd.DataFrame,
) -> pd.DataFrame:
    """Forest plot of ratings, Final-vs-cost Pareto plot, per-story heat map (PNG + SVG)."""
    root = evalflow.get_warehouse().workdir / "plots"
    rows = []
    for benchmark, board in leaderboard.groupby("benchmark", sort=True):
        out_dir = root / str(benchmark)
        made = {}
        ratings = elo_bootstrap[elo_bootstrap["benchmark"] == benchmark]
        if not ratings.empty:
            made["rating_forest"] = plots.rating_forest_plot(
                ratings, out_dir, title=f"{benchmark}: Bradley–Terry ratings, 95 % CI"
            )
        made["final_vs_cost"] = plots.pareto_plot(
            pareto_frontier(effective_costs(board)),
            out_dir,
            title=f"{benchmark}: Final (Adjusted when a gate failed) vs cost",
        )
        stories = story_score[story_score["run_key"].isin(board["run_key"]) & story_score["scored"]]
        made["story_heatmap"] = plots.story_heatmap(
            stories, out_dir, title=f"{benchmark}: story scores"
        )
        rows += [
            {"benchmark": benchmark, "plot": name, "png_path": str(f.png), "svg_path": str(f.svg)}
            for name, f in made.items()
        ]
    return pd.DataFrame(rows, columns=["benchmark", "plot", "png_path", "svg_path"])
