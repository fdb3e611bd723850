"""The static HTML reports: structure (parsed with html.parser), hostile repository text
rendered inert, no external asset, deterministic; in a slow test, opened in headless
Chromium (issue 27 item 8)."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from evalflow.domain.models import PRD, AcceptanceCriterion, Baseline, Story
from evalflow.reports.html import BoardRun, ci_bar, render_board_html, render_run_html
from evalflow.reports.markdown import ReportInput

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'
CHROMIUM = "/usr/bin/chromium"

PRD_ = PRD(
    title="PRD: Mini",
    stories=(
        Story(id="S1", title="Hello", priority="P0", acs=(AcceptanceCriterion(
            id="S1-AC1", text="hello", line=3),)),
        Story(id="S2", title="Later", priority="P2", acs=(AcceptanceCriterion(
            id="S2-AC1", text="later", line=5),)),
    ),
)  # fmt: skip
BASELINE = Baseline.model_validate(
    {
        "benchmark": "mini",
        "prd": "prd.md",
        "acs": [
            {"id": "S1-AC1", "text": "hello", "checks": [
                {"id": "S1-AC1-I1", "kind": "I", "proposition": f"hello() exists {HOSTILE}"},
                {"id": "S1-AC1-T1", "kind": "T", "proposition": "a test asserts hello",
                 "level": "unit"},
            ]},
            {"id": "S2-AC1", "text": "later", "checks": [
                {"id": "S2-AC1-I1", "kind": "I", "proposition": "later() exists"},
            ]},
        ],
    }
)  # fmt: skip
EVIDENCE = [
    {"kind": "lines", "path": "app.py", "start_line": 3, "end_line": 3,
     "quote": f"x = 1  # {HOSTILE}"}
]  # fmt: skip
SEARCHES = [{"pattern": "<script>", "scope": "diff surface", "hits": 0}]


def _verdicts() -> pd.DataFrame:
    rows = []
    for run in (1, 2, 3):
        rows += [
            {"check_id": "S1-AC1-I1", "run": run, "status": "MET", "judge_id": "heuristic",
             "evidence": EVIDENCE, "evidence_refs": "app.py:3", "searches": [],
             "n_searches": 0, "rationale": "found", "flags": []},
            {"check_id": "S1-AC1-T1", "run": run, "status": "UNMET", "judge_id": "heuristic",
             "evidence": [], "evidence_refs": "", "searches": SEARCHES,
             "n_searches": 1, "rationale": f"no test {HOSTILE}", "flags": []},
            {"check_id": "S2-AC1-I1", "run": run, "status": "UNSCORED", "judge_id": "heuristic",
             "evidence": [], "evidence_refs": "", "searches": [], "n_searches": 0,
             "rationale": "no probe", "flags": []},
        ]  # fmt: skip
    return pd.DataFrame(rows)


def _votes() -> pd.DataFrame:
    return pd.DataFrame(
        {"check_id": ["S1-AC1-I1", "S1-AC1-T1", "S2-AC1-I1"], "met_votes": [3, 0, 0],
         "unmet_votes": [0, 3, 0], "unscored_votes": [0, 0, 3], "k": [3, 3, 3],
         "majority": ["MET", "UNMET", "UNSCORED"], "borderline": [False, False, False]}
    )  # fmt: skip


def _ac() -> pd.DataFrame:
    return pd.DataFrame(
        {"run_key": ["mini.good.r1"] * 2, "ac_id": ["S1-AC1", "S2-AC1"], "story_id": ["S1", "S2"],
         "priority": ["P0", "P2"], "i_met": [1, 0], "i_total": [1, 1], "t_met": [0, 0],
         "t_total": [1, 0], "ac_score": [0.6, None], "n_unscored": [0, 1],
         "scored": [True, False]}
    )  # fmt: skip


def _gates() -> pd.DataFrame:
    return pd.DataFrame(
        [{"run_key": "mini.good.r1", "gate": "unit", "command": "pytest -q", "status": "fail",
          "confirmed": True, "category": "project", "evidence": "1 failed", "exit_code": 1.0,
          "timed_out": False, "notes": "", "reason": None, "probe_command": None,
          "probe_exit_code": None, "base_exit_code": None,
          "output_tail": f"FAILED test_x\nE   {HOSTILE}"}]
    )  # fmt: skip


def report_input() -> ReportInput:
    final = pd.Series(
        {"complete": True, "final": 0.6, "final_value": 0.6, "band": "partial (major gaps)",
         "final_lower": 0.6, "final_upper": 0.6, "gates_failed": True, "adjusted_final": 0.3,
         "adjusted_final_value": 0.3, "n_unscored": 0, "sum_w": 3}
    )  # fmt: skip
    return ReportInput(
        run_key="mini.good.r1", framework="good", benchmark="mini", prd=PRD_, baseline=BASELINE,
        baseline_sha256="a" * 64, fingerprint="b" * 64, base_sha="c" * 40, head_sha="d" * 40,
        diff=pd.DataFrame(), verdicts=_verdicts(), votes=_votes(), ac=_ac(),
        story=pd.DataFrame(), final=final, agreement=pd.Series(dtype=object),
        judge_id="heuristic", judge_deterministic=True, self_preference=False, gates=_gates(),
        side_metrics="",
    )  # fmt: skip


class Outline(HTMLParser):
    """What a browser would build: elements, their attributes, the text of each tag."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def outline(page: str) -> Outline:
    parsed = Outline()
    parsed.feed(page)
    return parsed


