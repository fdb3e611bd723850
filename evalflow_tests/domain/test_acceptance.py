"""`run` probes: the model's bounds, expectation matching and how a verdict takes runs in."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evalflow.domain.acceptance import (
    AcceptanceRun,
    Observation,
    acceptance_rows,
    command_text,
    decided,
    expectation_text,
    not_run,
    unmet_expectations,
    with_runs,
)
from evalflow.domain.models import (
    Baseline,
    BaselineAC,
    Check,
    Evidence,
    RunEvidence,
    RunExpectation,
    RunProbe,
    Search,
    Verdict,
)


def _probe(**expect: object) -> RunProbe:
    return RunProbe(command=["trialist", "start", "a b@x.io"], expect=expect)


def test_argv_is_quoted_for_the_shell_and_expectation_reads_in_one_line() -> None:
    probe = _probe(exit_code=0, stdout=["created"], json={"trial.days": 14})
    assert command_text(probe) == "trialist start 'a b@x.io'"
    assert expectation_text(probe.expect) == "exit 0; stdout ⊇ 'created'; json trial.days = 14"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"command": "x", "expect": {}}, "at least one expectation"),
        ({"command": "x", "http": {"path": "/"}, "expect": {"status": 200}}, "exactly one"),
        ({"command": "x", "expect": {"status": 200}}, "http run probes only"),
        ({"http": {"path": "/"}, "expect": {"exit_code": 0}}, "command run probes only"),
        ({"http": {"path": "no-slash"}, "expect": {"status": 200}}, "must start with '/'"),
        ({"command": "x", "expect": {"exit_code": 0}, "timeout_s": float("inf")}, "timeout_s"),
        ({"command": "x", "expect": {"exit_code": 0}, "timeout_s": 0}, "timeout_s"),
        ({"command": "x", "expect": {"stdout_matches": ["(a)\\1"]}}, "expect.stdout_matches"),
        ({"command": "x", "expect": {"stdout": ["y" * 5000]}}, "1 to 4096 characters"),
        ({"command": "x", "expect": {"files": [{"path": "../etc/passwd"}]}}, "inside the clone"),
        ({"command": "x", "expect": {"json": {"a..b": 1}}}, "dotted path"),
        ({"command": "   ", "expect": {"exit_code": 0}}, "non-empty command"),
        ({"http": {"path": "/", "save": {"c": "no-group"}}, "expect": {"status": 200}}, "group"),
        ({"http": {"path": "/", "save": {"1c": "(x)"}}, "expect": {"status": 200}}, "save name"),
    ],
)
def test_a_run_probe_is_bounded_and_says_what_is_wrong(fields: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        RunProbe.model_validate(fields)


def test_http_probes_need_the_baselines_serve_command_and_t_checks_need_an_outcome() -> None:
    check = {
        "id": "S1-AC1-I1",
        "kind": "I",
        "proposition": "p",
        "run": [{"http": {"method": "POST", "path": "/trials"}, "expect": {"status": 201}}],
    }
    acs = [{"id": "S1-AC1", "text": "t", "checks": [check]}]
    with pytest.raises(ValidationError, match="needs serve"):
        Baseline.model_validate({"benchmark": "b", "prd": "p.md", "acs": acs})
    served = {"benchmark": "b", "prd": "p.md", "acs": acs, "serve": {"command": "srv"}}
    assert Baseline.model_validate(served).serve.port == 8000
    with pytest.raises(ValidationError, match="T-outcome"):
        Check.model_validate({**check, "kind": "T", "level": "e2e"})
    assert Check.model_validate({**check, "kind": "T", "level": "e2e", "outcome": True}).run


def test_expectations_each_fail_with_their_own_line() -> None:
    expect = RunExpectation.model_validate(
        {
            "exit_code": 0,
            "stdout": ["created"],
            "stderr_matches": ["^warn"],
            "json": {"trial.days": 14, "ok": True, "items.1": "b"},
            "files": [{"path": "out/trial.json", "contains": ["14"]}],
        }
    )
    good = Observation(
        exit_code=0,
        stdout='{"trial": {"days": 14}, "ok": true, "items": ["a", "b"], "m": "created"}',
        stderr="warn: slow",
        files={"out/trial.json": "days=14"},
    )
    assert unmet_expectations(expect, good) == []
    bad = Observation(
        exit_code=1,
        stdout='{"trial": {"days": "14"}, "ok": 1, "items": ["a"]}',
        stderr="",
        files={"out/trial.json": None},
    )
    assert unmet_expectations(expect, bad) == [
        "exit 1, expected 0",
        "stdout lacks 'created'",
        "stderr does not match /^warn/",
        "json items.1 is missing",
        "json ok = 1, expected true",
        'json trial.days = "14", expected 14',
        "file out/trial.json was not written",
    ]
    assert unmet_expectations(expect, Observation(exit_code=0, stdout="created")) == [
        "stderr does not match /^warn/",
        "stdout is not JSON",
        "file out/trial.json was not written",
    ]


def test_http_expectations_read_status_headers_and_body() -> None:
    expect = RunExpectation.model_validate(
        {"status": 429, "headers": {"Retry-After": ""}, "json": {"error": "rate_limited"}}
    )
    seen = Observation(
        status=429, headers={"retry-after": "12"}, stdout='{"error": "rate_limited"}'
    )
    assert unmet_expectations(expect, seen) == []
    assert unmet_expectations(expect, Observation(status=201, stdout="{}")) == [
        "status 201, expected 429",
        "header Retry-After is None, expected to hold ''",
        "json error is missing",
    ]


_CHECK = Check(
    id="S1-AC1-I1",
    kind="I",
    proposition="starts a trial",
    run=(_probe(exit_code=0), _probe(stdout=["created"])),
)
_STATIC = Verdict(
    check_id="S1-AC1-I1",
    run=1,
    status="MET",
    judge_id="heuristic",
    evidence=(Evidence(path="app.py", start_line=3, end_line=3, quote="def start():"),),
    searches=(Search(pattern="def start", scope="diff surface", hits=1),),
    rationale="every probe matched",
)


def _ran(number: int, passed: bool | None) -> AcceptanceRun:
    probe = _CHECK.run[number - 1]
    if passed is None:
        return not_run(_CHECK.id, number, probe, "the dependency setup did not pass")
    seen = Observation(exit_code=0 if passed else 2, stdout="created" if passed else "")
    return decided(_CHECK.id, number, probe, seen, "out")


def test_every_run_passing_is_met_with_behavioural_evidence_beside_file_line() -> None:
    verdict = with_runs(_STATIC, _CHECK, [_ran(2, True), _ran(1, True)])
    assert verdict.status == "MET"
    assert [type(e) for e in verdict.evidence] == [RunEvidence, RunEvidence, Evidence]
    assert verdict.evidence[0].ref() == "run `trialist start 'a b@x.io'` ⇒ exit 0"
    assert len(verdict.searches) == 3


def test_a_failing_run_is_unmet_with_the_runs_recorded_as_searches() -> None:
    unproven = _STATIC.model_copy(update={"status": "UNSCORED", "flags": ("no-portable-proof",)})
    verdict = with_runs(unproven, _CHECK, [_ran(1, True), _ran(2, False)])
    assert verdict.status == "UNMET"
    assert verdict.flags == ("run-failed",)
    assert verdict.evidence == ()
    assert "stdout lacks 'created'" in verdict.rationale
    assert [s.hits for s in verdict.searches] == [1, 1, 0]


def test_a_run_not_run_leaves_the_search_verdict_with_the_reason() -> None:
    unscored = _STATIC.model_copy(update={"status": "UNSCORED", "evidence": ()})
    verdict = with_runs(unscored, _CHECK, [_ran(1, True), _ran(2, None)])
    assert verdict.status == "UNSCORED"
    assert "run probe 2 not run: the dependency setup did not pass" in verdict.rationale
    missing = with_runs(_STATIC, _CHECK, [])
    assert missing.status == "MET"
    assert "no acceptance run recorded" in missing.rationale


def test_rows_come_in_check_and_probe_order() -> None:
    rows = acceptance_rows([_ran(2, True), _ran(1, None)])
    assert [(r["probe"], r["passed"]) for r in rows] == [(1, None), (2, True)]
    assert rows[0]["not_run_reason"] == "the dependency setup did not pass"


def test_a_check_without_run_probes_is_left_alone() -> None:
    plain = BaselineAC(id="A", text="t", checks=(_CHECK.model_copy(update={"run": ()}),))
    assert with_runs(_STATIC, plain.checks[0], [_ran(1, False)]) is _STATIC
