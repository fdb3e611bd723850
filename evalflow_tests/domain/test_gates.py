"""The gate result model and the rules deciding a gate (pure; no process is run here)."""

from __future__ import annotations

import pandas as pd
import pytest
from pydantic import ValidationError

from evalflow.domain.gates import (
    GATE_RESULT_COLUMNS,
    NO_COMMAND_REASON,
    GateResult,
    ProbeAttempt,
    confirmed_failure,
    failed_by_run,
    gates_frame,
    judge_against_base,
    mention_pattern,
    mentioned_paths,
    no_command_result,
    outcome_status,
)

PROBE = ProbeAttempt(command="command -v docker", output="docker: not found", exit_code=1)


def _fail(exit_code: int = 1, *, timed_out: bool = False) -> GateResult:
    return GateResult(
        gate="unit", command="pytest", status="fail", exit_code=exit_code, timed_out=timed_out
    )


def test_not_run_without_a_probe_cannot_be_built() -> None:
    with pytest.raises(ValidationError, match="probe"):
        GateResult(gate="e2e", command="docker compose up", status="not-run", reason="no docker")


def test_not_run_without_a_reason_cannot_be_built() -> None:
    with pytest.raises(ValidationError, match="reason"):
        GateResult(gate="e2e", command="x", status="not-run", reason="  ", probe=PROBE)


def test_not_run_with_a_probe_and_a_reason_is_valid() -> None:
    result = GateResult(gate="e2e", command="x", status="not-run", reason="no docker", probe=PROBE)
    assert not result.confirmed


@pytest.mark.parametrize(
    ("status", "exit_code", "timed_out"),
    [("pass", 1, False), ("pass", 0, True), ("fail", 0, False), ("pass", None, False)],
)
def test_status_must_match_the_run(status: str, exit_code: int | None, timed_out: bool) -> None:
    with pytest.raises(ValidationError):
        GateResult(
            gate="lint", command="ruff", status=status, exit_code=exit_code, timed_out=timed_out
        )


def test_a_not_run_gate_cannot_carry_an_exit_code_and_a_run_gate_no_probe() -> None:
    with pytest.raises(ValidationError, match="no exit code"):
        GateResult(
            gate="lint", command="ruff", status="not-run", reason="r", probe=PROBE, exit_code=1
        )
    with pytest.raises(ValidationError, match="only a not-run"):
        GateResult(gate="lint", command="ruff", status="pass", exit_code=0, probe=PROBE)


def test_pre_existing_needs_the_failing_base_run() -> None:
    with pytest.raises(ValidationError, match="base"):
        GateResult(gate="unit", command="pytest", status="pre-existing", exit_code=1)
    with pytest.raises(ValidationError, match="base"):
        GateResult(
            gate="unit", command="pytest", status="pre-existing", exit_code=1, base_exit_code=0
        )


def test_missing_manifest_command_is_a_probed_not_run() -> None:
    result = no_command_result("lint")
    assert result.status == "not-run"
    assert result.reason == NO_COMMAND_REASON
    assert result.probe is not None
    assert result.probe.command == "read gates.lint from the run manifest"
    assert "not set" in result.probe.output


def test_outcome_status() -> None:
    assert outcome_status(0, False) == "pass"
    assert outcome_status(2, False) == "fail"
    assert outcome_status(0, True) == "fail"


def test_mentions_match_paths_inside_absolute_paths_and_dotted_modules() -> None:
    pattern = mention_pattern(["trialist/proration.py", "trialist/__init__.py", "README.md"])
    text = (
        "/tmp/x/clone/trialist/proration.py:12: AssertionError\n"
        "ImportError: cannot import name 'f' from trialist.proration\n"
        "mytrialist/proration.py is unrelated; so is trialist/proration.pyx\n"
    )
    assert mentioned_paths(text, pattern) == {"trialist/proration.py", "trialist.proration"}
    assert mentioned_paths("import trialist", pattern) == set()
    assert mentioned_paths("see README.md.", pattern) == {"README.md"}
    assert mention_pattern([]) is None
    assert mentioned_paths("anything", None) == set()


def test_base_passing_means_the_change_broke_it() -> None:
    result = judge_against_base(_fail(), base_exit_code=0, base_timed_out=False, mentioned=[])
    assert result.status == "fail"
    assert result.base_exit_code == 0
    assert "passes on the base commit" in result.notes[-1]


def test_failing_on_base_differently_stays_confirmed() -> None:
    result = judge_against_base(_fail(1), base_exit_code=4, base_timed_out=False, mentioned=[])
    assert result.status == "fail"
    assert "differently" in result.notes[-1]


def test_failing_output_naming_the_diff_stays_confirmed() -> None:
    result = judge_against_base(
        _fail(), base_exit_code=1, base_timed_out=False, mentioned=["src/a.py"]
    )
    assert result.status == "fail"
    assert "src/a.py" in result.notes[-1]


def test_same_failure_on_base_outside_the_diff_is_pre_existing() -> None:
    result = judge_against_base(_fail(), base_exit_code=1, base_timed_out=False, mentioned=[])
    assert result.status == "pre-existing"
    assert result.base_exit_code == 1
    assert result.base_timed_out is False
    assert "pre-existing" in result.notes[-1]
    assert not confirmed_failure([result])


def test_only_a_failing_gate_is_judged_against_base() -> None:
    passed = GateResult(gate="unit", command="pytest", status="pass", exit_code=0)
    with pytest.raises(ValueError, match="only a failing gate"):
        judge_against_base(passed, base_exit_code=1, base_timed_out=False, mentioned=[])


def test_confirmed_failure_counts_fail_only() -> None:
    not_run = no_command_result("e2e")
    passed = GateResult(gate="build", command="make", status="pass", exit_code=0)
    assert not confirmed_failure([not_run, passed])
    assert confirmed_failure([not_run, passed, _fail()])
    assert not confirmed_failure([])


def test_gates_frame_shape_and_types() -> None:
    results = [
        GateResult(gate="build", command="make", status="pass", exit_code=0, duration_s=1.5),
        no_command_result("lint"),
        judge_against_base(_fail(), base_exit_code=1, base_timed_out=False, mentioned=[]),
        _fail(-9, timed_out=True),
    ]
    frame = gates_frame("b.f.r1", results)
    assert list(frame.columns) == GATE_RESULT_COLUMNS
    assert frame["status"].tolist() == ["pass", "not-run", "pre-existing", "fail"]
    assert frame["confirmed"].tolist() == [False, False, False, True]
    assert str(frame["exit_code"].dtype) == "Int64"
    assert pd.isna(frame["exit_code"].iloc[1])
    assert frame["probe_command"].iloc[1] == "read gates.lint from the run manifest"
    assert pd.isna(frame["command"].iloc[1])
    assert frame["base_exit_code"].iloc[2] == 1
    assert frame["timed_out"].tolist() == [False, False, False, True]
    assert failed_by_run(frame) == {"b.f.r1": True}
    assert failed_by_run(gates_frame("x", [])) == {}
