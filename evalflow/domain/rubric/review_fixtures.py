"""Scoring a code reviewer against River Review fixtures (`cases.json`), SPEC §3.

A case is a diff plus expectations; the reviewer's findings for it are judged here. Inputs are
already loaded (`evalflow.io.review` reads the files or runs the reviewer command).

Case format (River Review's, camelCase): `{name, phase?, diffFile, planSkills[], mustInclude[],
expectNoFindings?, minFindings?, maxFindings?}` plus one evalflow extension, `expectSeverity?`
(the severity label every finding of the case should carry). Unknown keys are rejected so a
typo cannot silently disable a check.

Finding format: `{message, severity?, phase?, evidence?, file?, line?}`; `severity` and `phase`
must be labels of the rubric's `severity` / `phase` sections, `line` (≥ 1) needs `file`; other
keys are ignored. A finding that is not such an object is *malformed*: it counts toward the
finding total (minFindings, maxFindings, the evidence denominator) but contributes no message.

A finding carries an *evidence label* when it has a non-empty `evidence`, a `file` + `line`
reference, or River Review's textual label `Evidence:` in its message.

Pass/fail (SPEC §3, River Review's evaluator): a case fails when a finding is malformed, when
findings < minFindings (default 0 for a guard case, i.e. `expectNoFindings: true`, else 1), when
findings > maxFindings (if given), or when any mustInclude token is not a case-sensitive
substring of the valid findings' messages joined by "\\n". A reviewer command that crashed,
timed out or printed something other than a findings array fails its case too (`tool_gap`).
As in River Review, a guard case without `maxFindings: 0` passes with findings — it still
counts in falsePositiveRate.

Failure categories of a failing case (River Review's mapping, plus two evalflow additions):

| check that failed                          | category                                   |
|--------------------------------------------|--------------------------------------------|
| reviewer command failed (evalflow)         | tool_gap                                   |
| malformed finding (evalflow)               | weak_explanation                           |
| guard case produced findings               | false_positive                             |
| fewer findings than minFindings            | routing_miss                               |
| more findings than maxFindings (non-guard) | weak_explanation                           |
| missing token `Evidence:`                  | missing_evidence                           |
| missing token containing `Severity:`       | severity_mismatch                          |
| any other missing token                    | missing_context                            |

Dimension scores (null where no case states the expectation a dimension needs; the weighted
total renormalises over the rest):
- detection_accuracy (ratio) = mustInclude tokens found / mustInclude tokens, over all cases;
- false_positive_rate (ratio) = guard cases with ≥ 1 finding / guard cases;
- evidence_quality (ratio) = findings with an evidence label / findings;
- severity_alignment (ratio) = findings whose severity equals their case's `expectSeverity` /
  findings of cases stating `expectSeverity`;
- phase_consistency (binary) = 1 when every finding that declares a phase, in a case that
  states one, declares the case's phase, else 0;
- token_efficiency (ratio) = mean over cases stating maxFindings of min(1, maxFindings / findings)
  (1 for a case without findings);
- actionability (manual) = null until a human score is recorded.
The summary rates (passRate, falsePositiveRate, evidenceRate) follow River Review and are 0
when their denominator is 0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from evalflow.domain.rubric.models import (
    DimensionScore,
    Failure,
    FailureCategory,
    LedgerEntry,
    ResultItem,
    Rubric,
)
from evalflow.domain.rubric.scoring import weighted_total
from evalflow.errors import InputError

EVIDENCE_LABEL = "Evidence:"
SEVERITY_LABEL = "Severity:"
GUARD_MIN_FINDINGS = 0
DEFAULT_MIN_FINDINGS = 1
EVAL_TYPE = "fixtures"

_CAMEL = ConfigDict(alias_generator=to_camel, validate_by_alias=True, validate_by_name=True)


class ReviewCase(BaseModel):
    """One fixture of `cases.json`."""

    model_config = ConfigDict(**_CAMEL, extra="forbid", frozen=True, strict=True)

    name: str = Field(min_length=1)
    phase: str | None = None
    diff_file: str = Field(min_length=1)
    plan_skills: list[str] = Field(default_factory=list)
    must_include: list[str] = Field(default_factory=list)
    expect_no_findings: bool = False
    min_findings: int | None = Field(default=None, ge=0)
    max_findings: int | None = Field(default=None, ge=0)
    expect_severity: str | None = None

    @property
    def is_guard(self) -> bool:
        """A guard case expects the reviewer to stay silent."""
        return self.expect_no_findings

    @property
    def required_findings(self) -> int:
        """minFindings, defaulting to 0 for a guard case and 1 otherwise."""
        if self.min_findings is not None:
            return self.min_findings
        return GUARD_MIN_FINDINGS if self.is_guard else DEFAULT_MIN_FINDINGS


class Finding(BaseModel):
    """One finding a reviewer reported for a case."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)

    message: str = Field(min_length=1)
    severity: str | None = None
    phase: str | None = None
    evidence: str | None = None
    file: str | None = None
    line: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _line_needs_file(self) -> Finding:
        if self.line is not None and not self.file:
            raise ValueError("`line` needs `file`")
        return self

    @property
    def has_evidence(self) -> bool:
        """An `evidence` text, a file:line reference, or River Review's `Evidence:` label."""
        return (
            bool(self.evidence and self.evidence.strip())
            or (bool(self.file) and self.line is not None)
            or EVIDENCE_LABEL in self.message
        )


