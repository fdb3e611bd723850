"""Leaderboard plots: both formats written, byte-identical on rewrite, no dates inside."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from evalflow.domain.ranking.pareto import pareto_frontier
from evalflow.errors import InputError
from evalflow.reports.plots import (
    PlotFiles,
    ac_heatmap,
    markdown_image,
    pareto_plot,
    rating_forest_plot,
    story_heatmap,
)

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

ACS = pd.DataFrame(
    {
        "run_key": ["b.x.r1", "b.x.r1", "b.y.r1", "b.y.r1"],
        "ac_id": ["S1-AC1", "S2-AC1", "S1-AC1", "S2-AC1"],
        "priority": ["P0", "P2", "P0", "P2"],
        "ac_score": [1.0, None, 0.5, None],
    }
)
RUNS = pd.DataFrame({"run_key": ["b.x.r1", "b.y.r1"], "framework": ["x", "y"]})
GATES = pd.DataFrame({"run_key": ["b.y.r1"], "gate": ["unit"], "status": ["fail"]})

PLOTS: dict[str, Callable[[Path], PlotFiles]] = {
    "forest": lambda d: rating_forest_plot(RATING, d),
    "pareto": lambda d: pareto_plot(COSTS, d),
    "heatmap": lambda d: story_heatmap(STORIES, d),
    "ac_heatmap": lambda d: ac_heatmap(ACS, RUNS, GATES, d),
}


def texts(files: PlotFiles) -> list[str]:
    """The texts of an SVG drawn with text as paths: matplotlib keeps each as a comment."""
    return re.findall(r"<!-- (.*?) -->", files.svg.read_text(encoding="utf-8"))


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


def test_final_vs_cost_has_ci_bars_a_legend_and_says_what_it_plots(tmp_path: Path) -> None:
    """Issue 27: no CI bars, labels overlapping where runs cost and score alike, and a y-axis
    "Final" over Adjusted Finals."""
    board = pd.DataFrame(
        {"run_key": ["b.x.r1", "b.y.r1", "b.z.r1"], "final": [0.8, 0.4, 0.79],
         "framework_cost_usd": [1.0, 0.5, 1.01], "judge_cost_usd": [0.1] * 3}
    )  # fmt: skip
    ci = pd.DataFrame(
        {"run_key": ["b.x.r1", "b.y.r1", "b.z.r1"], "final_ci_low": [0.7, 0.75, 0.7],
         "final_ci_high": [0.9, 0.85, 0.85], "adjusted_final": [None, 0.4, None]}
    )  # fmt: skip
    files = pareto_plot(pareto_frontier(board).merge(ci, on="run_key"), tmp_path)
    labels = texts(files)
    assert "Final (Adjusted Final where a gate failed), 95 % CI" in labels
    # every run is named once, in the legend, the adjusted one said so
    assert {"b.x.r1 ★ frontier", "b.y.r1 (Adjusted) ★ frontier", "b.z.r1"} <= set(labels)
    svg = files.svg.read_text(encoding="utf-8")
    bars = 'id="LineCollection_'
    assert svg.count(bars) == 6  # one CI bar per run, in the plot and in its legend
    plain = pareto_plot(pareto_frontier(board), tmp_path / "plain")
    assert plain.svg.read_text(encoding="utf-8").count(bars) == 0


def test_heat_maps_show_priorities_and_failed_gates(tmp_path: Path) -> None:
    ac = texts(ac_heatmap(ACS, RUNS, GATES, tmp_path))
    assert {"x r1", "y r1  gate ✗", "S1-AC1 (P0)", "S2-AC1 (P2, w = 0)"} <= set(ac)
    assert "0.00" not in ac[:6]  # the unmeasured P2 cells stay blank, never 0
    stories = STORIES.assign(priority=["P0", "P1", "P0"])
    story = texts(story_heatmap(stories, tmp_path, failed_gates=["r2"]))
    assert {"S1 (P0)", "S2 (P1)", "r2  gate ✗", "r1"} <= set(story)


def test_a_plot_is_a_markdown_image_for_the_dagster_ui(tmp_path: Path) -> None:
    files = story_heatmap(STORIES, tmp_path)
    image = markdown_image(files.png, "story_heatmap")
    assert image.startswith("![story_heatmap](data:image/png;base64,iVBORw0KGgo")
