"""Report rendering: SPEC §2 JSON keys, nulls for unmeasured, "(simulated)" in Markdown."""

from __future__ import annotations

import json

from evalflow.domain.plugineval.evaluate import EvalOptions, evaluate_skill
from evalflow.domain.plugineval.model import DIMENSIONS
from evalflow.domain.plugineval.report import (
    batch_dict,
    compare_dict,
    render_batch_markdown,
    render_compare_markdown,
    render_markdown,
    report_dict,
)
from evalflow_tests.domain.plugineval.skillfactory import files, skill_text

TEXT = skill_text("## Write requirements\nx\n", description="Use when writing specs for apps.")


def report(depth: str) -> dict:
    ev = evaluate_skill(
        files(TEXT), lambda _p: frozenset(), EvalOptions(depth=depth, runs=10), clock=lambda: 0.0
    )
    return report_dict(ev)


def test_json_shape_matches_spec() -> None:
    r = report("standard")
    assert {"score", "badge", "elo"} <= set(r["composite"])
    assert list(r["dimensions"]) == list(DIMENSIONS)
    for d in r["dimensions"].values():
        assert {"score", "grade", "ci_low", "ci_high"} <= set(d)
    static, judge = r["layers"]
    assert {"name", "duration_ms", "anti_patterns"} <= set(static)
    assert {"name", "duration_ms", "judges", "kappa"} <= set(judge)
    assert judge["judges"] == 0
    assert judge["kappa"] is None
    assert r["composite"]["elo"] is None
    # unmeasured is null, never 0
    assert r["dimensions"]["robustness"] == {
        "score": None,
        "grade": None,
        "ci_low": None,
        "ci_high": None,
        "display_grade": None,
        "weight": 0.05,
        "layers": {"static": None, "judge": None, "monte_carlo": None},
    }
    json.dumps(r)  # serialisable


def test_deep_report_labels_the_simulation() -> None:
    r = report("deep")
    mc = r["layers"][2]
    assert mc["name"] == "monte_carlo"
    assert mc["simulated"] is True
    assert r["confidence_basis"] == ["static", "monte_carlo (simulated)"]
    assert "Elo not computed" in r["composite"]["badge_basis"]
    md = render_markdown(r)
    assert "monte_carlo (simulated)" in md
    assert "(simulated) |" in md


def test_batch_and_compare_renderings() -> None:
    a, b = report("quick"), report("quick")
    batch = batch_dict([a, b], threshold=99.0)
    assert batch["summary"]["count"] == 2
    assert len(batch["summary"]["below_threshold"]) == 2
    assert "# PluginEval — 2 skill(s)" in render_batch_markdown(batch)
    cmp = compare_dict(a, b)
    assert cmp["composite"]["delta"] == 0.0
    assert cmp["dimensions"]["robustness"]["delta"] is None
    assert "| triggering_accuracy |" in render_compare_markdown(cmp)
