"""Suite plots: byte-identical reruns, unknown costs named rather than placed at 0."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from evalflow.domain.ranking.suite import rate_suite
from evalflow.reports import plots
from evalflow_tests.domain.ranking.test_suite import _tables


def _report():
    runs, acs = _tables(
        [
            ("p1", "a", "r1", [1.0, 0.5]),
            ("p1", "a", "r2", [0.5, 0.5]),
            ("p1", "b", "r1", [0.0, 0.5]),
            ("p2", "a", "r1", [1.0, 1.0]),
            ("p2", "c", "r1", [0.0, 1.0]),
        ]
    )
    runs.loc[runs["framework"] == "c", "framework_cost_usd"] = None
    runs.loc[0, "adjusted_final"] = 0.38
    return rate_suite(runs, acs, {"p1": 1.0, "p2": 1.0}, n_samples=100)


def test_suite_plots_are_deterministic(tmp_path: Path) -> None:
    report = _report()
    first = plots.suite_plots(report.rating, report.prd_scores, tmp_path / "a", suite="s")
    second = plots.suite_plots(report.rating, report.prd_scores, tmp_path / "b", suite="s")
    assert set(first) == {"suite_forest", "suite_final_vs_cost", "suite_prd_heatmap"}
    for name, files in first.items():
        assert files.png.read_bytes() == second[name].png.read_bytes()
        assert files.svg.read_bytes() == second[name].svg.read_bytes()


def test_unknown_cost_stays_null_and_is_still_plotted(tmp_path: Path) -> None:
    report = _report()
    c = report.rating.set_index("framework").loc["c"]
    assert np.isnan(c["cost_per_run_usd"]) and np.isnan(c["cost_per_final_point_usd"])
    files = plots.suite_pareto_plot(report.rating, tmp_path)
    assert files.png.stat().st_size > 0
    # a framework that did not run a PRD has no cell (blank on the heat map), never 0
    assert len(report.prd_scores) == 4
    assert set(
        zip(report.prd_scores["framework"], report.prd_scores["benchmark"], strict=True)
    ) == {
        ("a", "p1"),
        ("b", "p1"),
        ("a", "p2"),
        ("c", "p2"),
    }
    assert plots.prd_heatmap(report.prd_scores, tmp_path).svg.is_file()
    a = report.rating.set_index("framework").loc["a"]
    assert a["n_adjusted"] == 1 and a["mean_effective_final"] < a["mean_final"]
