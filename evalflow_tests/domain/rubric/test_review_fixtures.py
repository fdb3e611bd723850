"""Review-fixture verdicts, summary rates, failure categories and dimension scores."""

from __future__ import annotations

from typing import Any

import pytest

from evalflow.domain.rubric.models import Rubric
from evalflow.domain.rubric.review_fixtures import (
    CaseOutput,
    ReviewCase,
    ReviewEvaluation,
    evaluate_review_fixtures,
    review_ledger_entry,
)
from evalflow.errors import InputError


def _case(name: str = "c", **fields: Any) -> ReviewCase:
    return ReviewCase.model_validate(
        {"name": name, "diffFile": f"{name}.diff", "planSkills": [], "mustInclude": [], **fields}
    )


def _finding(message: str = "Finding: x", **fields: Any) -> dict[str, Any]:
    return {"message": message, **fields}


def _run(
    rubric: Rubric, cases: list[ReviewCase], findings: dict[str, list[Any]]
) -> ReviewEvaluation:
    outputs = {name: CaseOutput(findings=items) for name, items in findings.items()}
    return evaluate_review_fixtures(cases, outputs, rubric)


def _scores(evaluation: ReviewEvaluation) -> dict[str, float | None]:
    return {d.dimension_id: d.score for d in evaluation.dimension_scores}


def _categories(evaluation: ReviewEvaluation) -> list[str]:
    return [f.category for case in evaluation.cases for f in case.failures]


# --- guard cases --------------------------------------------------------------------------


def test_guard_case_with_findings_fails_as_false_positive(rubric: Rubric) -> None:
    guard = _case("guard", expectNoFindings=True, maxFindings=0)
    result = _run(rubric, [guard], {"guard": [_finding()]})
    assert not result.cases[0].passed
    assert _categories(result) == ["false_positive"]
    assert result.summary.false_positive_rate == 1.0
    assert _scores(result)["false_positive_rate"] == 1.0


def test_silent_guard_case_passes_with_zero_minimum(rubric: Rubric) -> None:
    result = _run(rubric, [_case("guard", expectNoFindings=True, maxFindings=0)], {})
    assert result.cases[0].passed
    assert result.summary.false_positive_rate == 0.0
    assert _scores(result)["false_positive_rate"] == 0.0


def test_guard_without_max_findings_passes_but_counts_as_false_positive(rubric: Rubric) -> None:
    # SPEC §3 / River Review: only maxFindings makes findings fail a guard case.
    result = _run(rubric, [_case("guard", expectNoFindings=True)], {"guard": [_finding()]})
    assert result.cases[0].passed
    assert result.summary.false_positive_rate == 1.0


# --- mustInclude ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "category"),
    [
        ("Evidence:", "missing_evidence"),
        ("Severity: blocker", "severity_mismatch"),
        ("GitHub Secrets", "missing_context"),
    ],
)
def test_each_missing_token_category(rubric: Rubric, token: str, category: str) -> None:
    case = _case(mustInclude=[token])
    result = _run(rubric, [case], {"c": [_finding("Finding: something else entirely")]})
    assert not result.cases[0].passed
    assert result.cases[0].must_include_misses == [token]
    assert _categories(result) == [category]
    assert _scores(result)["detection_accuracy"] == 0.0


def test_tokens_are_case_sensitive_substrings_of_messages_joined_by_newline(
    rubric: Rubric,
) -> None:
    case = _case(mustInclude=["end\nstart", "Evidence:"])
    findings = [_finding("first message end"), _finding("start of second; evidence: lower")]
    result = _run(rubric, [case], {"c": findings})
    assert result.cases[0].must_include_hits == ["end\nstart"]
    assert result.cases[0].must_include_misses == ["Evidence:"]
    assert _scores(result)["detection_accuracy"] == 0.5