class CaseOutput(BaseModel):
    """What the reviewer produced for one case: raw findings, or why it produced none."""

    model_config = ConfigDict(frozen=True)

    findings: list[Any] = Field(default_factory=list)
    tool_error: str | None = None


class CaseResult(BaseModel):
    """The verdict on one case."""

    model_config = ConfigDict(**_CAMEL, frozen=True)

    name: str
    passed: bool = Field(serialization_alias="pass")
    is_guard: bool
    finding_count: int
    must_include_hits: list[str]
    must_include_misses: list[str]
    errors: list[str]
    failures: list[Failure]


class ReviewSummary(BaseModel):
    """River Review's summary block."""

    model_config = ConfigDict(**_CAMEL, frozen=True)

    total: int
    passed: int
    failed: int
    pass_rate: float
    false_positive_rate: float
    evidence_rate: float
    failures_by_category: dict[str, int]


class ReviewEvaluation(BaseModel):
    """Per-case verdicts, the summary and the rubric's dimension scores."""

    model_config = ConfigDict(**_CAMEL, frozen=True)

    cases: list[CaseResult]
    summary: ReviewSummary
    dimension_scores: list[DimensionScore]


@dataclass
class _Tally:
    """Counts gathered over all cases, the inputs of the rates and dimension scores."""

    tokens: int = 0
    token_hits: int = 0
    guards: int = 0
    guards_with_findings: int = 0
    findings: int = 0
    evidence_findings: int = 0
    severity_expected: int = 0
    severity_aligned: int = 0
    phase_judged: int = 0
    phase_mismatched: int = 0
    efficiencies: list[float] = field(default_factory=list)


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


def _off_rubric(label: str | None, labels: Mapping[str, object] | None) -> bool:
    """A label the rubric does not define (a rubric without the section accepts any)."""
    return label is not None and labels is not None and label not in labels


def _parse_finding(raw: object, rubric: Rubric) -> Finding | str:
    """The finding, or why it is malformed."""
    if not isinstance(raw, dict):
        return f"not an object ({type(raw).__name__})"
    try:
        finding = Finding.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        place = ".".join(str(p) for p in first["loc"]) or "finding"
        return f"{place}: {first['msg']}"
    if _off_rubric(finding.severity, rubric.severity):
        return f"severity {finding.severity!r} is not a rubric label"
    if _off_rubric(finding.phase, rubric.phase):
        return f"phase {finding.phase!r} is not a rubric phase"
    return finding


def _token_category(token: str) -> FailureCategory:
    if token == EVIDENCE_LABEL:
        return "missing_evidence"
    if SEVERITY_LABEL in token:
        return "severity_mismatch"
    return "missing_context"


def _failure(case: ReviewCase, category: FailureCategory, description: str) -> Failure:
    return Failure(
        category=category, case_ref=case.name, description=description, eval_type=EVAL_TYPE
    )


