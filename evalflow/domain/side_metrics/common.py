"""Shapes every side metric shares: the test-case view, evidence lines, ratios, the n/a status.

The side metrics read test cases structurally (`TestCaseLike`), so the inventory's
`TestCase` model, or any object with the same attributes, can be passed without the pure
domain importing the repository layer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any, Protocol

import pandas as pd
from pydantic import BaseModel, ConfigDict

from evalflow.domain.rounding import format_half_up
from evalflow.errors import InputError

NO_SPEC = "n/a — no derived spec"
SCORED = "scored"


class TestCaseLike(Protocol):
    """The attributes of `evalflow.repo.test_inventory.TestCase` the side metrics read."""

    test_id: str
    function_id: str
    path: str
    name: str
    start_line: int
    end_line: int
    def_line: int
    level: str
    asserts: bool
    assert_lines: list[int]
    mock_only: bool
    skipped: bool
    is_feature: bool | None


class EvidenceLine(BaseModel):
    """One cited `path:start-end` range of a MET T-check (from the majority verdicts)."""

    model_config = ConfigDict(frozen=True)

    check_id: str
    path: str
    start_line: int
    end_line: int


def ratio(numerator: int, denominator: int) -> float | None:
    """numerator/denominator as a float, None (not 0) when the denominator is 0."""
    return None if denominator == 0 else float(Fraction(numerator, denominator))


def fmt_ratio(value: float | None, numerator: int, denominator: int) -> str:
    """`0.75 (9/12)`, rounded half up from the exact fraction; `n/a (0/0)` without data."""
    if value is None or denominator == 0:
        return f"n/a ({numerator}/{denominator})"
    return f"{format_half_up(Fraction(numerator, denominator))} ({numerator}/{denominator})"


def feature_split(
    cases: Iterable[TestCaseLike],
) -> tuple[list[TestCaseLike], list[TestCaseLike]]:
    """(feature tests, pre-existing tests); every case must have been classified."""
    feature: list[TestCaseLike] = []
    existing: list[TestCaseLike] = []
    for case in cases:
        if case.is_feature is None:
            raise InputError(
                f"test case {case.test_id} is not classified as feature or pre-existing",
                where="side metrics D/R",
                fix="build the inventory with the diff's added lines and new files",
            )
        (feature if case.is_feature else existing).append(case)
    return feature, existing


def met_test_evidence(votes: pd.DataFrame, verdicts: pd.DataFrame) -> list[EvidenceLine]:
    """Evidence lines of every check whose majority is MET, from the runs that said MET.

    `verdicts` holds one row per (check_id, run) with `status` and `evidence` (a list of
    {kind, path, start_line, end_line, …} mappings or of `Evidence`). Every agreeing run's
    evidence counts, so the result does not depend on which run is read first.
    """
    if votes.empty or verdicts.empty:
        return []
    met = set(votes.loc[votes["majority"] == "MET", "check_id"])
    rows = verdicts[verdicts["check_id"].isin(met) & (verdicts["status"] == "MET")]
    lines: set[EvidenceLine] = set()
    for check_id, raw in zip(rows["check_id"], rows["evidence"], strict=True):
        for item in _evidence_items(raw):
            if item.get("kind") == "run":
                continue  # behavioural evidence (a run probe) cites no file line
            lines.add(
                EvidenceLine(
                    check_id=str(check_id),
                    path=str(item["path"]),
                    start_line=int(item["start_line"]),
                    end_line=int(item.get("end_line", item["start_line"])),
                )
            )
    return sorted(lines, key=lambda e: (e.check_id, e.path, e.start_line, e.end_line))


def _evidence_items(raw: Any) -> Sequence[dict[str, Any]]:
    if raw is None or (isinstance(raw, float) and math.isnan(raw)):
        return []
    return [dict(item) if not isinstance(item, BaseModel) else item.model_dump() for item in raw]


def candidates(n: int) -> str:
    """ "1 candidate", "3 candidates" (the report said "1 candidates")."""
    return f"{n} candidate" if n == 1 else f"{n} candidates"