def test_the_run_page_has_its_sections_and_no_external_asset() -> None:
    page = render_run_html(report_input())
    parsed = outline(page)
    tags = [t for t, _ in parsed.tags]
    assert tags[:2] == ["html", "head"] and "script" not in tags
    tables = [a.get("class") for t, a in parsed.tags if t == "table"]
    assert tables == ["heat", "checks", "gates"]
    text = "".join(parsed.text)
    assert "Final 0.60" in text and "Adjusted Final 0.30" in text
    assert "S2-AC1-I1" in text and "UNSCORED" in text and "P2" in text
    assert "app.py:3" in text and "FAILED test_x" in text  # evidence line, gate output tail
    # nothing fetched from elsewhere: no src/href leaves the page
    links = [v for _, a in parsed.tags for k, v in a.items() if k in ("src", "href")]
    assert links == []
    assert "http" not in page.replace("http-equiv", "")
    assert render_run_html(report_input()) == page  # deterministic


def test_hostile_repository_text_renders_inert() -> None:
    """A proposition, evidence line, search pattern or gate output holding markup is text."""
    page = render_run_html(report_input())
    parsed = outline(page)
    assert [t for t, _ in parsed.tags if t in ("script", "img")] == []
    assert not any("onerror" in a for _, a in parsed.tags)
    text = "".join(parsed.text)
    assert text.count(HOSTILE) == 4  # proposition, evidence quote, rationale, gate output
    assert "<script>" in text  # the search pattern, shown as written
    board = render_board_html(HOSTILE, HOSTILE, [_board_run(framework=HOSTILE)])
    assert [t for t, _ in outline(board).tags if t in ("script", "img")] == []


def _board_run(**values: object) -> BoardRun:
    board = {"run_key": "mini.good.r1", "framework": "good", "rank": 1, "ranked": True,
             "not_ranked_reason": None, "final": 0.6, "adjusted_final": 0.3,
             "final_ci_low": 0.55, "final_ci_high": 0.65, "rating": 1500.0,
             "rating_ci_low": 1450.0, "rating_ci_high": 1550.0, "total_cost_usd": 1.5,
             **values}  # fmt: skip
    return BoardRun(board=board, ac=_ac(), gates=_gates(), report_html="run.html")


def test_the_board_page_has_ci_bars_and_a_heat_map_with_priorities() -> None:
    page = render_board_html("Leaderboard — mini", "ranked within: …", [_board_run()])
    parsed = outline(page)
    assert [a.get("class") for t, a in parsed.tags if t == "table"] == ["leaderboard", "heat"]
    assert [a.get("class") for t, a in parsed.tags if t == "svg"] == ["ci-bar"]
    cells = [a for t, a in parsed.tags if t == "td" and a.get("class") == "cell"]
    assert [c["title"] for c in cells] == ["mini.good.r1 S1-AC1: 0.60", "mini.good.r1 S2-AC1: —"]
    text = "".join(parsed.text)
    assert "P0" in text and "P2" in text and "✗ gate" in text and "✗ unit" in text
    assert ("a", {"href": "run.html"}) in parsed.tags


def test_a_ci_bar_draws_its_interval_and_point_and_skips_null() -> None:
    bar = ci_bar(0.5, 0.25, 0.75)
    assert 'x1="42.0"' in bar and 'x2="118.0"' in bar and 'cx="80.0"' in bar
    assert "0.50 [0.25, 0.75]" in bar
    assert 'class="ci"' not in ci_bar(0.5, None, None) and "circle" not in ci_bar(None, 0, 1)


def _chromium(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", *args],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip


@pytest.mark.slow
def test_chromium_renders_the_leaderboard_and_a_heat_map_cell(tmp_path: Path) -> None:
    if shutil.which(CHROMIUM) is None:
        print(f"skipped: {CHROMIUM} is absent (Debian: apt-get install -y chromium)")
        pytest.skip(f"{CHROMIUM} is absent (Debian: apt-get install -y chromium)")
    (tmp_path / "run.html").write_text(render_run_html(report_input()), encoding="utf-8")
    board = tmp_path / "board.html"
    board.write_text(render_board_html("Leaderboard — mini", "…", [_board_run()]), "utf-8")
    dom = _chromium("--dump-dom", board.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    parsed = outline(dom.stdout)
    assert any(t == "table" and a.get("class") == "leaderboard" for t, a in parsed.tags)
    assert any(t == "td" and a.get("title") == "mini.good.r1 S1-AC1: 0.60" for t, a in parsed.tags)
    run = _chromium("--dump-dom", (tmp_path / "run.html").as_uri())
    assert "<script>alert" not in run.stdout and "&lt;script&gt;alert" in run.stdout
    shot = tmp_path / "board.png"
    done = _chromium(f"--screenshot={shot}", "--window-size=1200,900", board.as_uri())
    assert done.returncode == 0 and shot.read_bytes().startswith(b"\x89PNG"), done.stderr[-2000:]


def test_the_suite_page_has_rating_bars_and_a_framework_by_prd_heat_map() -> None:
    from evalflow.reports.html import render_suite_html
    from evalflow_tests.reports.test_suite_plots import _report

    report = _report()
    page = render_suite_html("Suite leaderboard — s", "judge heuristic", report.rating,
                             report.prd_scores)  # fmt: skip
    parsed = outline(page)
    assert [a.get("class") for t, a in parsed.tags if t == "table"] == ["leaderboard", "heat"]
    assert len([t for t, _ in parsed.tags if t == "svg"]) == 2 * len(report.rating)
    cells = [a["title"] for t, a in parsed.tags if t == "td" and a.get("class") == "cell"]
    assert "b on p2: —" in cells  # b never ran p2: blank, never 0
    assert "script" not in [t for t, _ in parsed.tags]
