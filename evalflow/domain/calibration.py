"""Judge calibration against gold labels (SPEC §1 "Calibration"), its River Review rubric
mapping (SPEC §3) and the gold-evidence retrieval cases of the evidence retriever (SPEC §4).

Pure: the caller builds the repositories, runs the judge k times and reads the gold files
(`evalflow.io.calibration`); everything here is arithmetic over what it hands in.

A gold label per check: `{verdict: MET|UNMET, evidence: [{path, start_line, end_line}], kind:
clear|planted|borderline, note}`. `planted` marks a deliberate defect (mock-only test, missing
payload field, dead code, ...) and is always UNMET; the evidence of an UNMET label marks where
the defect is, or is empty when the feature is simply absent.

Metrics over the checks of one judge (every rate is None when its denominator is 0):
- agreement = checks whose k = 3 majority equals the gold verdict / checks. An UNSCORED
  majority does not agree; it is counted and listed on its own (coverage), never as a
  disagreement: it is no verdict (SPEC §5), and says nothing about the check's wording.
- MET recall = gold-MET checks judged MET / gold-MET checks.
- false-MET rate = planted checks judged MET / planted checks (a false MET is the worst error a
  judge can make; any one fails the calibration).
- valid-evidence share = checks judged MET whose evidence the shared validator accepts *and*
  overlaps the gold evidence of a gold-MET check / checks judged MET. A MET on a gold-UNMET
  check is in the denominator and never in the numerator: no evidence supports it.
- disagreement = a decided (MET/UNMET) majority other than the gold verdict; flag =
  disagreements / decided checks > 20 % (exactly 20 % does not raise it): the baseline wording
  is too ambiguous (SPEC). The disagreeing checks are always listed, never averaged away.
The calibration fails when the flag is raised, when no check is decided, or when the false-MET
rate is above 0.

Rubric mapping: detection_accuracy = MET recall, false_positive_rate = false-MET rate,
evidence_quality = valid-evidence share; severity_alignment, phase_consistency and
actionability do not apply (null), token_efficiency is null because judges report no token
counts. Nulls leave the weighted total's coverage (`evalflow.domain.rubric.scoring`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evalflow.domain.models import Evidence, Status
from evalflow.domain.retrieval.evidence import EvidenceCase, EvidenceRetriever, gold_relevant
from evalflow.domain.retrieval.metrics import RetrievalCase
from evalflow.domain.rubric.entry_keys import format_entry_key
from evalflow.domain.rubric.models import (
    DimensionScore,
    Failure,
    FailureCategory,
    FailureSeverity,
    LedgerEntry,
    ResultItem,
    Rubric,
)
from evalflow.domain.rubric.scoring import weighted_total
from evalflow.errors import InputError

GoldVerdict = Literal["MET", "UNMET"]
GoldKind = Literal["clear", "planted", "borderline"]
GOLD_KINDS: tuple[GoldKind, ...] = ("clear", "planted", "borderline")
ENTRY_KIND = "judge_calibration"
# "> 20 %" as integers: disagreements * 5 > checks, so exactly 20 % never raises the flag.
_DISAGREEMENT_DENOMINATOR = 5

_NOT_APPLICABLE = "not applicable to judge calibration"
_NO_TOKENS = "the judge reports no token counts"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GoldLabel(_Model):
    """The settled verdict of one check of one calibration run."""

    verdict: GoldVerdict
    evidence: tuple[Evidence, ...] = ()
    kind: GoldKind
    note: str = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> GoldLabel:
        if self.verdict == "MET" and not self.evidence:
            raise ValueError("a MET gold label needs evidence (no evidence, no credit)")
        if self.kind == "planted" and self.verdict != "UNMET":
            raise ValueError("a planted defect is UNMET by definition")
        return self


class JudgedCheck(_Model):
    """A judge's k-run majority for one check, with the evidence of a run that voted it.

    `evidence_valid`: the shared validator accepted every item the judge cited and at least
    one remains (decided by the caller, which holds the repository snapshot).
    """

    check_id: str
    majority: Status
    evidence: tuple[Evidence, ...] = ()
    evidence_valid: bool = False


class CalibrationRow(_Model):
    """One check of one calibration case, judged against its gold label."""

    judge_id: str
    case: str
    check_id: str
    gold: GoldVerdict
    majority: Status
    agree: bool
    kind: GoldKind
    evidence_valid: bool
    evidence_overlaps_gold: bool


ROW_COLUMNS: tuple[str, ...] = tuple(CalibrationRow.model_fields)


class Disagreement(_Model):
    case: str
    check_id: str
    kind: GoldKind
    gold: GoldVerdict
    majority: Status


class KindBreakdown(_Model):
    """The headline figures restricted to one gold kind."""

    kind: GoldKind
    n_checks: int
    n_agree: int
    agreement: float | None
    n_unscored: int
    n_gold_met: int
    n_gold_met_judged_met: int
    met_recall: float | None
    n_gold_unmet: int
    n_false_met: int
    false_met_rate: float | None


class CalibrationSummary(_Model):
    judge_id: str
    n_cases: int
    n_checks: int
    n_agree: int
    agreement: float
    n_unscored: int
    unscored: list[str]
    disagreement_rate: float | None = Field(description="over decided checks; None when none")
    disagreement_flag: bool
    disagreeing: list[Disagreement]
    n_gold_met: int
    n_gold_met_judged_met: int
    met_recall: float | None
    n_planted: int
    n_planted_judged_met: int
    false_met_rate: float | None
    n_judged_met: int
    n_valid_evidence: int
    valid_evidence_share: float | None
    per_kind: list[KindBreakdown]
    status: Literal["pass", "fail"]
    fail_reasons: list[str]


def evidence_overlaps(cited: Iterable[Evidence], gold: Iterable[Evidence]) -> bool:
    """True when some cited range shares a line of the same file with some gold range."""
    gold_ranges = list(gold)
    return any(
        c.path == g.path and c.start_line <= g.end_line and g.start_line <= c.end_line
        for c in cited
        for g in gold_ranges
    )


def compare_case(
    judge_id: str,
    case: str,
    gold: Mapping[str, GoldLabel],
    judged: Mapping[str, JudgedCheck],
) -> list[CalibrationRow]:
    """One row per gold check, in gold order; the two sides must label the same checks."""
    missing = [c for c in gold if c not in judged]
    extra = sorted(c for c in judged if c not in gold)
    if missing or extra:
        detail = "; ".join(
            part
            for part in (
                f"no verdict for {', '.join(missing)}" if missing else "",
                f"no gold label for {', '.join(extra)}" if extra else "",
            )
            if part
        )
        raise InputError(
            f"gold labels and judged checks differ: {detail}",
            where=f"calibration case {case}",
            fix="label every check of the frozen baseline exactly once in the gold file",
        )
    rows: list[CalibrationRow] = []
    for check_id, label in gold.items():
        verdict = judged[check_id]
        judged_met = verdict.majority == "MET"
        rows.append(
            CalibrationRow(
                judge_id=judge_id,
                case=case,
                check_id=check_id,
                gold=label.verdict,
                majority=verdict.majority,
                agree=verdict.majority == label.verdict,
                kind=label.kind,
                evidence_valid=judged_met and verdict.evidence_valid,
                evidence_overlaps_gold=judged_met
                and evidence_overlaps(verdict.evidence, label.evidence),
            )
        )
    return rows


def _rate(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _breakdown(kind: GoldKind, rows: Sequence[CalibrationRow]) -> KindBreakdown:
    gold_met = [r for r in rows if r.gold == "MET"]
    gold_unmet = [r for r in rows if r.gold == "UNMET"]
    n_agree = sum(r.agree for r in rows)
    met_hits = sum(r.majority == "MET" for r in gold_met)
    false_met = sum(r.majority == "MET" for r in gold_unmet)
    return KindBreakdown(
        kind=kind,
        n_checks=len(rows),
        n_agree=n_agree,
        agreement=_rate(n_agree, len(rows)),
        n_unscored=sum(r.majority == "UNSCORED" for r in rows),
        n_gold_met=len(gold_met),
        n_gold_met_judged_met=met_hits,
        met_recall=_rate(met_hits, len(gold_met)),
        n_gold_unmet=len(gold_unmet),
        n_false_met=false_met,
        false_met_rate=_rate(false_met, len(gold_unmet)),
    )


def summarize(judge_id: str, rows: Sequence[CalibrationRow]) -> CalibrationSummary:
    """The calibration figures of one judge over every row (see the module docstring)."""
    if not rows:
        raise InputError(
            "no calibration checks to summarise", fix="point --set at a calibration set"
        )
    n_checks = len(rows)
    n_agree = sum(r.agree for r in rows)
    decided = [r for r in rows if r.majority != "UNSCORED"]
    disagreeing = [r for r in decided if not r.agree]
    n_disagree = len(disagreeing)
    flag = n_disagree * _DISAGREEMENT_DENOMINATOR > len(decided)
    gold_met = [r for r in rows if r.gold == "MET"]
    planted = [r for r in rows if r.kind == "planted"]
    judged_met = [r for r in rows if r.majority == "MET"]
    met_hits = sum(r.majority == "MET" for r in gold_met)
    planted_met = sum(r.majority == "MET" for r in planted)
    valid = sum(
        r.gold == "MET" and r.evidence_valid and r.evidence_overlaps_gold for r in judged_met
    )
    false_met_rate = _rate(planted_met, len(planted))
    reasons: list[str] = []
    if not decided:
        reasons.append("no check decided: every majority is UNSCORED")
    elif flag:
        reasons.append(
            f"disagreement {n_disagree}/{len(decided)} decided checks > 20 %: the check wording "
            "is too ambiguous for this judge — clarify the baseline checks and re-run"
        )
    if false_met_rate is not None and false_met_rate > 0:
        reasons.append(f"false MET on {planted_met}/{len(planted)} planted defects")
    return CalibrationSummary(
        judge_id=judge_id,
        n_cases=len({r.case for r in rows}),
        n_checks=n_checks,
        n_agree=n_agree,
        agreement=n_agree / n_checks,
        n_unscored=sum(r.majority == "UNSCORED" for r in rows),
        unscored=[f"{r.case}/{r.check_id}" for r in rows if r.majority == "UNSCORED"],
        disagreement_rate=_rate(n_disagree, len(decided)),
        disagreement_flag=flag,
        disagreeing=[
            Disagreement(
                case=r.case, check_id=r.check_id, kind=r.kind, gold=r.gold, majority=r.majority
            )
            for r in disagreeing
        ],
        n_gold_met=len(gold_met),
        n_gold_met_judged_met=met_hits,
        met_recall=_rate(met_hits, len(gold_met)),
        n_planted=len(planted),
        n_planted_judged_met=planted_met,
        false_met_rate=false_met_rate,
        n_judged_met=len(judged_met),
        n_valid_evidence=valid,
        valid_evidence_share=_rate(valid, len(judged_met)),
        per_kind=[_breakdown(kind, [r for r in rows if r.kind == kind]) for kind in GOLD_KINDS],
        status="fail" if reasons else "pass",
        fail_reasons=reasons,
    )


def _measured(
    summary: CalibrationSummary,
) -> dict[str, tuple[float | None, str]]:
    return {
        "detection_accuracy": (
            summary.met_recall,
            f"MET recall: {summary.n_gold_met_judged_met}/{summary.n_gold_met} gold-MET checks "
            "judged MET",
        ),
        "false_positive_rate": (
            summary.false_met_rate,
            f"false MET: {summary.n_planted_judged_met}/{summary.n_planted} planted defects "
            "judged MET",
        ),
        "evidence_quality": (
            summary.valid_evidence_share,
            f"valid evidence: {summary.n_valid_evidence}/{summary.n_judged_met} MET verdicts "
            "cite validated evidence overlapping the gold range",
        ),
        "token_efficiency": (None, _NO_TOKENS),
    }


def dimension_scores(summary: CalibrationSummary, rubric: Rubric) -> list[DimensionScore]:
    """One score per rubric dimension, in rubric order; unmapped dimensions are null."""
    measured = _measured(summary)
    scores: list[DimensionScore] = []
    for d in rubric.dimensions:
        score, details = measured.get(d.id, (None, _NOT_APPLICABLE))
        scores.append(
            DimensionScore(
                dimension_id=d.id, score=score, scoring_method=d.scoring_method, details=details
            )
        )
    return scores


def _failure(row: CalibrationRow) -> Failure:
    category: FailureCategory
    severity: FailureSeverity
    if row.majority == "MET":
        category, severity = "false_positive", "critical" if row.kind == "planted" else "major"
        text = f"judged MET, gold UNMET ({row.kind})"
    elif row.majority == "UNSCORED":
        category, severity = "tool_gap", "minor"
        text = f"no majority verdict (UNSCORED), gold {row.gold} ({row.kind})"
    else:
        category, severity = "missing_evidence", "major"
        text = f"judged UNMET, gold MET ({row.kind})"
    return Failure(
        category=category,
        case_ref=f"{row.case}/{row.check_id}",
        description=text,
        eval_type=ENTRY_KIND,
        severity=severity,
    )


def calibration_ledger_entry(
    summary: CalibrationSummary,
    rows: Sequence[CalibrationRow],
    rubric: Rubric,
    *,
    version: str,
    timestamp: str,
    commit: str,
    branch: str,
) -> LedgerEntry:
    """The River Review ledger entry of one calibration (`judge_calibration:<judge id>`)."""
    scored = dimension_scores(summary, rubric)
    rates = {
        "agreement": summary.agreement,
        "disagreementRate": summary.disagreement_rate,
        "metRecall": summary.met_recall,
        "falseMetRate": summary.false_met_rate,
        "validEvidenceShare": summary.valid_evidence_share,
    }
    failures = [_failure(r) for r in rows if not r.agree]
    return LedgerEntry(
        version=version,
        timestamp=timestamp,
        commit=commit,
        branch=branch,
        scores={
            **{k: v for k, v in rates.items() if v is not None},
            **weighted_total(rubric, scored).as_scores(),
        },
        results=[
            ResultItem(
                name=f"{r.case}/{r.check_id}",
                passed=r.agree,
                errors=None if r.agree else [f"gold {r.gold}, judged {r.majority} ({r.kind})"],
            )
            for r in rows
        ],
        status=summary.status,
        description=format_entry_key(ENTRY_KIND, summary.judge_id),
        failures=failures or None,
        dimension_scores=scored,
    )


def evidence_query(proposition: str, ac_text: str) -> str:
    """The retrieval query of a check: its proposition, then its AC's text."""
    return f"{proposition}\n{ac_text}"


def evidence_retrieval_cases(
    case: str,
    queries: Mapping[str, str],
    gold: Mapping[str, GoldLabel],
    retriever: EvidenceRetriever,
) -> list[RetrievalCase]:
    """Gold-evidence cases for the evidence retriever: one per check whose gold label cites
    evidence; relevant = the retriever's chunks overlapping those lines, in chunk order.

    `queries` maps check id → query text (`evidence_query`); a check without gold evidence
    (a feature that is simply absent) has nothing to retrieve and yields no case.
    """
    out: list[RetrievalCase] = []
    for check_id, label in gold.items():
        if not label.evidence:
            continue
        if check_id not in queries:
            raise InputError(
                f"no query for gold check {check_id}", where=f"calibration case {case}"
            )
        evidence_case = EvidenceCase(
            id=f"{case}/{check_id}",
            query=queries[check_id],
            gold_ranges=[f"{e.path}:{e.start_line}-{e.end_line}" for e in label.evidence],
        )
        out.append(
            RetrievalCase(
                id=evidence_case.id,
                query=evidence_case.query,
                relevant=gold_relevant(retriever, evidence_case),
            )
        )
    return out
