"""The cost axis of a leaderboard: which runs give the best Final for what they cost.

Total cost = framework_cost_usd (what the framework spent building the implementation) +
judge_cost_usd (what evalflow spent scoring it). A run is on the Pareto frontier when no
other run with a known cost is at least as good on both axes and strictly better on one
(higher Final, lower total cost). Two runs with identical Final and cost are both on it.

A run whose framework or judge cost is unknown (null) is listed with `cost_known = False`
and is never on the frontier: its cost cannot be compared, and treating it as free would
let an unmeasured run dominate measured ones. It also never knocks a known run off.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalflow.errors import InputError

PARETO_INPUT_COLUMNS = ("run_key", "final", "framework_cost_usd", "judge_cost_usd")
PARETO_COLUMNS = (
    "run_key",
    "final",
    "framework_cost_usd",
    "judge_cost_usd",
    "total_cost_usd",
    "cost_known",
    "on_frontier",
)


def pareto_frontier(runs: pd.DataFrame) -> pd.DataFrame:
    """PARETO_COLUMNS per run, frontier first by ascending cost, then the rest."""
    missing = [c for c in PARETO_INPUT_COLUMNS if c not in runs.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}",
            where="cost table",
            fix=f"provide columns {', '.join(PARETO_INPUT_COLUMNS)}",
        )
    frame = runs.loc[:, list(PARETO_INPUT_COLUMNS)].reset_index(drop=True).copy()
    if frame["run_key"].duplicated().any():
        raise InputError("run_key listed twice", where="cost table")
    frame["run_key"] = frame["run_key"].astype(str)
    for column in ("final", "framework_cost_usd", "judge_cost_usd"):
        values = pd.to_numeric(frame[column], errors="coerce").astype(float)
        if (values.isna() & frame[column].notna()).any() or (values < 0).any():
            raise InputError(f"{column} must be a non-negative number or null", where="cost table")
        frame[column] = values
    if frame["final"].isna().any():
        raise InputError("final is null", where="cost table", fix="score every run first")
    frame["total_cost_usd"] = frame["framework_cost_usd"] + frame["judge_cost_usd"]
    frame["cost_known"] = frame["total_cost_usd"].notna()

    known = frame["cost_known"].to_numpy()
    final = frame["final"].to_numpy()
    cost = frame["total_cost_usd"].to_numpy()
    # dominates[j, i]: run j is at least as good on both axes and strictly better on one.
    at_least = (final[:, None] >= final[None, :]) & (cost[:, None] <= cost[None, :])
    strictly = (final[:, None] > final[None, :]) | (cost[:, None] < cost[None, :])
    dominates = at_least & strictly & known[:, None] & known[None, :]
    frame["on_frontier"] = known & ~dominates.any(axis=0)
    order = np.lexsort((frame["run_key"], -frame["final"], frame["total_cost_usd"].fillna(np.inf)))
    frame = frame.iloc[order]
    frame = pd.concat([frame[frame["on_frontier"]], frame[~frame["on_frontier"]]])
    return frame.reset_index(drop=True).loc[:, list(PARETO_COLUMNS)]
