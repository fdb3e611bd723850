"""Robustness R (SPEC §1 Side metrics): the extra tests beyond the AC-mapped ones, weighted.

The extra tests are D's Nice-to-have feature tests (they prove no MET T-check). Each gets
one weight by the first rule that applies, matched case-insensitively against the test's
name (split into words) and its source lines (`lexicon.ROBUST_*`):

1. none 0.0 — skipped, asserts nothing, or exercises out-of-scope behaviour that S's
   adjudication *confirmed* was built (its name or body holds the confirmed exclusion's
   phrase or frozen keyword: scope creep earns no robustness credit). An unadjudicated
   candidate never zeroes a test;
2. low 0.25 — mock-only assertions (a call was made, no outcome checked);
3. high 1.0 — an error/negative path or a boundary: raises/throws, reject, refuse, invalid,
   malformed, tampered, 4xx/5xx status, limit, overflow, concurrency/race, rollback,
   integrity error, timeout, retry, failure, conflict, "cannot";
4. med 0.5 — an edge or state case: empty/null, unknown, duplicate/replay/once, enum or
   mapping, state/transition (`status_of`), not yet/later, nothing, missing, default,
   rounding;
5. low 0.25 — anything else: happy-path duplicates, helpers, internals, trivial getters.

R = Σ weights, computed exactly and reported as a float. When T-checks are UNSCORED, R is
NULL with that reason: a test that would prove one of them is no extra, so the extras are
not known (the rows are still listed as candidates).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict

from evalflow.domain.side_metrics.common import TestCaseLike
from evalflow.domain.side_metrics.distribution import DistributionResult
from evalflow.domain.side_metrics.exclusions import OutOfScope
from evalflow.domain.side_metrics.lexicon import ROBUST_HIGH, ROBUST_LOW_HINT, ROBUST_MED, words

WeightClass = Literal["high", "med", "low", "none"]
WEIGHTS: dict[str, Fraction] = {
    "high": Fraction(1),
    "med": Fraction(1, 2),
    "low": Fraction(1, 4),
    "none": Fraction(0),
}
ROBUSTNESS_COLUMNS = ["test_id", "path", "line", "name", "weight_class", "weight", "reason"]


class RobustnessRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    test_id: str
    path: str
    line: int
    name: str
    weight_class: WeightClass
    weight: float
    reason: str


class RobustnessResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    rows: tuple[RobustnessRow, ...]
    total: float | None
    counts: dict[str, int]
    reason: str | None = None  # why total is NULL

    def frame(self) -> pd.DataFrame:
        """The `robustness` table: one row per extra (Nice-to-have) feature test."""
        return pd.DataFrame([r.model_dump() for r in self.rows], columns=ROBUSTNESS_COLUMNS)


def _body(case: TestCaseLike, files: Mapping[str, str]) -> str:
    text = files.get(case.path)
    if text is None:
        return ""
    return "\n".join(text.split("\n")[case.start_line - 1 : case.end_line])


def weigh_test(
    case: TestCaseLike, body: str, out_of_scope: OutOfScope | None = None
) -> tuple[WeightClass, str]:
    """The weight class of one extra test and the reason (rules in the module docstring)."""
    name = " ".join(words(case.name))
    text = f"{name}\n{body}"
    if case.skipped:
        return "none", "skipped: never runs"
    if not case.asserts:
        return "none", "asserts nothing: cannot fail on a wrong result"
    hits = out_of_scope.hits(text) if out_of_scope is not None else []
    if hits:
        return "none", f"exercises out-of-scope behaviour ({', '.join(hits)})"
    if case.mock_only:
        return "low", "mock-only assertions: proves a call, not an outcome"
    high = ROBUST_HIGH.search(text)
    if high:
        return "high", f"error/negative path or boundary ({high.group(0).strip()})"
    med = ROBUST_MED.search(text)
    if med:
        return "med", f"edge/state case ({med.group(0).strip()})"
    hint = ROBUST_LOW_HINT.search(text)
    if hint:
        return "low", f"helper/internal check ({hint.group(0).strip()})"
    return "low", "happy-path or internal check without an error, boundary or edge signal"


def compute_robustness(
    distribution: DistributionResult,
    cases: Iterable[TestCaseLike],
    test_files: Mapping[str, str],
    *,
    out_of_scope: OutOfScope | None = None,
) -> RobustnessResult:
    """R over D's Nice-to-have tests; `test_files` maps path → text at head; `out_of_scope`
    holds only what S's adjudication confirmed was built (see rule 1)."""
    extra = {r.test_id for r in distribution.rows if r.tier == "nice_to_have"}
    rows: list[RobustnessRow] = []
    total = Fraction(0)
    for case in sorted(cases, key=lambda c: (c.path, c.def_line, c.test_id)):
        if case.test_id not in extra:
            continue
        weight_class, reason = weigh_test(case, _body(case, test_files), out_of_scope)
        total += WEIGHTS[weight_class]
        rows.append(
            RobustnessRow(
                test_id=case.test_id,
                path=case.path,
                line=case.def_line,
                name=case.name,
                weight_class=weight_class,
                weight=float(WEIGHTS[weight_class]),
                reason=reason,
            )
        )
    counts = {k: sum(1 for r in rows if r.weight_class == k) for k in WEIGHTS}
    unscored = distribution.unscored_t_checks
    if unscored:
        reason = f"{len(unscored)} T-check(s) UNSCORED: a test proving one would be no extra"
        return RobustnessResult(rows=tuple(rows), total=None, counts=counts, reason=reason)
    return RobustnessResult(rows=tuple(rows), total=float(total), counts=counts)
