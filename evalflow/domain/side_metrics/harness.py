"""The harness over the sanctioned set (SPEC §1, §5): weighted PRD ACs ∪ valid E-additions.

The frozen T stays as the roll-up computes it. Beside it the report may show T over the
sanctioned set (SPEC §5): the T-checks of the *weighted* ACs (P0/P1 — a P2 AC weighs 0 in
Final and is left out here too) plus the T-checks of the valid E-additions, each judged like
any other check (level, assertion, k = 3 majority):

    T_frozen     = MET T-checks / T-checks      over the weighted ACs (P2 never counts)
    T_sanctioned = MET T-checks / T-checks      over weighted ACs ∪ valid additions

Like Final, neither is a number over checks nobody decided: when a T-check it counts has
the majority UNSCORED, it is NULL with the reason ("3 of 10 T-checks UNSCORED"), never the
MET share of the decided ones (an all-UNSCORED run printed "0.00 (0/10)").

An addition's T-checks are those of the baseline AC whose id is the addition's master item
(`M04`) or its sanctioned id (`E:<item id>`): the benchmark freezes them like any other.
No keyword ever covers an addition. A valid addition without a T-check is `no T-check`
(covered NULL), and T_sanctioned is then NULL with that reason — it cannot be computed
without a check for every sanctioned requirement (SPEC §1 step 7).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict

from evalflow.domain.models import PRD, Baseline
from evalflow.domain.rollup import PRIORITY_WEIGHTS
from evalflow.domain.side_metrics.common import ratio
from evalflow.domain.side_metrics.elicitation import LedgerEntry

SANCTIONED_COLUMNS = [
    "req_id",
    "source",
    "priority",
    "ref",
    "text",
    "n_t_checks",
    "n_met_t_checks",
    "covered",
    "reason",
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
    check_acs: tuple[str, ...] = ()  # baseline AC ids whose T-checks test it


class HarnessRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    requirement: SanctionedRequirement
    n_t_checks: int
    n_met_t_checks: int
    covered: bool | None
    reason: str | None


class HarnessCoverage(BaseModel):
    model_config = ConfigDict(frozen=True)

    rows: tuple[HarnessRow, ...]
    met_t_checks: int
    t_checks: int
    sanctioned_met: int
    sanctioned_checks: int
    unchecked_additions: int
    unscored_t_checks: int = 0  # of the frozen T's checks, majority UNSCORED
    sanctioned_unscored: int = 0  # of the sanctioned T's checks, majority UNSCORED

    @property
    def t_frozen(self) -> float | None:
        if self.unscored_t_checks:
            return None
        return ratio(self.met_t_checks, self.t_checks)

    @property
    def frozen_reason(self) -> str | None:
        """Why T_frozen is NULL though the weighted ACs have T-checks."""
        if self.unscored_t_checks:
            return f"{self.unscored_t_checks} of {self.t_checks} T-checks UNSCORED"
        return None

    @property
    def t_sanctioned(self) -> float | None:
        if self.reason:
            return None
        return ratio(self.sanctioned_met, self.sanctioned_checks)

    @property
    def reason(self) -> str | None:
        """Why T_sanctioned is NULL while the sanctioned set is not empty."""
        if self.unchecked_additions:
            return f"no T-check for {self.unchecked_additions} valid addition(s)"
        if self.sanctioned_unscored:
            return f"{self.sanctioned_unscored} of {self.sanctioned_checks} T-checks UNSCORED"
        return None

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
                "reason": r.reason,
                "implementation": r.requirement.implementation,
            }
            for r in self.rows
        ]
        return pd.DataFrame(rows, columns=SANCTIONED_COLUMNS).astype({"covered": "boolean"})


def sanctioned_set(
    prd: PRD, baseline: Baseline, valid_additions: Sequence[LedgerEntry]
) -> list[SanctionedRequirement]:
    """The weighted PRD ACs (P2 weighs 0 and is left out) then the valid E-additions
    (`E:<item id>`), each with the baseline ACs whose T-checks test it."""
    baseline_ids = {ac.id for ac in baseline.acs}
    out = [
        SanctionedRequirement(
            req_id=ac.id,
            source="prd",
            text=ac.text,
            priority=story.priority,
            ref=f"{prd.source}:{ac.line}" if ac.line else None,
            check_acs=(ac.id,),
        )
        for story in prd.stories
        if PRIORITY_WEIGHTS.get(story.priority, 0) > 0
        for ac in story.acs
    ]
    for e in valid_additions:
        if not e.valid:
            continue
        req_id = f"E:{e.item.item_id}"
        out.append(
            SanctionedRequirement(
                req_id=req_id,
                source="addition",
                text=e.item.text,
                ref=e.ref,
                implementation=e.implementation,
                check_acs=tuple(
                    i for i in dict.fromkeys((e.master_id or "", req_id)) if i in baseline_ids
                ),
            )
        )
    return out


def t_over_sanctioned(
    baseline: Baseline, votes: pd.DataFrame, sanctioned: Sequence[SanctionedRequirement]
) -> HarnessCoverage:
    """T over the frozen checks and over the sanctioned set (see the module docstring)."""
    majority: Mapping[str, str] = (
        dict(zip(votes["check_id"], votes["majority"], strict=True)) if not votes.empty else {}
    )
    t_checks = {ac.id: [c.id for c in ac.checks if c.kind == "T"] for ac in baseline.acs}
    # The frozen T counts the weighted ACs' T-checks: those of the sanctioned PRD ACs.
    weighted = [r.req_id for r in sanctioned if r.source == "prd"]
    every_t = [i for ac_id in weighted for i in t_checks.get(ac_id, [])]
    rows: list[HarnessRow] = []
    counted: list[str] = []
    for req in sanctioned:
        ids = list(dict.fromkeys(i for ac_id in req.check_acs for i in t_checks.get(ac_id, [])))
        counted += ids
        met = sum(1 for i in ids if majority.get(i) == "MET")
        unscored = sum(1 for i in ids if majority.get(i, "UNSCORED") == "UNSCORED")
        if not ids:
            covered, reason = None, "no T-check"
        elif unscored and met + unscored == len(ids):
            covered, reason = None, f"{unscored} of {len(ids)} T-checks UNSCORED"
        else:
            covered = met == len(ids)
            reason = None if covered else f"{len(ids) - met} of {len(ids)} T-checks not MET"
        rows.append(
            HarnessRow(
                requirement=req,
                n_t_checks=len(ids),
                n_met_t_checks=met,
                covered=covered,
                reason=reason,
            )
        )
    return HarnessCoverage(
        rows=tuple(rows),
        met_t_checks=sum(1 for i in every_t if majority.get(i) == "MET"),
        t_checks=len(every_t),
        sanctioned_met=sum(r.n_met_t_checks for r in rows),
        sanctioned_checks=sum(r.n_t_checks for r in rows),
        unchecked_additions=sum(
            1 for r in rows if r.requirement.source == "addition" and r.n_t_checks == 0
        ),
        unscored_t_checks=sum(1 for i in every_t if majority.get(i, "UNSCORED") == "UNSCORED"),
        sanctioned_unscored=sum(1 for i in counted if majority.get(i, "UNSCORED") == "UNSCORED"),
    )
