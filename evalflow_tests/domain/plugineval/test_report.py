"""Report rendering: SPEC §2 JSON keys, nulls for unmeasured, "(simulated)" in Markdown."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from evalflow.domain.plugineval.composite import display_grade
from evalflow.domain.plugineval.evaluate import EvalOptions, evaluate_skill
from evalflow.domain.plugineval.model import DIMENSIONS, SkillFiles
from evalflow.domain.plugineval.report import (
    batch_dict,
    compare_dict,
    render_batch_html,
    render_batch_markdown,
    render_compare_html,
    render_compare_markdown,
    render_html,
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


def test_composite_dimensions_in_the_public_tools_shape() -> None:
    r = report("quick")
    listed = r["composite"]["dimensions"]
    assert [d["name"] for d in listed] == list(DIMENSIONS)
    trig = listed[0]
    assert set(trig) == {
        "name",
        "weight",
        "score",
        "ci_lower",
        "ci_upper",
        "grade",
        "weighted_score",
    }
    assert trig["score"] == r["dimensions"]["triggering_accuracy"]["score"]
    assert trig["grade"] == r["dimensions"]["triggering_accuracy"]["display_grade"]
    assert trig["weighted_score"] == round(0.25 * trig["score"], 4)
    # The public tool writes 0.0 for an unmeasured dimension; evalflow writes null.
    robustness = next(d for d in listed if d["name"] == "robustness")
    assert (robustness["score"], robustness["grade"], robustness["weighted_score"]) == (
        None,
        None,
        None,
    )


def _skill_report(text: str, plugin: str | None, location: str) -> dict:
    skill = SkillFiles(
        dir_name=location.rsplit("/", 1)[-1],
        skill_md=text.encode(),
        files=(),
        location=location,
        plugin=plugin,
    )
    ev = evaluate_skill(
        skill, lambda _p: frozenset(), EvalOptions(depth="quick"), clock=lambda: 0.0
    )
    return report_dict(ev)


def test_plugin_level_score_is_the_mean_of_its_skills() -> None:
    good = _skill_report(TEXT, "alpha", "alpha/skills/good")
    poor = _skill_report(skill_text("x\n", description=""), "alpha", "alpha/skills/poor")
    lone = _skill_report(TEXT, None, "loose/skill")
    plugins = batch_dict([poor, lone, good], threshold=None)["plugins"]
    assert [p["plugin"] for p in plugins] == ["alpha", None]
    alpha = plugins[0]
    mean = round((good["composite"]["score"] + poor["composite"]["score"]) / 2, 2)
    assert (alpha["skills"], alpha["scored_skills"], alpha["score"]) == (2, 2, mean)
    assert alpha["display_grade"] == display_grade(mean)
    assert alpha["min_composite"] == poor["composite"]["score"]
    assert alpha["weakest_skill"] == "alpha/skills/poor"
    assert alpha["anti_patterns"] == {"EMPTY_DESCRIPTION": 1, "MISSING_TRIGGER": 1}
    assert sum(alpha["badges"].values()) == 2
    tok = alpha["dimensions"]["triggering_accuracy"]
    scores = [r["dimensions"]["triggering_accuracy"]["score"] for r in (good, poor)]
    assert tok["mean"] == round(sum(scores) / 2, 4)
    assert tok["min"] == min(scores)
    assert tok["measured_skills"] == 2
    # Unmeasured stays null (quick depth has no judge), never 0.
    assert alpha["dimensions"]["output_quality"] == {
        "weight": 0.15,
        "mean": None,
        "min": None,
        "measured_skills": 0,
    }
    assert plugins[1]["score"] == lone["composite"]["score"]
    md = render_batch_markdown(batch_dict([poor, lone, good], threshold=None))
    assert "## Plugins" in md
    assert f"| alpha | 2/2 | {mean:.2f} |" in md
    assert f"### Plugin alpha — {mean:.2f}/100" in md
    # Skills outside any plugin: no plugin section at all.
    assert "## Plugins" not in render_batch_markdown(batch_dict([lone], threshold=None))


def test_verbose_markdown_shows_sub_scores_and_evidence() -> None:
    r = _skill_report(skill_text("x\n", description=""), None, "p/s")
    plain, verbose = render_markdown(r), render_markdown(r, verbose=True)
    assert verbose.startswith(plain.rstrip("\n"))
    assert "### Static sub-scores" not in plain
    assert "| frontmatter_quality | " in verbose
    assert "triggering_accuracy |" in verbose
    assert "- EMPTY_DESCRIPTION: description is 0 characters after strip" in verbose


def test_html_reports_parse_to_the_same_tables() -> None:
    a = _skill_report(TEXT, "alpha", "alpha/skills/a")
    b = _skill_report(TEXT, "alpha", "alpha/skills/<b>")
    page = render_batch_html(batch_dict([a, b], threshold=None))
    rows = _table_rows(page)
    assert rows[0] == [
        "skill",
        "composite",
        "grade",
        "badge",
        "Elo",
        "anti-patterns",
        "simulated composite",
    ]
    assert rows[2][0] == "alpha/skills/<b>"  # escaped in the page, text again once parsed
    assert "alpha/skills/&lt;b&gt;" in page
    plugin_row = next(row for row in rows if row[0] == "alpha")
    assert plugin_row[1:3] == ["2/2", f"{a['composite']['score']:.2f}"]
    assert "<title>PluginEval — alpha</title>" in page
    one = _table_rows(render_html(a))
    assert one[0][:3] == ["dimension", "weight", "score"]
    assert len(one) == 1 + len(DIMENSIONS)
    cmp = _table_rows(render_compare_html(compare_dict(a, b)))
    assert cmp[-1][0] == "composite"


def _table_rows(page: str) -> list[list[str]]:
    rows: list[list[str]] = []

    class Rows(HTMLParser):
        cell: list[str] | None = None

        def handle_starttag(self, tag: str, attrs: list) -> None:
            if tag == "tr":
                rows.append([])
            elif tag in ("td", "th"):
                self.cell = []

        def handle_endtag(self, tag: str) -> None:
            if tag in ("td", "th") and self.cell is not None:
                rows[-1].append("".join(self.cell))
                self.cell = None

        def handle_data(self, data: str) -> None:
            if self.cell is not None:
                self.cell.append(data)

    Rows().feed(page)
    return rows