def _evaluate_case(
    case: ReviewCase, output: CaseOutput, rubric: Rubric, tally: _Tally
) -> CaseResult:
    parsed = [_parse_finding(raw, rubric) for raw in output.findings]
    valid = [p for p in parsed if isinstance(p, Finding)]
    malformed = [(i, p) for i, p in enumerate(parsed, start=1) if isinstance(p, str)]
    count = len(parsed)
    merged = "\n".join(f.message for f in valid)
    hits = [t for t in case.must_include if t in merged]
    misses = [t for t in case.must_include if t not in merged]

    tally.tokens += len(case.must_include)
    tally.token_hits += len(hits)
    tally.findings += count
    tally.evidence_findings += sum(f.has_evidence for f in valid)
    if case.is_guard:
        tally.guards += 1
        tally.guards_with_findings += count > 0
    if case.expect_severity is not None:
        tally.severity_expected += count
        tally.severity_aligned += sum(f.severity == case.expect_severity for f in valid)
    if case.phase is not None:
        declared = [f.phase for f in valid if f.phase is not None]
        tally.phase_judged += len(declared)
        tally.phase_mismatched += sum(p != case.phase for p in declared)
    if case.max_findings is not None:
        tally.efficiencies.append(1.0 if count <= case.max_findings else case.max_findings / count)

    errors: list[str] = []
    failures: list[Failure] = []
    if output.tool_error is not None:
        errors.append(f"reviewer failed: {output.tool_error}")
        failures.append(_failure(case, "tool_gap", f"reviewer failed: {output.tool_error}"))
    for index, reason in malformed:
        errors.append(f"finding {index} is malformed: {reason}")
        failures.append(_failure(case, "weak_explanation", f"malformed finding {index}: {reason}"))
    required = case.required_findings
    too_few = count < required
    too_many = case.max_findings is not None and count > case.max_findings
    if too_few:
        errors.append(f"expected at least {required} findings, got {count}")
    if too_many:
        errors.append(f"too many findings: {count} (maxFindings {case.max_findings})")
    errors.extend(f"missing token: {t}" for t in misses)
    passed = not errors
    if not passed:
        if case.is_guard and count > 0:
            failures.append(_failure(case, "false_positive", "guard case produced findings"))
        if too_few:
            failures.append(
                _failure(
                    case, "routing_miss", f"expected at least {required} findings, got {count}"
                )
            )
        if too_many and not case.is_guard:
            failures.append(_failure(case, "weak_explanation", f"too many findings: {count}"))
        failures.extend(_failure(case, _token_category(t), f"missing token: {t}") for t in misses)
    return CaseResult(
        name=case.name,
        passed=passed,
        is_guard=case.is_guard,
        finding_count=count,
        must_include_hits=hits,
        must_include_misses=misses,
        errors=errors,
        failures=failures,
    )


def _dimension_values(tally: _Tally) -> dict[str, tuple[float | None, str]]:
    """dimension id → (score or None, details)."""
    values: dict[str, tuple[float | None, str]] = {}
    values["detection_accuracy"] = (
        (
            tally.token_hits / tally.tokens,
            f"{tally.token_hits}/{tally.tokens} mustInclude tokens found",
        )
        if tally.tokens
        else (None, "no case states mustInclude tokens")
    )
    values["false_positive_rate"] = (
        (
            tally.guards_with_findings / tally.guards,
            f"{tally.guards_with_findings}/{tally.guards} guard cases produced findings",
        )
        if tally.guards
        else (None, "no guard case (expectNoFindings)")
    )
    values["evidence_quality"] = (
        (
            tally.evidence_findings / tally.findings,
            f"{tally.evidence_findings}/{tally.findings} findings carry an evidence label",
        )
        if tally.findings
        else (None, "no findings to inspect")
    )
    values["severity_alignment"] = (
        (
            tally.severity_aligned / tally.severity_expected,
            f"{tally.severity_aligned}/{tally.severity_expected} findings match their case's "
            "expectSeverity",
        )
        if tally.severity_expected
        else (None, "no finding in a case stating expectSeverity")
    )
    values["phase_consistency"] = (
        (
            0.0 if tally.phase_mismatched else 1.0,
            f"{tally.phase_mismatched}/{tally.phase_judged} phase-declaring findings differ "
            "from their case's phase",
        )
        if tally.phase_judged
        else (None, "no finding declares a phase in a case stating one")
    )
    values["token_efficiency"] = (
        (
            math.fsum(tally.efficiencies) / len(tally.efficiencies),
            f"mean of min(1, maxFindings/findings) over {len(tally.efficiencies)} cases",
        )
        if tally.efficiencies
        else (None, "no case states maxFindings")
    )
    values["actionability"] = (None, "pending human review")
    return values


