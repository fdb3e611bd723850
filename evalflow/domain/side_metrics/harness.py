"""The harness over the sanctioned set (SPEC §1): PRD ACs ∪ valid E-additions.

The frozen T stays as the roll-up computes it. Beside it the report may show T over the
sanctioned set, where every valid addition counts as one more required test:

    T_frozen     = MET T-checks / T-checks                        (baseline, all ACs)
    T_sanctioned = (MET T-checks + covered additions) / (T-checks + valid additions)

An addition is *covered* when one of its keywords (those of its implementation search,
plus its master item's spec keywords) matches the name (as written, or split into words)
or an assertion line of an asserting, non-skipped test. A valid
addition with no such test is a harness miss, never an E miss.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict

from evalflow.domain.models import PRD, Baseline
from evalflow.domain.side_metrics.common import TestCaseLike, ratio
from evalflow.domain.side_metrics.elicitation import LedgerEntry, MasterList
from evalflow.domain.side_metrics.lexicon import words

SANCTIONED_COLUMNS = [
    "req_id",
    "source",
    "priority",
    "ref",
    "text",
    "n_t_checks",
    "n_met_t_checks",
    "covered",
    "evidence",
    "implementation",
]


class SanctionedRequirement(BaseModel):
    model_config = ConfigDict(frozen=True)

    req_id: str
    source: Literal["prd", "addition"]
    text: str
    priority: str | None = None
    ref: str | None = None
    implementation: str | None = None
    keywords: tuple[str, ...] = ()


class HarnessRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    requirement: SanctionedRequirement
    n_t_checks: int
    n_met_t_checks: int
    covered: bool
    evidence: str | None


class HarnessCoverage(BaseModel):
    model_config = ConfigDict(frozen=True)

    rows: tuple[HarnessRow, ...]
    met_t_checks: int
    t_checks: int
    covered_additions: int
    additions: int

    @property
    def t_frozen(self) -> float | None:
        return ratio(self.met_t_checks, self.t_checks)

    @property
    def t_sanctioned(self) -> float | None:
        return ratio(self.met_t_checks + self.covered_additions, self.t_checks + self.additions)

    def frame(self) -> pd.DataFrame:
        """The `sanctioned_requirement` table: one row per sanctioned requirement."""
        rows = [
            {
                "req_id": r.requirement.req_id,
                "source": r.requirement.source,
                "priority": r.requirement.priority,
                "ref": r.requirement.ref,
                "text": r.requirement.text,
                "n_t_checks": r.n_t_checks,
                "n_met_t_checks": r.n_met_t_checks,
                "covered": r.covered,
                "evidence": r.evidence,
                "implementation": r.requirement.implementation,
            }
            for r in self.rows
        ]
        return pd.DataFrame(rows, columns=SANCTIONED_COLUMNS)


def sanctioned_set(
    prd: PRD, valid_additions: Sequence[LedgerEntry], master: MasterList | None = None
) -> list[SanctionedRequirement]:
    """PRD ACs (every priority) then the valid E-additions (`E:<item id>`). An addition's
    test keywords are its implementation keywords plus its master item's spec keywords."""
    spec_keywords = {m.id: m.keywords for m in master.items} if master else {}
    out = [
        SanctionedRequirement(
            req_id=ac.id,
            source="prd",
            text=ac.text,
            priority=story.priority,
            ref=f"{prd.source}:{ac.line}" if ac.line else None,
        )
        for story in prd.stories
        for ac in story.acs
    ]
    out += [
        SanctionedRequirement(
            req_id=f"E:{e.item.item_id}",
            source="addition",
            text=e.item.text,
            ref=e.ref,
            implementation=e.implementation,
            keywords=tuple(dict.fromkeys(e.keywords + spec_keywords.get(e.master_id or "", ()))),
        )
        for e in valid_additions
        if e.valid
    ]
    return out


def _test_hit(
    keywords: Sequence[str], cases: Sequence[TestCaseLike], files: Mapping[str, str]
) -> str | None:
    if not keywords:
        return None
    pattern = re.compile("|".join(f"(?:{k})" for k in keywords), re.IGNORECASE)
    for case in sorted(cases, key=lambda c: (c.path, c.def_line, c.test_id)):
        if case.skipped or not case.asserts:
            continue
        if pattern.search(case.name) or pattern.search(" ".join(words(case.name))):
            return f"{case.path}:{case.def_line}"
        lines = files.get(case.path, "").split("\n")
        for number in case.assert_lines:
            if 0 < number <= len(lines) and pattern.search(lines[number - 1]):
                return f"{case.path}:{number}"
    return None


def t_over_sanctioned(
    baseline: Baseline,
    votes: pd.DataFrame,
    sanctioned: Sequence[SanctionedRequirement],
    cases: Iterable[TestCaseLike],
    test_files: Mapping[str, str],
) -> HarnessCoverage:
    """T over the frozen checks and over the sanctioned set (see the module docstring)."""
    majority = (
        dict(zip(votes["check_id"], votes["majority"], strict=True)) if not votes.empty else {}
    )
    t_checks = {ac.id: [c.id for c in ac.checks if c.kind == "T"] for ac in baseline.acs}
    all_cases = list(cases)
    rows: list[HarnessRow] = []
    for req in sanctioned:
        if req.source == "prd":
            ids = t_checks.get(req.req_id, [])
            met = sum(1 for i in ids if majority.get(i) == "MET")
            rows.append(
                HarnessRow(
                    requirement=req,
                    n_t_checks=len(ids),
                    n_met_t_checks=met,
                    covered=bool(ids) and met == len(ids),
                    evidence=None,
                )
            )
        else:
            hit = _test_hit(req.keywords, all_cases, test_files)
            rows.append(
                HarnessRow(
                    requirement=req,
                    n_t_checks=1,
                    n_met_t_checks=int(hit is not None),
                    covered=hit is not None,
                    evidence=hit,
                )
            )
    prd_rows = [r for r in rows if r.requirement.source == "prd"]
    add_rows = [r for r in rows if r.requirement.source == "addition"]
    return HarnessCoverage(
        rows=tuple(rows),
        met_t_checks=sum(r.n_met_t_checks for r in prd_rows),
        t_checks=sum(r.n_t_checks for r in prd_rows),
        covered_additions=sum(1 for r in add_rows if r.covered),
        additions=len(add_rows),
    )
