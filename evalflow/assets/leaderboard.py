"""Asset `leaderboard`: every evaluated run of every benchmark, best Final first.

Runs are only ranked against runs scored with the same baseline hash; the asset check
`one_baseline_per_benchmark` fails when a benchmark mixes hashes.
"""

import dagster as dg
import pandas as pd

from evalflow.assets.common import IO

LEADERBOARD_COLUMNS = [
    "benchmark",
    "rank",
    "framework",
    "run_key",
    "final",
    "adjusted_final",
    "band",
    "complete",
    "final_lower",
    "final_upper",
    "n_borderline",
    "fleiss_kappa",
    "framework_cost_usd",
    "judge_id",
    "baseline_sha256",
    "fingerprint",
]


def build_leaderboard(final_score: pd.DataFrame, run_manifest: pd.DataFrame) -> pd.DataFrame:
    if final_score.empty:
        return pd.DataFrame(columns=LEADERBOARD_COLUMNS)
    manifest = run_manifest[["run_key", "benchmark", "framework", "framework_cost_usd", "judge_id"]]
    board = final_score.merge(manifest, on="run_key", how="inner")
    board["effective"] = board["adjusted_final"].fillna(board["final"])
    board = board.sort_values(
        ["benchmark", "effective", "final", "run_key"],
        ascending=[True, False, False, True],
        ignore_index=True,
    )
    board["rank"] = board.groupby("benchmark").cumcount() + 1
    return board[LEADERBOARD_COLUMNS]


@dg.asset(io_manager_key=IO, group_name="ranking")
def leaderboard(final_score: pd.DataFrame, run_manifest: pd.DataFrame) -> pd.DataFrame:
    """Rank by Adjusted Final when a gate failed, else Final; ties by Final, then run key."""
    return build_leaderboard(final_score, run_manifest)