def test_detection_accuracy_counts_tokens_over_all_cases(rubric: Rubric) -> None:
    cases = [_case("a", mustInclude=["x", "y", "z"]), _case("b", mustInclude=["w"])]
    result = _run(rubric, cases, {"a": [_finding("x y")], "b": [_finding("w")]})
    assert _scores(result)["detection_accuracy"] == pytest.approx(3 / 4)


# --- malformed findings and counts ------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "just a string",
        {"severity": "major"},
        {"message": ""},
        {"message": 42},
        _finding(severity="blocker"),
        _finding(phase="review"),
        _finding(line=3),
        _finding(file="a.py", line=0),
    ],
)
def test_malformed_finding_fails_the_case(rubric: Rubric, bad: object) -> None:
    result = _run(rubric, [_case()], {"c": [_finding(), bad]})
    case = result.cases[0]
    assert not case.passed
    assert case.finding_count == 2
    assert any("finding 2 is malformed" in e for e in case.errors)
    assert _categories(result) == ["weak_explanation"]


def test_extra_finding_keys_are_allowed(rubric: Rubric) -> None:
    result = _run(rubric, [_case()], {"c": [_finding(ruleId="r1", confidence="high")]})
    assert result.cases[0].passed


def test_default_min_findings_is_one_for_a_normal_case(rubric: Rubric) -> None:
    result = _run(rubric, [_case()], {})
    assert not result.cases[0].passed
    assert result.cases[0].errors == ["expected at least 1 findings, got 0"]
    assert _categories(result) == ["routing_miss"]


def test_explicit_min_findings(rubric: Rubric) -> None:
    result = _run(rubric, [_case(minFindings=2)], {"c": [_finding()]})
    assert result.cases[0].errors == ["expected at least 2 findings, got 1"]
    assert _categories(result) == ["routing_miss"]
    zero = _run(rubric, [_case(minFindings=0)], {})
    assert zero.cases[0].passed


def test_max_findings_exceeded(rubric: Rubric) -> None:
    result = _run(rubric, [_case(maxFindings=1)], {"c": [_finding(), _finding()]})
    assert result.cases[0].errors == ["too many findings: 2 (maxFindings 1)"]
    assert _categories(result) == ["weak_explanation"]
    assert _scores(result)["token_efficiency"] == 0.5


def test_reviewer_failure_is_a_tool_gap(rubric: Rubric) -> None:
    outputs = {"c": CaseOutput(tool_error="timed out after 5 s")}
    result = evaluate_review_fixtures([_case()], outputs, rubric)
    assert result.cases[0].errors[0] == "reviewer failed: timed out after 5 s"
    assert _categories(result) == ["tool_gap", "routing_miss"]


# --- zero denominators --------------------------------------------------------------------


def test_no_cases_gives_zero_rates_and_null_dimensions(rubric: Rubric) -> None:
    result = _run(rubric, [], {})
    summary = result.summary
    assert (summary.total, summary.pass_rate) == (0, 0.0)
    assert (summary.false_positive_rate, summary.evidence_rate) == (0.0, 0.0)
    assert set(_scores(result).values()) == {None}


def test_zero_findings_and_no_guard_leave_their_dimensions_null(rubric: Rubric) -> None:
    result = _run(rubric, [_case(minFindings=0, mustInclude=[])], {})
    assert result.summary.evidence_rate == 0.0
    assert result.summary.false_positive_rate == 0.0
    scores = _scores(result)
    assert scores["evidence_quality"] is None
    assert scores["false_positive_rate"] is None
    assert scores["detection_accuracy"] is None
    assert scores["token_efficiency"] is None
    assert result.summary.pass_rate == 1.0


# --- evidence, severity, phase ------------------------------------------------------------


def test_evidence_label_variants(rubric: Rubric) -> None:
    findings = [
        _finding(evidence="line 3 assigns a literal"),
        _finding(file="a.py", line=3),
        _finding("Finding: x\nEvidence: `token = '...'`"),
        _finding(file="a.py"),
        _finding(evidence="   "),
    ]
    result = _run(rubric, [_case()], {"c": findings})
    assert result.summary.evidence_rate == pytest.approx(3 / 5)
    assert _scores(result)["evidence_quality"] == pytest.approx(3 / 5)


