"""Unmeasured is never a number, end to end: an all-UNSCORED run is NULL in DuckDB and JSON,
unranked and labelled in the terminal and the report; runs of different judges are ranked in
separate groups; a judge that failed on every call fails the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from evalflow.cli import main
from evalflow_tests.judges.fake_anthropic import TEST_KEY, Fail, FakeAnthropic

CHECKS = ("S1-AC1-I1", "S1-AC1-T1", "S2-AC1-I1", "S2-AC1-T1")


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


def unscored_labels(tmp_path: Path) -> Path:
    path = tmp_path / "nobody-looked.yaml"
    verdicts = [
        {"check_id": c, "status": "UNSCORED", "rationale": "not adjudicated yet"} for c in CHECKS
    ]
    path.write_text(yaml.safe_dump({"verdicts": verdicts}))
    return path


def query(capsys, sql: str) -> list[dict]:
    code, out, err = run_cli(capsys, "query", sql, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.slow  # whole `score`/`materialize` runs through Dagster (tens of CPU-s)
def test_all_unscored_run_is_null_unranked_and_labelled(
    mini: Path, tmp_path: Path, warehouse_dir: Path, capsys
) -> None:
    labels = unscored_labels(tmp_path)
    code, out, err = run_cli(
        capsys, "score", str(mini / "runs" / "partial.yaml"), "--judge", "labels",
        "--labels", str(labels), "--json",
    )  # fmt: skip
    assert code == 0, err  # evaluated: the judge answered, it just judged nothing
    (row,) = json.loads(out)
    assert row["final"] is None and row["band"] is None and row["rank"] is None
    assert (row["final_lower"], row["final_upper"]) == (0.0, 1.0)
    assert not row["ranked"] and row["not_ranked_reason"] == "incomplete: 4 checks unscored"
    assert row["rating"] is None and row["final_ci_low"] is None and row["on_frontier"] is False

    final = query(capsys, "SELECT final, final_value, band, complete, n_unscored FROM final_score")
    assert final == [
        {"final": None, "final_value": None, "band": None, "complete": False, "n_unscored": 4}
    ]
    scores = query(capsys, "SELECT scored, ac_score FROM ac_score UNION ALL "
                   "SELECT scored, story_score FROM story_score")  # fmt: skip
    assert scores == [{"scored": False, "ac_score": None}] * 4
    assert query(capsys, "SELECT count(*) AS n FROM elo_bootstrap") == [{"n": 0}]
    assert query(capsys, "SELECT count(*) AS n FROM final_uncertainty") == [{"n": 0}]

    text = Path(row["report_path"]).read_text()
    assert "**Final undetermined — incomplete**: 4 weighted check(s) not judged" in text
    assert "Bounds 0.00 (UNSCORED as UNMET) – 1.00 (UNSCORED as MET)" in text
    fixes, not_judged = text.split("## Ranked gaps and the fixes that reach 1.00")[1].split(
        "## Not judged — needs a judge or probes"
    )
    assert "None: no scored check was judged UNMET." in fixes
    assert not any(c in fixes for c in CHECKS)
    assert all(c in not_judged.split("## Agreement")[0] for c in CHECKS)
    assert "not judged because: not adjudicated yet" in not_judged
    assert "**Final 0.00**" not in text and "very poor" not in text

    code, out, _ = run_cli(capsys, "leaderboard", "--output", "md")  # md: cells never wrap
    assert code == 0
    row = next(line for line in out.splitlines() if "partial" in line)
    assert row.startswith("| — | partial | r1 | incomplete: 4 checks unscored (Final between 0.00 "
                          "and 1.00) | — | — |"), row  # fmt: skip


@pytest.mark.slow  # whole `score`/`materialize` runs through Dagster (tens of CPU-s)
def test_a_benchmark_is_ranked_within_one_judge_that_the_leaderboard_names(
    mini: Path, tmp_path: Path, warehouse_dir: Path, capsys
) -> None:
    """Runs scored by different judges are ranked within one judge (the one covering most
    runs); a run scored by another judge only is listed, not ranked, and says why."""
    labels = unscored_labels(tmp_path)
    assert run_cli(capsys, "score", str(mini / "runs" / "good.yaml"))[0] == 0
    assert run_cli(capsys, "score", str(mini / "runs" / "partial.yaml"))[0] == 0
    blind = yaml.safe_load((mini / "runs" / "partial.yaml").read_text())
    (mini / "runs" / "blind.yaml").write_text(yaml.safe_dump({**blind, "framework": "blind"}))
    code, _, err = run_cli(
        capsys, "score", str(mini / "runs" / "blind.yaml"), "--judge", "labels",
        "--labels", str(labels),
    )  # fmt: skip
    assert code == 0, err
    board = query(
        capsys,
        "SELECT framework, rank, ranked, not_ranked_reason, ranking_choice FROM leaderboard "
        "ORDER BY rank NULLS LAST, framework",
    )
    assert [(r["framework"], r["rank"]) for r in board] == [
        ("good", 1),
        ("partial", 2),
        ("blind", None),
    ]
    assert {r["ranking_choice"] for r in board} == {"heuristic (most runs: 2 of 3 runs)"}
    assert board[2]["not_ranked_reason"].startswith("other judge: no heuristic result"), board
    manifest = query(
        capsys,
        "SELECT DISTINCT judge_id, judge_prompt_version, comparability_key FROM run_manifest "
        "WHERE judge_id = 'heuristic'",
    )
    assert len(manifest) == 1 and manifest[0]["judge_prompt_version"].startswith("heuristic-")
    code, out, _ = run_cli(capsys, "leaderboard")
    assert code == 0
    flat = " ".join(out.split())  # a title or note may wrap to the table's width
    assert "heuristic (most runs: 2 of 3 runs)" in flat, out


@pytest.mark.slow  # whole `score`/`materialize` runs through Dagster (tens of CPU-s)
def test_a_judge_that_failed_on_every_call_fails_the_command(
    mini: Path, warehouse_dir: Path, monkeypatch, capsys
) -> None:
    refuse = Fail(401, "authentication_error", "invalid x-api-key")
    with FakeAnthropic(lambda turn: refuse) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
        code, _, err = run_cli(
            capsys, "score", str(mini / "runs" / "good.yaml"), "--judge", "anthropic"
        )
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: 1 of 1 run(s) failed") and "HTTP 401" in last, err
    assert "Traceback" not in err and TEST_KEY not in err
    assert not (warehouse_dir / "final_score").exists()  # nothing stored as scored, or ranked
