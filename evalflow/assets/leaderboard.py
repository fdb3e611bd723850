"""Asset `leaderboard`: every evaluated run of every benchmark, best first, with confidence.

Rank by Adjusted Final when a gate failed, else Final; ties by Final, then run key. Beside
the score: the Monte Carlo CI of Final, whether the gap to the next run is within judge
noise, the Bradley–Terry rating with its bootstrap CI, the costs and the Pareto frontier.
Runs are only ranked against runs scored with the same baseline hash; the asset check
`one_baseline_per_benchmark` fails when a benchmark mixes hashes.
"""

import dagster as dg
import pandas as pd

from evalflow.assets.common import IO
from evalflow.domain.ranking.pareto import pareto_frontier
from evalflow.storage.tables import columns


def judge_costs(verdicts: pd.DataFrame, run_manifest: pd.DataFrame) -> pd.DataFrame:
    """What scoring cost per run and scoring run, from the verdict rows' usage totals."""
    if verdicts.empty:
        return pd.DataFrame(columns=columns("judge_cost"))
    sums = ["api_calls", "input_tokens", "output_tokens", "cache_read_tokens",
            "cache_write_tokens", "cost_usd", "spent_usd"]  # fmt: skip
    totals = (
        verdicts.groupby(["run_key", "run", "judge_id"], sort=True)
        .agg(checks=("check_id", "size"), **{c: (c, "sum") for c in sums})
        .reset_index()
    )
    totals = totals.merge(run_manifest[["run_key", "benchmark"]], on="run_key", how="inner")
    return totals[columns("judge_cost")]


@dg.asset(io_manager_key=IO, group_name="ranking")
def judge_cost(
    scoring_run_1: pd.DataFrame,
    scoring_run_2: pd.DataFrame,
    scoring_run_3: pd.DataFrame,
    run_manifest: pd.DataFrame,
) -> pd.DataFrame:
    """Judge spend (calls, tokens, dollars) per run and scoring run; sum it per benchmark."""
    verdicts = pd.concat([scoring_run_1, scoring_run_2, scoring_run_3], ignore_index=True)
    return judge_costs(verdicts, run_manifest)


def _ratings(board: pd.DataFrame, elo_bootstrap: pd.DataFrame) -> pd.DataFrame:
    bt = elo_bootstrap[elo_bootstrap["method"] == "bradley_terry"]
    runs_per_framework = board.groupby(["benchmark", "framework"])["run_key"].transform("size")
    player = board["framework"].where(runs_per_framework == 1, board["run_key"])
    keyed = board.assign(player=player)
    rated = keyed.merge(
        bt[["benchmark", "player", "rating", "ci_low", "ci_high", "separability"]],
        on=["benchmark", "player"],
        how="left",
    )
    return rated.rename(columns={"ci_low": "rating_ci_low", "ci_high": "rating_ci_high"})


def _noise_to_next(board: pd.DataFrame, final_pair: pd.DataFrame) -> pd.Series:
    noisy = {
        frozenset((row.a, row.b)): bool(row.within_noise)
        for row in final_pair.itertuples(index=False)
    }
    nxt = board.groupby("benchmark")["run_key"].shift(-1)
    return pd.Series(
        [
            noisy.get(frozenset((run, following))) if isinstance(following, str) else None
            for run, following in zip(board["run_key"], nxt, strict=True)
        ],
        index=board.index,
        dtype="object",
    )


def effective_costs(board: pd.DataFrame) -> pd.DataFrame:
    """Pareto input: the score a run is ranked by (Adjusted Final when a gate failed)."""
    return pd.DataFrame(
        {
            "run_key": board["run_key"],
            "final": board["adjusted_final"].fillna(board["final"]),
            "framework_cost_usd": board["framework_cost_usd"],
            "judge_cost_usd": board["judge_cost_usd"],
        }
    )


def build_leaderboard(
    final_score: pd.DataFrame,
    run_manifest: pd.DataFrame,
    elo_bootstrap: pd.DataFrame,
    final_uncertainty: pd.DataFrame,
    final_pair: pd.DataFrame,
    judge_cost: pd.DataFrame,
) -> pd.DataFrame:
    if final_score.empty:
        return pd.DataFrame(columns=columns("leaderboard"))
    manifest = run_manifest[["run_key", "benchmark", "framework", "framework_cost_usd", "judge_id"]]
    board = final_score.merge(manifest, on="run_key", how="inner")
    board["effective"] = board["adjusted_final"].fillna(board["final"])
    board = board.sort_values(
        ["benchmark", "effective", "final", "run_key"],
        ascending=[True, False, False, True],
        ignore_index=True,
    )
    board["rank"] = board.groupby("benchmark").cumcount() + 1
    ci = final_uncertainty[["run_key", "ci_low", "ci_high"]].rename(
        columns={"ci_low": "final_ci_low", "ci_high": "final_ci_high"}
    )
    board = board.merge(ci, on="run_key", how="left")
    board["within_noise_of_next"] = _noise_to_next(board, final_pair)
    board = _ratings(board, elo_bootstrap)
    spend = judge_cost.groupby("run_key")["cost_usd"].sum()
    board["judge_cost_usd"] = board["run_key"].map(spend).astype(float)
    frontier = pareto_frontier(board[["run_key", "final", "framework_cost_usd", "judge_cost_usd"]])[
        ["run_key", "total_cost_usd", "on_frontier"]
    ]
    board = board.merge(frontier, on="run_key", how="left")
    return board[columns("leaderboard")]


@dg.asset(io_manager_key=IO, group_name="ranking")
def leaderboard(
    final_score: pd.DataFrame,
    run_manifest: pd.DataFrame,
    elo_bootstrap: pd.DataFrame,
    final_uncertainty: pd.DataFrame,
    final_pair: pd.DataFrame,
    judge_cost: pd.DataFrame,
) -> pd.DataFrame:
    """Ranked runs with Final CI, noise flag, rating ± CI, costs and the Pareto frontier."""
    return build_leaderboard(
        final_score, run_manifest, elo_bootstrap, final_uncertainty, final_pair, judge_cost
    )
