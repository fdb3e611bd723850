from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalflow.cli import main


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


def test_freeze_then_check_then_tamper(mini: Path, capsys) -> None:
    baseline = str(mini / "_ac-baseline.yaml")
    code, out, _ = run_cli(capsys, "baseline", "freeze", baseline)
    assert code == 0 and out.startswith("frozen mini: sha256 ")
    rendered = (mini / "_ac-baseline.md").read_text()
    assert "| S1-AC1-I1 | I |" in rendered and "20" not in rendered.split("sha256")[0]
    code, out, _ = run_cli(capsys, "baseline", "check", baseline, "--json")
    summary = json.loads(out)
    assert code == 0 and summary["frozen"] and summary["i_checks"] == 2
    text = (mini / "_ac-baseline.yaml").read_text().replace("greet(name) uses", "greet uses")
    (mini / "_ac-baseline.yaml").write_text(text)
    code, _, err = run_cli(capsys, "baseline", "check", baseline)
    assert code == 2 and "baseline changed since it was frozen" in err
    code, _, _ = run_cli(capsys, "baseline", "freeze", baseline, "--force")
    assert code == 0


def test_render_is_deterministic(mini: Path, capsys) -> None:
    baseline = str(mini / "_ac-baseline.yaml")
    run_cli(capsys, "baseline", "render", baseline)
    first = (mini / "_ac-baseline.md").read_bytes()
    run_cli(capsys, "baseline", "render", baseline)
    assert (mini / "_ac-baseline.md").read_bytes() == first


def test_demo_baseline_is_frozen_and_current(capsys) -> None:
    from evalflow_tests.conftest import DEMO

    code, _, err = run_cli(capsys, "baseline", "check", str(DEMO / "_ac-baseline.yaml"))
    assert code == 0, err


def test_lint_runs_checks_every_probe_in_every_run_and_records_them(
    mini: Path, capsys, tmp_path: Path
) -> None:
    baseline = str(mini / "_ac-baseline.yaml")
    warehouse = str(tmp_path / "wh")
    code, out, _ = run_cli(capsys, "baseline", "lint", baseline, "--runs", "--record",
                           "--warehouse", warehouse)  # fmt: skip
    assert code == 0
    assert "checked 2 run(s): mini.good.r1, mini.partial.r1" in out
    # The partial run lacks the farewell: those probes match in one run only (fitted to it).
    assert "warning: S2-AC1-I1 probe 1: matches only in mini.good.r1 of 2 runs" in out
    assert "S1-AC1-I1 probe 1: matches only" not in out
    from evalflow.io.inputs import load_benchmark

    record = load_benchmark(mini / "_ac-baseline.yaml").baseline.checked_against
    assert record is not None
    assert [(r.run, r.framework) for r in record.runs] == [
        ("mini.good.r1", "good"),
        ("mini.partial.r1", "partial"),
    ]
    assert record.matched["S1-AC1-I1"] == (("mini.good.r1", "mini.partial.r1"),)
    assert record.matched["S2-AC1-I1"] == (("mini.good.r1",),)
    # Recording again replaces the block; a frozen baseline is never rewritten.
    run_cli(capsys, "baseline", "lint", baseline, "--runs", "--record", "--warehouse", warehouse)
    assert (mini / "_ac-baseline.yaml").read_text().count("\nchecked_against:") == 1
    run_cli(capsys, "baseline", "freeze", baseline)
    code, _, err = run_cli(capsys, "baseline", "lint", baseline, "--runs", "--record",
                           "--warehouse", warehouse)  # fmt: skip
    assert code == 2 and "the baseline is frozen" in err


def test_probe_test_all_runs_gives_one_verdict_per_run(mini: Path, capsys, tmp_path: Path) -> None:
    baseline = str(mini / "_ac-baseline.yaml")
    code, out, _ = run_cli(capsys, "probe", "test", baseline, "S2-AC1-I1", "--all-runs",
                           "--warehouse", str(tmp_path / "wh"))  # fmt: skip
    assert code == 0
    assert "mini.good.r1: MET (probe 1: 1 line(s), 1 counted)" in out
    assert "mini.partial.r1: UNMET (probe 1: 0 line(s), 0 counted)" in out
    code, _, err = run_cli(capsys, "probe", "test", baseline, "S2-AC1-I1")
    assert code == 2 and "give either --repo or --all-runs" in err


def test_probe_test_all_runs_without_a_check_tables_the_proposals(
    mini: Path, capsys, tmp_path: Path
) -> None:
    path = mini / "_ac-baseline.yaml"
    bye = "pattern: 'def bye\\(', path_globs: [\"app/**\"]"
    path.write_text(path.read_text().replace(bye, bye + ", proposed: true"))
    code, out, err = run_cli(capsys, "probe", "test", str(path), "--all-runs",
                             "--warehouse", str(tmp_path / "wh"))  # fmt: skip
    assert code == 0, err
    assert "diff surface: each run's diff surface" in out
    assert "run 1: mini.good.r1 at " in out and "run 2: mini.partial.r1 at " in out
    assert "S1-AC1-I1" not in out  # its probe is accepted: only proposals are tabled
    assert "S2-AC1-I1 (I): bye() exists [run 1 MET, run 2 UNMET]" in out
    assert "    run 1: app/core.py:" in out and "    run 2: no match" in out
