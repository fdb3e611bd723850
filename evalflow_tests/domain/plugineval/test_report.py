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
        "simulated": None,
    }
    assert r["composite"]["simulated"] is None
    assert r["skill"]["line_count"] == TEXT.count("\n")
    assert (r["threshold"], r["passed"]) == (None, None)
    assert "certification" not in r
    json.dumps(r)  # serialisable


def test_deep_report_keeps_the_simulation_in_its_own_block() -> None:
    r, quick = report("deep"), report("quick")
    mc = r["layers"][2]
    assert mc["name"] == "monte_carlo"
    assert mc["simulated"] is True
    assert mc["measured"] is False  # a simulation is labelled as one, never "measured"
    assert r["confidence_basis"] == ["static"]
    assert "Elo not computed" in r["composite"]["badge_basis"]
    for key in ("score", "badge", "grade", "raw", "measured_weight"):
        assert r["composite"][key] == quick["composite"][key]
    sim = r["composite"]["simulated"]
    assert sim["label"] == "simulated"
    assert sim["backend"] == "offline-tfidf-router"
    assert sim["score"] != r["composite"]["score"]
    rob = r["dimensions"]["robustness"]
    assert rob["score"] is None
    assert rob["layers"]["monte_carlo"] is None  # a simulation never sits among the layers
    assert rob["simulated"]["label"] == "simulated"
    assert rob["simulated"]["monte_carlo"] is not None
    md = render_markdown(r)
    assert "monte_carlo (simulated)" in md
    assert "### Simulated — offline-tfidf-router (not in the composite" in md
    assert f"Simulated composite {sim['score']:.2f}/100" in md


def test_certify_says_what_it_cannot_certify() -> None:
    ev = evaluate_skill(
        files(TEXT), lambda _p: frozenset(), EvalOptions(depth="deep", runs=10), clock=lambda: 0.0
    )
    r = report_dict(ev, certify=True, threshold=70.0)
    cert = r["certification"]
    assert cert["complete"] is False
    assert cert["measured_layers"] == ["static"]
    assert cert["statement"].startswith("cannot certify beyond the measured layers (static)")
    assert "no real Monte Carlo backend" in cert["statement"]
    assert r["threshold"] == 70.0
    assert r["passed"] is (r["composite"]["score"] >= 70.0)
    assert f"Certification: {cert['statement']}" in render_markdown(r)


def test_batch_and_compare_show_the_simulated_composite_apart() -> None:
    a, b = report("deep"), report("quick")
    batch = batch_dict([a, b], threshold=None)
    assert batch["summary"]["simulated"] == {
        "label": "simulated",
        "count": 1,
        "mean_composite": a["composite"]["simulated"]["score"],
    }
    assert batch["summary"]["mean_composite"] == a["composite"]["score"]
    md = render_batch_markdown(batch)
    assert f"{a['composite']['simulated']['score']:.2f} (simulated) |" in md
    assert "Simulated mean composite (not certified)" in md
    cmp = compare_dict(a, b)
    assert cmp["composite"]["delta"] == 0.0
    assert cmp["simulated"]["label"] == "simulated"
    assert cmp["simulated"]["composite"]["a"] == a["composite"]["simulated"]["score"]
    assert cmp["simulated"]["composite"]["delta"] is None
    assert "Simulated composite (not certified): A" in render_compare_markdown(cmp)
    assert compare_dict(b, b)["simulated"] is None


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
