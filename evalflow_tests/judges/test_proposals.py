"""Offline probe proposals against real git repositories: a candidate is proposed only when it
decides its check in at least two runs; `baseline freeze` refuses a proposed probe until it is
accepted, and `--accept-proposals` writes accepted probes in one step."""

from __future__ import annotations

from pathlib import Path

import yaml

from evalflow_tests.cli.test_baseline_cli import run_cli

PRD = """\
# PRD: Trials

## Story S1: Start a trial (P0)

Acceptance criteria:
- S1-AC1: When a trial starts, the system emits a `trial_started` event.
- S1-AC2: When the trial is over, the system emits `trial_ended`.
"""
EMITS = 'def start(bus):\n    bus.emit("trial_started", {})\n'
ENDS = 'def end(bus):\n    bus.emit("trial_ended", {})\n'
MAIN = {"app/main.py": "from app.trials import end, start\n\nstart(BUS)\nend(BUS)\n"}


def test_proposed_only_when_two_runs_agree_and_freeze_waits_for_acceptance(
    make_repo, tmp_path: Path, capsys
) -> None:
    # Two runs emit trial_started; only one emits trial_ended (the other names it otherwise).
    runs = [
        make_repo({}, {"app/trials.py": EMITS + ENDS, **MAIN}),
        make_repo({}, {"app/trials.py": EMITS + ENDS.replace("trial_ended", "over"), **MAIN}),
        make_repo({}, {"app/trials.py": "def start(bus):\n    bus.emit('begin', {})\n", **MAIN}),
    ]
    (tmp_path / "prd.md").write_text(PRD)
    out = tmp_path / "_ac-baseline.yaml"
    args = ["baseline", "draft", str(tmp_path / "prd.md"), "--benchmark", "trials", "--out",
            str(out)] + [a for r in runs for a in ("--repo", str(r))]  # fmt: skip
    code, stdout, err = run_cli(capsys, *args)
    assert code == 0, err
    # S1-AC1-T1 gets the test probe of the name its I-check's probe matched in two runs: no
    # run has a test file, so each answers it UNMET (proven), a decided verdict.
    assert "probes: 2 proposed" in stdout
    draft = yaml.safe_load(out.read_text())
    probes = {c["id"]: c.get("probes", []) for ac in draft["acs"] for c in ac["checks"]}
    assert probes["S1-AC1-I1"] == [
        {"kind": "impl", "pattern": "trial_started", "path_globs": ["**"], "proposed": True}
    ]
    assert probes["S1-AC1-T1"] == [
        {"kind": "test-assert", "pattern": "trial_started", "path_globs": ["**"], "proposed": True}
    ]
    assert probes["S1-AC2-I1"] == []  # matched one run only: not portable, not proposed
    assert probes["S1-AC2-T1"] == []  # nor its test probe, though no run has a test
    assert "1 deciding the check in at least 2 of 3 run(s)" in out.read_text()

    code, _, err = run_cli(capsys, "baseline", "freeze", str(out))
    assert code == 2 and "still carry proposed probes (first: S1-AC1-I1)" in err
    code, _, err = run_cli(capsys, *args, "--force", "--accept-proposals")
    assert code == 0, err
    assert "proposed" not in out.read_text().split("acs:")[1].replace("# probes", "")
    code, stdout, err = run_cli(capsys, "baseline", "freeze", str(out))
    assert code == 0, err