def test_severity_alignment_only_where_the_case_states_it(rubric: Rubric) -> None:
    cases = [_case("stated", expectSeverity="critical"), _case("silent")]
    findings = {
        "stated": [_finding(severity="critical"), _finding(severity="major"), _finding()],
        "silent": [_finding(severity="info")],
    }
    assert _scores(_run(rubric, cases, findings))["severity_alignment"] == pytest.approx(1 / 3)
    only_silent = {"silent": findings["silent"]}
    assert _scores(_run(rubric, [_case("silent")], only_silent))["severity_alignment"] is None


def test_phase_consistency_is_binary_over_declared_phases(rubric: Rubric) -> None:
    cases = [_case("a", phase="midstream"), _case("b")]
    consistent = {"a": [_finding(phase="midstream"), _finding()], "b": [_finding(phase="upstream")]}
    assert _scores(_run(rubric, cases, consistent))["phase_consistency"] == 1.0
    mixed = {"a": [_finding(phase="midstream"), _finding(phase="downstream")]}
    assert _scores(_run(rubric, cases, mixed))["phase_consistency"] == 0.0
    undeclared = {"a": [_finding()], "b": [_finding(phase="upstream")]}
    assert _scores(_run(rubric, cases, undeclared))["phase_consistency"] is None


def test_actionability_is_pending(rubric: Rubric) -> None:
    result = _run(rubric, [_case()], {"c": [_finding()]})
    [actionability] = [d for d in result.dimension_scores if d.dimension_id == "actionability"]
    assert actionability.score is None
    assert actionability.scoring_method == "manual"


# --- input errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cases", "findings", "message"),
    [
        ([_case("a")], {"b": []}, "findings for unknown cases: b"),
        ([_case("a"), _case("a")], {}, "duplicate case names: a"),
        ([_case("a", phase="review")], {}, "not a rubric phase"),
        ([_case("a", expectSeverity="blocker")], {}, "not a rubric severity label"),
        ([_case("a", minFindings=3, maxFindings=1)], {}, "minFindings 3 > maxFindings 1"),
    ],
)
def test_fixture_input_errors(
    rubric: Rubric, cases: list[ReviewCase], findings: dict[str, list[Any]], message: str
) -> None:
    with pytest.raises(InputError, match=message):
        _run(rubric, cases, findings)


def test_case_rejects_unknown_keys() -> None:
    with pytest.raises(ValueError, match="mustinclude"):
        _case(mustinclude=["x"])


# --- ledger entry -------------------------------------------------------------------------


def test_ledger_entry_of_an_evaluation(rubric: Rubric) -> None:
    cases = [_case("ok", mustInclude=["x"]), _case("guard", expectNoFindings=True, maxFindings=0)]
    result = _run(
        rubric, cases, {"ok": [_finding("x", file="a.py", line=1)], "guard": [_finding()]}
    )
    entry = review_ledger_entry(
        result,
        rubric,
        key="review_eval:r",
        version="0.1.0",
        timestamp="2025-01-31T12:00:00Z",
        commit="c",
        branch="b",
    )
    assert entry.status == "fail"
    assert entry.description == "review_eval:r"
    assert [(r.name, r.passed) for r in entry.results] == [("ok", True), ("guard", False)]
    assert [f.category for f in entry.failures or ()] == ["false_positive"]
    # severity_alignment, phase_consistency (no stated expectation) and actionability are null
    assert entry.scores["coverage"] == pytest.approx(1 - 0.15 - 0.10 - 0.10)
    assert entry.scores["passRate"] == 0.5
    assert {d.dimension_id for d in entry.dimension_scores or ()} == {
        d.id for d in rubric.dimensions
    }
