"""Leaderboard plots: both formats written, byte-identical on rewrite, no dates inside."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from evalflow.domain.ranking.pareto import pareto_frontier
from evalflow.errors import InputError
from evalflow.reports.plots import PlotFiles, pareto_plot, rating_forest_plot, story_heatmap

RATING = pd.DataFrame(
    {
        "player": ["alpha", "beta", "gamma", "alpha"],
        "method": ["bradley_terry", "bradley_terry", "bradley_terry", "elo"],
        "rating": [1610.0, 1495.0, 1395.0, 1590.0],
        "ci_low": [1560.0, 1440.0, 1300.0, 1500.0],
        "ci_high": [1660.0, 1550.0, 1450.0, 1680.0],
    }
)
COSTS = pareto_frontier(
    pd.DataFrame(
        {
            "run_key": ["r1", "r2", "r3", "r4"],
            "final": [0.8, 0.6, 0.9, 0.7],
            "framework_cost_usd": [1.0, 0.5, None, 2.0],
            "judge_cost_usd": [0.1, 0.1, 0.1, 0.1],
        }
    )
)
STORIES = pd.DataFrame(
    {
        "run_key": ["r1", "r1", "r2"],
        "story_id": ["S1", "S2", "S1"],
        "story_score": [0.83, 0.30, 1.00],
    }
)

PLOTS: dict[str, Callable[[Path], PlotFiles]] = {
    "forest": lambda d: rating_forest_plot(RATING, d),
    "pareto": lambda d: pareto_plot(COSTS, d),
    "heatmap": lambda d: story_heatmap(STORIES, d),
}


@pytest.mark.parametrize("name", sorted(PLOTS))
def test_plot_written_in_both_formats_and_byte_identical(name: str, tmp_path: Path) -> None:
    first = PLOTS[name](tmp_path / "one")
    second = PLOTS[name](tmp_path / "two")
    assert first.png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    svg = first.svg.read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "dc:date" not in svg
    assert first.png.read_bytes() == second.png.read_bytes()
    assert first.svg.read_bytes() == second.svg.read_bytes()
    png, svg_bytes = first.png.read_bytes(), first.svg.read_bytes()
    again = PLOTS[name](tmp_path / "one")
    assert again == first
    assert again.png.read_bytes() == png
    assert again.svg.read_bytes() == svg_bytes


def test_plots_refuse_empty_or_malformed_tables(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no rows for method"):
        rating_forest_plot(RATING, tmp_path, method="glicko")
    with pytest.raises(InputError, match="missing column"):
        story_heatmap(STORIES.drop(columns="story_score"), tmp_path)
    with pytest.raises(InputError, match="nothing to plot"):
        pareto_plot(COSTS.iloc[:0], tmp_path)
