"""`evalflow leaderboard --suite`: framework rows from the warehouse tables, refusals in one
line (exit 2), the runs left out and why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalflow.cli import main
from evalflow_tests.suite_tables import suite_runs, write_suite_file, write_suite_warehouse


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(args)
    out, err = capsys.readouterr()
    return done.value.code or 0, out, err


@pytest.fixture
def suite_file(tmp_path: Path) -> Path:
    return write_suite_file(tmp_path / "_suites")


def test_suite_leaderboard_json_has_framework_rows_and_left_out_runs(
    tmp_path: Path, suite_file: Path, capsys
) -> None:
    write_suite_warehouse(tmp_path / "wh", suite_runs())
    code, out, err = run_cli(
        ["leaderboard", "--suite", str(suite_file), "--json", "--warehouse", str(tmp_path / "wh")],
        capsys,
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["suite"] == "s" and data["judge_id"] == "heuristic" and data["n_samples"] == 1000
    assert [r["framework"] for r in data["rating"]] == ["a", "b", "c"]
    a = data["rating"][0]
    assert (a["n_prds"], a["n_runs"]) == (2, 4)
    assert a["mean_final"] == pytest.approx((0.92 + 0.94) / 2)  # its Finals on each PRD
    assert a["judge_sd"] is None  # no votes in this warehouse: unmeasured, not 0
    assert data["left_out"] == [
        {"benchmark": "p1", "framework": "c", "run_key": "p1.c.r1",
         "reason": "incomplete: 1 check unscored"}
    ]  # fmt: skip
    again = run_cli(
        ["leaderboard", "--suite", str(suite_file), "--json", "--warehouse", str(tmp_path / "wh")],
        capsys,
    )[1]
    assert again == out


def test_suite_leaderboard_markdown_and_plots(tmp_path: Path, suite_file: Path, capsys) -> None:
    write_suite_warehouse(tmp_path / "wh", suite_runs())
    args = ["leaderboard", "--suite", str(suite_file), "--output", "md", "--plots"]
    code, out, err = run_cli([*args, "--warehouse", str(tmp_path / "wh")], capsys)
    assert code == 0, err
    assert "## Suite leaderboard — s (p1, p2)" in out
    assert "| 1 | a |" in out
    for name in ("suite_forest", "suite_final_vs_cost", "suite_prd_heatmap"):
        assert (tmp_path / "wh" / "plots" / "_suites" / "s" / f"{name}.svg").is_file()


def test_mixed_judges_are_refused_in_one_line(tmp_path: Path, suite_file: Path, capsys) -> None:
    write_suite_warehouse(tmp_path / "wh", suite_runs({"p2.b.r1": "anthropic"}))
    code, _, err = run_cli(
        ["leaderboard", "--suite", str(suite_file), "--warehouse", str(tmp_path / "wh")], capsys
    )
    assert code == 2
    assert "different judges" in err and "anthropic" in err and "heuristic" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_pinned_judge_leaves_the_other_runs_out(tmp_path: Path, capsys) -> None:
    suite_file = write_suite_file(
        tmp_path / "_suites", extra="comparability:\n  judge_id: heuristic\n"
    )
    write_suite_warehouse(tmp_path / "wh", suite_runs({"p2.b.r1": "anthropic"}))
    code, out, err = run_cli(
        ["leaderboard", "--suite", str(suite_file), "--json", "--warehouse", str(tmp_path / "wh")],
        capsys,
    )
    assert code == 0, err
    reasons = {r["run_key"]: r["reason"] for r in json.loads(out)["left_out"]}
    assert reasons["p2.b.r1"] == "different key: judge_id anthropic, the suite pins heuristic"


def test_unknown_suite_names_the_known_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    write_suite_file(tmp_path / "_suites", name="known")
    monkeypatch.setenv("EVALFLOW_BENCHMARKS", str(tmp_path))
    write_suite_warehouse(tmp_path / "wh", suite_runs())
    code, _, err = run_cli(
        ["leaderboard", "--suite", "nope", "--warehouse", str(tmp_path / "wh")], capsys
    )
    assert code == 2 and "suite file not found" in err and "known suites: known" in err


def test_the_suite_table_fits_100_columns_unless_wide(
    tmp_path: Path, suite_file: Path, monkeypatch, capsys
) -> None:
    """Issue 27: 13 columns with long headers folded every row; the spreads are --wide."""
    monkeypatch.setenv("COLUMNS", "100")
    write_suite_warehouse(tmp_path / "wh", suite_runs())
    args = ["leaderboard", "--suite", str(suite_file), "--warehouse", str(tmp_path / "wh")]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert max(len(line) for line in out.splitlines()) <= 100, out
    assert "run-to-run SD" not in out and "Left out: p1.c.r1 (p1) — incomplete" in out
    code, wide, _ = run_cli([*args, "--wide"], capsys)
    assert code == 0 and "run-to-run SD" in wide and "$/Final point" in wide
