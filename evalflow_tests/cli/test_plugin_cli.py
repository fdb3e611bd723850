"""`evalflow plugin`: exit codes 0/1/2/3, JSON shape, batch, certify, compare, init."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalflow.cli import plugin as plugin_cli
from evalflow.cli.plugin import plugin
from evalflow.domain.plugineval.judge_layer import JudgeInput, JudgeReport, PromptPrediction

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "skills"
GOOD = DEMO / "speckit" / "spec-writer"
POOR = DEMO / "bmad" / "story-writer"


def invoke(*args: str, obj: dict | None = None):
    return CliRunner().invoke(plugin, [str(a) for a in args], obj=obj)


def test_score_quick_json_exit_0() -> None:
    res = invoke("score", GOOD, "--depth", "quick", "--output", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["composite"]["score"] == 88.73
    assert out["composite"]["elo"] is None
    assert out["layers"][0]["name"] == "static"
    assert out["dimensions"]["output_quality"]["score"] is None


@pytest.mark.parametrize(("threshold", "code"), [("88.73", 0), ("88.74", 1), ("70", 0)])
def test_threshold_exit_codes(threshold: str, code: int) -> None:
    res = invoke("score", GOOD, "--depth", "quick", "--threshold", threshold, "--json")
    assert res.exit_code == code


def test_batch_threshold_exit_1_lists_the_failures() -> None:
    res = invoke("score", DEMO, "--depth", "quick", "--threshold", "70", "--json")
    assert res.exit_code == 1
    out = json.loads(res.stdout)
    assert out["summary"]["count"] == 4
    assert [Path(p).name for p in out["summary"]["below_threshold"]] == [
        "story-writer",
        "task-breakdown",
    ]


@pytest.mark.parametrize(
    "args",
    [
        ("score", "/no/such/skill"),
        ("score", GOOD, "--depth", "extreme"),
        ("score", GOOD / "references" / "spec-template.md"),
        ("score", GOOD, "--runs", "0"),
        ("score", GOOD, "--depth", "deep", "--corpus-dir", "/no/such/corpus"),
        ("compare", GOOD, DEMO),
        ("init", "/no/such/plugins", "--corpus-dir", "/tmp/x"),
    ],
)
def test_input_errors_exit_2(args: tuple) -> None:
    res = invoke(*args)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output


def test_internal_failure_exits_3(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_a, **_k):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(plugin_cli, "evaluate_path", boom)
    monkeypatch.delenv("EVALFLOW_DEBUG", raising=False)
    res = invoke("score", GOOD, "--depth", "quick")
    assert res.exit_code == 3
    assert "internal error: RuntimeError: kaboom" in res.stderr


def test_standard_without_judge_is_unmeasured_not_invented() -> None:
    res = invoke("score", GOOD, "--json")  # default depth: standard
    out = json.loads(res.stdout)
    judge = out["layers"][1]
    assert (judge["name"], judge["measured"], judge["judges"], judge["kappa"]) == (
        "judge",
        False,
        0,
        None,
    )
    assert judge["reason"] == "no LLM judge configured"
    assert out["confidence"] == "estimated"


class PerfectJudge:
    name = "perfect"

    def judge(self, skill: JudgeInput) -> JudgeReport:
        return JudgeReport(
            judge=self.name,
            # a test double that knows evalflow's labels: it predicts them exactly
            predictions=[
                PromptPrediction(prompt=p.text, would_trigger=p.should_trigger)
                for p in skill.prompts
            ],
            orchestration_fitness=0.9,
            output_quality=0.9,
            scope_calibration=0.9,
        )


def test_judges_plug_in_through_the_context_object() -> None:
    res = invoke("score", GOOD, "--json", obj={"plugin_judges": [PerfectJudge()]})
    out = json.loads(res.stdout)
    assert out["layers"][1]["measured"] is True
    assert out["confidence"] == "assessed"
    assert out["dimensions"]["scope_calibration"]["score"] == 0.9
    assert out["layers"][1]["triggering"]["f1"] == 1.0


def test_init_then_certify_with_elo(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    res = invoke("init", DEMO, "--corpus-dir", corpus)
    assert res.exit_code == 0, res.output
    assert "indexed 4 skill(s)" in res.stdout
    res = invoke("certify", GOOD, "--corpus-dir", corpus, "--runs", "20", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["certify"] is True
    assert out["depth"] == "deep"
    assert out["elo"]["computed"] is True
    assert out["elo"]["opponents"] == 3  # itself excluded by content hash
    # A static-score Elo compares stored scores: no position-bias check ran, so null, not 0.
    assert out["elo"]["order_disagreements"] is None
    assert out["composite"]["elo"] == out["elo"]["rating"]
    assert out["layers"][2]["simulated"] is True
    assert out["composite"]["badge_basis"] == "composite and static-score Elo"
    assert out["elo"]["kind"] == "static-score"
    assert out["elo"]["basis"] == "quick depth (static)"
    assert "static-score Elo" in out["elo"]["note"]
    assert json.loads((corpus / "index.json").read_text())["depth"] == "quick"
    md = invoke("certify", GOOD, "--corpus-dir", corpus, "--runs", "20").stdout
    assert "matches, no position-bias check (static) · scored at quick depth" in md


def test_certify_markdown_marks_simulation_and_withholds_the_badge_without_elo() -> None:
    res = invoke("certify", POOR, "--runs", "10")
    assert res.exit_code == 0
    assert "monte_carlo (simulated)" in res.stdout
    # Seed 004: a certify badge needs composite AND Elo; without a corpus it is withheld.
    assert "· — no badge" in res.stdout
    assert "Badge basis: withheld: certify needs composite AND Elo (no Elo: no corpus" in res.stdout
    assert "badge withheld (a badge needs composite AND Elo)" in res.stdout


def test_compare_table_and_json() -> None:
    res = invoke("compare", POOR, GOOD)
    assert res.exit_code == 0
    assert "| triggering_accuracy | 0.25 |" in res.stdout
    res = invoke("compare", POOR, GOOD, "--output", "json")
    out = json.loads(res.stdout)
    assert out["composite"]["delta"] == pytest.approx(88.73 - 23.81)


def test_json_output_is_deterministic_apart_from_durations() -> None:
    def strip(text: str) -> dict:
        data = json.loads(text)
        for layer in data["layers"]:
            layer.pop("duration_ms")
        return data

    a = invoke("score", GOOD, "--depth", "deep", "--runs", "10", "--json").stdout
    b = invoke("score", GOOD, "--depth", "deep", "--runs", "10", "--json").stdout
    assert strip(a) == strip(b)


STUB_MD = "---\nname: stub\ndescription: A tiny stub one\n---\n\n# Stub\n\nDoes things.\n"


def stub(tmp_path: Path) -> Path:
    folder = tmp_path / "stub"
    folder.mkdir()
    (folder / "SKILL.md").write_text(STUB_MD)
    return folder


def test_below_threshold_prints_one_line_and_json_says_so(tmp_path: Path) -> None:
    res = invoke("score", stub(tmp_path), "--depth", "quick", "--threshold", "70", "--json")
    assert res.exit_code == 1
    assert res.stderr == "composite 36.48 < threshold 70\n"
    out = json.loads(res.stdout)
    assert (out["composite"]["score"], out["threshold"], out["passed"]) == (36.48, 70.0, False)
    assert out["skill"]["line_count"] == STUB_MD.count("\n")
    ok = json.loads(invoke("score", GOOD, "--depth", "quick", "--threshold", "70", "--json").stdout)
    assert (ok["threshold"], ok["passed"]) == (70.0, True)


def test_deep_offline_leaves_the_composite_at_the_measured_value(tmp_path: Path) -> None:
    skill = stub(tmp_path)
    quick = json.loads(invoke("score", skill, "--depth", "quick", "--json").stdout)
    deep = json.loads(invoke("score", skill, "--depth", "deep", "--runs", "20", "--json").stdout)
    assert deep["composite"]["score"] == quick["composite"]["score"] == 36.48
    assert deep["composite"]["badge"] == quick["composite"]["badge"]
    assert deep["composite"]["simulated"]["label"] == "simulated"
    assert deep["composite"]["simulated"]["score"] > 50  # the router's 0.8+ triggering


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("corpus")
    assert invoke("init", DEMO, "--corpus-dir", target).exit_code == 0
    return target


CERTIFIED_KEYS = ("score", "badge", "elo", "grade", "display_grade", "raw", "badge_basis")


@pytest.mark.parametrize("seed", range(1, 5))
def test_certify_offline_is_identical_for_every_seed(corpus: Path, seed: int) -> None:
    def certify(s: int) -> tuple[dict, str]:
        res = invoke("certify", GOOD, "--corpus-dir", corpus, "--runs", "20", "--seed", s, "--json")
        assert res.exit_code == 0, res.output
        return json.loads(res.stdout), res.stderr

    ref, stderr = certify(0)
    out, _ = certify(seed)
    assert {k: out["composite"][k] for k in CERTIFIED_KEYS} == {
        k: ref["composite"][k] for k in CERTIFIED_KEYS
    }
    assert out["elo"] == ref["elo"]
    assert out["confidence"] == ref["confidence"] == "estimated"
    assert {d: v["score"] for d, v in out["dimensions"].items()} == {
        d: v["score"] for d, v in ref["dimensions"].items()
    }
    quick = json.loads(invoke("score", GOOD, "--depth", "quick", "--json").stdout)
    assert ref["composite"]["score"] == quick["composite"]["score"]
    assert ref["certification"]["complete"] is False
    assert stderr == ref["certification"]["statement"] + "\n"
    assert "cannot certify beyond the measured layers (static)" in stderr


def test_batch_json_lines_is_one_report_per_skill() -> None:
    res = invoke("score", DEMO, "--depth", "quick", "--output", "json-lines", "--threshold", "70")
    assert res.exit_code == 1
    lines = res.stdout.splitlines()
    assert len(lines) == 4
    objs = [json.loads(line) for line in lines]
    assert all(isinstance(o["composite"]["score"], float) for o in objs)
    below = sorted(Path(o["skill"]["path"]).name for o in objs if o["passed"] is False)
    assert below == ["story-writer", "task-breakdown"]
    errs = res.stderr.splitlines()
    assert len(errs) == 2
    assert all(" < threshold 70" in e and e.split(": ")[1].startswith("composite ") for e in errs)


def test_compare_has_no_json_lines() -> None:
    assert invoke("compare", GOOD, POOR, "--output", "json-lines").exit_code == 2


def test_badges_in_json_are_spelled_as_the_public_tool_and_displayed_in_markdown() -> None:
    res = invoke("score", DEMO, "--depth", "quick", "--output", "json-lines")
    badges = {
        Path(o["skill"]["path"]).name: o["composite"]["badge"]
        for o in map(json.loads, res.stdout.splitlines())
    }
    assert badges == {
        "spec-writer": "gold",
        "plan-writer": "silver",
        "task-breakdown": "no_badge",
        "story-writer": "no_badge",
    }
    md = invoke("score", GOOD, "--depth", "quick").stdout
    assert "★★★★ Gold" in md


PUBLIC_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "plugineval_public"


def test_compat_public_scores_as_the_public_tool_and_says_so() -> None:
    skill = PUBLIC_FIXTURE / "skills" / "security-scanning" / "sast-configuration"
    public = json.loads(
        (
            PUBLIC_FIXTURE / "public_outputs" / "security-scanning_sast-configuration.json"
        ).read_text()
    )
    res = invoke("score", skill, "--depth", "quick", "--compat", "public", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["compat"] == "public"
    assert out["composite"]["score"] == pytest.approx(public["composite"]["score"], abs=0.01)
    own = json.loads(invoke("score", skill, "--depth", "quick", "--json").stdout)
    assert own["compat"] is None
    assert own["composite"]["score"] < out["composite"]["score"] - 5  # its dead ../ links
    md = invoke("score", skill, "--depth", "quick", "--compat", "public").stdout
    assert "--compat public" in md


def test_compat_public_refuses_a_corpus_scored_by_evalflows_rules(tmp_path: Path) -> None:
    res = invoke("score", GOOD, "--compat", "public", "--corpus-dir", tmp_path)
    assert res.exit_code == 2
    assert "--compat public cannot be combined with --corpus-dir" in res.stderr


def test_compat_public_on_certify_and_compare_reproduces_the_public_composite() -> None:
    skill = PUBLIC_FIXTURE / "skills" / "security-scanning" / "sast-configuration"
    public = json.loads(
        (
            PUBLIC_FIXTURE / "public_outputs" / "security-scanning_sast-configuration.json"
        ).read_text()
    )["composite"]["score"]
    other = PUBLIC_FIXTURE / "skills" / "edge" / "cross-links"
    cert = invoke("certify", skill, "--compat", "public", "--json")
    assert cert.exit_code in (0, 1), cert.output
    out = json.loads(cert.stdout)
    assert out["compat"] == "public"
    assert out["certify"] is True
    # Offline, the simulated Monte Carlo layer never enters the certified composite, so
    # certify's composite is the public tool's static composite.
    assert out["composite"]["score"] == pytest.approx(public, abs=0.01)

    cmp = invoke("compare", skill, other, "--compat", "public", "--json")
    assert cmp.exit_code == 0, cmp.output
    both = json.loads(cmp.stdout)
    assert both["compat"] == "public"
    assert both["composite"]["a"] == pytest.approx(public, abs=0.01)
    own = json.loads(invoke("compare", skill, other, "--json").stdout)
    assert own["compat"] is None
    assert own["composite"]["a"] < both["composite"]["a"] - 5
    md = invoke("compare", skill, other, "--compat", "public").stdout
    assert "--compat public" in md


RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e")


def test_control_bytes_from_a_skill_never_reach_the_terminal_raw(tmp_path: Path) -> None:
    # A hostile skill: ESC/BEL in its folder name, an OSC title and a C1 CSI in its YAML name,
    # a bidi override in its heading.
    folder = tmp_path / "evil\x1b[2Jdir\x07"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        '---\nname: "bad\\e]0;pwned\\a\\x9bname"\ndescription: Use when testing things\n---\n'
        "\n# Stub \u202eevil\n\nDoes things.\n"
    )
    runs = [
        invoke("score", folder, "--depth", "quick", "--threshold", "99"),
        invoke("score", tmp_path, "--depth", "quick", "--threshold", "99"),
        invoke("score", folder, "--depth", "quick", "--json"),
        invoke("score", tmp_path, "--depth", "quick", "--output", "json-lines"),
        invoke("certify", tmp_path, "--runs", "5"),
        invoke("compare", folder, GOOD),
    ]
    for res in runs:
        assert res.exit_code in (0, 1), res.output
        for raw in RAW_CONTROLS:
            assert raw not in res.stdout and raw not in res.stderr
    md = runs[0].stdout
    assert md.startswith("## bad\\x1b]0;pwned\\x07\\x9bname — ")
    assert "`" + str(tmp_path) + "/evil\\x1b[2Jdir\\x07` · depth quick" in md
    assert json.loads(runs[2].stdout)["skill"]["name"] == "bad\x1b]0;pwned\x07\x9bname"


def test_default_score_says_the_judge_layer_is_unmeasured_in_one_line() -> None:
    res = invoke("score", GOOD, "--json")
    assert res.exit_code == 0, res.output
    assert res.stderr == (
        "judge layer unmeasured: no LLM judge configured (--judge anthropic measures it; "
        "--depth quick is static only)\n"
    )
    assert json.loads(res.stdout)["layers"][1]["reason"] == "no LLM judge configured"
    batch = invoke("score", DEMO, "--output", "json-lines")
    assert batch.stderr.count("judge layer unmeasured") == 1  # once, not per skill
    assert invoke("score", GOOD, "--depth", "quick").stderr == ""
    res = invoke("compare", POOR, GOOD, "--depth", "standard")
    assert res.exit_code == 0
    assert res.stderr.count("judge layer unmeasured: no LLM judge configured") == 1


# ---- the public tool's flags: --output markdown|html, --verbose, compare's score options ----


def test_output_markdown_is_md_and_verbose_adds_the_detail() -> None:
    md = invoke("score", GOOD, "--depth", "quick")
    markdown = invoke("score", GOOD, "--depth", "quick", "--output", "markdown")
    assert markdown.exit_code == 0, markdown.output
    assert _no_timings(markdown.stdout) == _no_timings(md.stdout)
    verbose = invoke("score", GOOD, "--depth", "quick", "-v").stdout
    assert "### Static sub-scores" in verbose and "### Static sub-scores" not in md.stdout
    assert "### Static sub-scores" in invoke("score", GOOD, "--depth", "quick", "--verbose").stdout


def _no_timings(text: str) -> str:
    return re.sub(r"\(\d+ ms\)", "(ms)", text)


def test_output_html_is_one_page_with_the_dimension_table() -> None:
    res = invoke("score", GOOD, "--depth", "quick", "--output", "html")
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("<!DOCTYPE html>") and res.stdout.endswith("</html>\n")
    assert "<td>triggering_accuracy</td>" in res.stdout


def test_json_has_composite_dimensions() -> None:
    out = json.loads(invoke("score", GOOD, "--depth", "quick", "--json").stdout)
    listed = {d["name"]: d for d in out["composite"]["dimensions"]}
    assert (
        listed["triggering_accuracy"]["score"] == out["dimensions"]["triggering_accuracy"]["score"]
    )
    assert listed["output_quality"]["score"] is None


def _plugin_dir(root: Path) -> Path:
    plugin = root / "demo-plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "demo-plugin"}')
    for skill in (GOOD, POOR):
        target = plugin / "skills" / skill.name
        target.mkdir(parents=True)
        (target / "SKILL.md").write_bytes((skill / "SKILL.md").read_bytes())
    return plugin


def test_a_plugin_directory_gets_a_plugin_level_score(tmp_path: Path) -> None:
    plugin = _plugin_dir(tmp_path)
    out = json.loads(invoke("score", plugin, "--depth", "quick", "--json").stdout)
    (summary,) = out["plugins"]
    scores = [s["composite"]["score"] for s in out["skills"]]
    assert summary["plugin"] == "demo-plugin"
    assert summary["score"] == round(sum(scores) / 2, 2)
    assert summary["min_composite"] == min(scores)
    md = invoke("score", plugin, "--depth", "quick").stdout
    assert "## Plugins" in md and "| demo-plugin | 2/2 |" in md


@pytest.mark.slow
def test_the_plugin_html_report_renders_its_tables_in_chromium(tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        pytest.skip("chromium is not installed (the CI image installs it: .ci/run)")
    page = tmp_path / "report.html"
    res = invoke("score", _plugin_dir(tmp_path), "--depth", "quick", "--output", "html")
    assert res.exit_code == 0, res.output
    page.write_text(res.stdout, encoding="utf-8")
    run = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    dom = run.stdout
    # The browser built the tables: the DOM it serialises has the tbody it inserts and every
    # row of the plugin table and the skills' dimension tables.
    assert dom.count("<table>") == out_tables(res.stdout)
    assert '<td>demo-plugin</td><td class="r">2/2</td>' in dom
    assert "<td>triggering_accuracy</td>" in dom
    assert "<script" not in dom


def out_tables(page: str) -> int:
    return page.count("<table>")


def test_compare_threshold_means_what_it_means_for_score() -> None:
    res = invoke("compare", POOR, GOOD, "--threshold", "50", "--json")
    assert res.exit_code == 1, res.output
    out = json.loads(res.stdout)
    assert (out["a"]["passed"], out["b"]["passed"]) == (False, True)
    assert res.stderr.strip().splitlines() == ["A: composite 23.81 < threshold 50"]
    assert invoke("compare", POOR, GOOD, "--threshold", "20").exit_code == 0


def test_compare_runs_and_corpus_dir_score_both_sides_like_score(corpus: Path) -> None:
    assert invoke("compare", POOR, GOOD, "--runs", "0").exit_code == 2
    res = invoke(
        "compare", POOR, GOOD, "--depth", "deep", "--runs", "20", "--corpus-dir", corpus, "--json"
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    alone = json.loads(
        invoke(
            "score", GOOD, "--depth", "deep", "--runs", "20", "--corpus-dir", corpus, "--json"
        ).stdout
    )
    assert out["b"]["elo"] == alone["elo"]
    assert out["b"]["layers"][2]["runs"] == 20
    assert out["a"]["elo"]["computed"] is True


def test_compare_verbose_adds_both_skills_sections() -> None:
    plain = invoke("compare", POOR, GOOD).stdout
    verbose = invoke("compare", POOR, GOOD, "--verbose").stdout
    assert verbose.startswith(plain.rstrip("\n"))
    assert verbose.count("### Static sub-scores") == 2 and "Static sub-scores" not in plain
