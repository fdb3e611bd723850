"""Pareto frontier of Final against total cost, on a hand-checked case."""

from __future__ import annotations

import pandas as pd
import pytest

from evalflow.domain.ranking.pareto import PARETO_COLUMNS, pareto_frontier
from evalflow.errors import InputError


def test_frontier_on_a_hand_case() -> None:
    runs = pd.DataFrame(
        {
            "run_key": ["cheap", "mid", "dominated", "best", "unknown", "twin"],
            "final": [0.50, 0.70, 0.60, 0.90, 0.99, 0.70],
            "framework_cost_usd": [1.0, 2.0, 3.0, 5.0, None, 2.0],
            "judge_cost_usd": [0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
        }
    )
    frontier = pareto_frontier(runs)
    assert list(frontier.columns) == list(PARETO_COLUMNS)
    on = frontier[frontier["on_frontier"]]
    # cheap (1.5, .5) → mid and twin (2.5, .7, identical: neither dominates) → best (5.5, .9).
    assert on["run_key"].tolist() == ["cheap", "mid", "twin", "best"]
    assert on["total_cost_usd"].tolist() == [1.5, 2.5, 2.5, 5.5]
    rest = frontier[~frontier["on_frontier"]].set_index("run_key")
    assert rest.loc["dominated", "cost_known"]
    # The unknown-cost run is listed but never on the frontier (and dominates nothing).
    assert not rest.loc["unknown", "cost_known"]
    assert pd.isna(rest.loc["unknown", "total_cost_usd"])


def test_invalid_cost_tables() -> None:
    with pytest.raises(InputError, match="missing column"):
        pareto_frontier(pd.DataFrame({"run_key": ["a"], "final": [0.5]}))
    bad = pd.DataFrame(
        {"run_key": ["a"], "final": [0.5], "framework_cost_usd": [-1.0], "judge_cost_usd": [0.1]}
    )
    with pytest.raises(InputError, match="non-negative"):
        pareto_frontier(bad)