def _check_cases(
    cases: Sequence[ReviewCase], outputs: Mapping[str, CaseOutput], rubric: Rubric
) -> None:
    duplicates = sorted(n for n, k in Counter(c.name for c in cases).items() if k > 1)
    if duplicates:
        raise InputError(f"duplicate case names: {', '.join(duplicates)}", where="cases")
    unknown = sorted(set(outputs) - {c.name for c in cases})
    if unknown:
        raise InputError(
            f"findings for unknown cases: {', '.join(unknown)}",
            where="findings",
            fix="use the case names of cases.json exactly",
        )
    for case in cases:
        if _off_rubric(case.phase, rubric.phase):
            raise InputError(
                f"case {case.name!r}: phase {case.phase!r} is not a rubric phase",
                where="cases",
                fix=f"use one of {', '.join(rubric.phase or ())}",
            )
        if _off_rubric(case.expect_severity, rubric.severity):
            raise InputError(
                f"case {case.name!r}: expectSeverity {case.expect_severity!r} is not a rubric "
                "severity label",
                where="cases",
                fix=f"use one of {', '.join(rubric.severity or ())}",
            )
        if (
            case.min_findings is not None
            and case.max_findings is not None
            and case.min_findings > case.max_findings
        ):
            raise InputError(
                f"case {case.name!r}: minFindings {case.min_findings} > maxFindings "
                f"{case.max_findings}",
                where="cases",
            )


def evaluate_review_fixtures(
    cases: Sequence[ReviewCase], outputs: Mapping[str, CaseOutput], rubric: Rubric
) -> ReviewEvaluation:
    """Judge every case (a case without output had no findings) and score the rubric."""
    _check_cases(cases, outputs, rubric)
    tally = _Tally()
    results = [_evaluate_case(c, outputs.get(c.name, CaseOutput()), rubric, tally) for c in cases]
    passed = sum(r.passed for r in results)
    categories = Counter(f.category for r in results for f in r.failures)
    summary = ReviewSummary(
        total=len(results),
        passed=passed,
        failed=len(results) - passed,
        pass_rate=_ratio(passed, len(results)),
        false_positive_rate=_ratio(tally.guards_with_findings, tally.guards),
        evidence_rate=_ratio(tally.evidence_findings, tally.findings),
        failures_by_category=dict(sorted(categories.items())),
    )
    values = _dimension_values(tally)
    unmeasured: tuple[float | None, str] = (None, "not measured by review fixtures")
    dimension_scores: list[DimensionScore] = []
    for d in rubric.dimensions:
        score, details = values.get(d.id, unmeasured)
        dimension_scores.append(
            DimensionScore(
                dimension_id=d.id, score=score, scoring_method=d.scoring_method, details=details
            )
        )
    return ReviewEvaluation(cases=results, summary=summary, dimension_scores=dimension_scores)


def review_ledger_entry(
    evaluation: ReviewEvaluation,
    rubric: Rubric,
    *,
    key: str,
    version: str,
    timestamp: str,
    commit: str,
    branch: str,
) -> LedgerEntry:
    """The ledger entry of one review-fixture evaluation (`description` = the entry key)."""
    total = weighted_total(rubric, evaluation.dimension_scores)
    summary = evaluation.summary
    scores = {
        "passRate": summary.pass_rate,
        "falsePositiveRate": summary.false_positive_rate,
        "evidenceRate": summary.evidence_rate,
        **total.as_scores(),
    }
    failures = [f for case in evaluation.cases for f in case.failures]
    return LedgerEntry(
        version=version,
        timestamp=timestamp,
        commit=commit,
        branch=branch,
        scores=scores,
        results=[
            ResultItem(name=c.name, passed=c.passed, errors=c.errors) for c in evaluation.cases
        ],
        status="pass" if summary.failed == 0 else "fail",
        description=key,
        failures=failures or None,
        dimension_scores=evaluation.dimension_scores,
    )
