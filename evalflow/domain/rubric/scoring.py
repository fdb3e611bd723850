"""Rubric integrity, dimension-score validation and the direction-corrected weighted total
(SPEC §3).

Weighted total: a lower_is_better dimension contributes `1 − score`. A null score (a manual
dimension nobody has reviewed yet, or an automatic one whose fixtures state no expectation) is
never counted as 0: the total is renormalised over the scored dimensions and reported beside
`coverage = Σ weight of the non-null dimensions`. A dimension the entry does not list at all is
treated like a null one.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from evalflow.domain.rubric.models import DIRECTIONS, Dimension, DimensionScore, Rubric
from evalflow.errors import InputError

WEIGHT_SUM_TOLERANCE = 1e-9


def rubric_problems(rubric: Rubric) -> list[str]:
    """Every integrity problem of the rubric, in a stable order; empty when it is sound."""
    problems: list[str] = []
    if not rubric.dimensions:
        problems.append("the rubric defines no dimensions")
        return problems
    total = math.fsum(d.weight for d in rubric.dimensions)
    if abs(total - 1.0) >= WEIGHT_SUM_TOLERANCE:
        problems.append(f"dimension weights sum to {total!r}, not 1 (tolerance 1e-9)")
    duplicates = sorted(i for i, n in Counter(d.id for d in rubric.dimensions).items() if n > 1)
    if duplicates:
        problems.append(f"duplicate dimension ids: {', '.join(duplicates)}")
    problems.extend(
        f"dimension {d.id!r} has no valid direction"
        for d in rubric.dimensions
        if d.direction not in DIRECTIONS
    )
    problems.extend(
        f"dimension {d.id!r} is scored manually but marked automatable"
        for d in rubric.dimensions
        if d.scoring_method == "manual" and d.automatable
    )
    return problems


def require_sound_rubric(rubric: Rubric, *, where: str | None = None) -> Rubric:
    """The rubric itself, or InputError naming every integrity problem on one line."""
    problems = rubric_problems(rubric)
    if problems:
        raise InputError(
            "; ".join(problems), where=where, fix="correct the dimensions section of the rubric"
        )
    return rubric


def score_in_range(dimension: Dimension, score: float) -> bool:
    """binary ∈ {0, 1}; ratio ∈ [0, 1]; a recorded manual score ∈ [0, 1] so it can be weighted."""
    if dimension.scoring_method == "binary":
        return score in (0.0, 1.0)
    return 0.0 <= score <= 1.0


def validate_dimension_scores(
    rubric: Rubric, scores: Sequence[DimensionScore], *, where: str | None = None
) -> None:
    """InputError unless every score names a rubric dimension once, with its method and range."""
    seen: set[str] = set()
    for item in scores:
        dimension = rubric.dimension(item.dimension_id)
        if dimension is None:
            known = ", ".join(d.id for d in rubric.dimensions)
            raise InputError(
                f"unknown dimension {item.dimension_id!r}",
                where=where,
                fix=f"use one of the rubric's dimensions: {known}",
            )
        if item.dimension_id in seen:
            raise InputError(f"dimension {item.dimension_id!r} is scored twice", where=where)
        seen.add(item.dimension_id)
        if item.scoring_method is not None and item.scoring_method != dimension.scoring_method:
            raise InputError(
                f"dimension {dimension.id!r} is scored as {item.scoring_method!r} but the "
                f"rubric says {dimension.scoring_method!r}",
                where=where,
            )
        if item.score is not None and not score_in_range(dimension, item.score):
            allowed = "0 or 1" if dimension.scoring_method == "binary" else "within [0, 1]"
            raise InputError(
                f"score {item.score!r} of {dimension.id!r} ({dimension.scoring_method}) "
                f"must be {allowed}",
                where=where,
            )


def oriented_score(dimension: Dimension, score: float) -> float:
    """The score on a higher-is-better scale: lower_is_better dimensions become `1 − score`."""
    return 1.0 - score if dimension.direction == "lower_is_better" else score


@dataclass(frozen=True, slots=True)
class WeightedTotal:
    """`total` over the scored dimensions (None when none is scored) and the weight it covers."""

    total: float | None
    coverage: float

    def as_scores(self) -> dict[str, float]:
        """The ledger `scores` keys: `coverage`, and `weightedTotal` when there is one."""
        scores = {"coverage": self.coverage}
        if self.total is not None:
            scores["weightedTotal"] = self.total
        return scores


def weighted_total(
    rubric: Rubric, scores: Sequence[DimensionScore], *, where: str | None = None
) -> WeightedTotal:
    """Σ w·s' / Σ w over the non-null dimensions, with s' direction-corrected; plus coverage."""
    validate_dimension_scores(rubric, scores, where=where)
    by_id = {d.id: d for d in rubric.dimensions}
    weighted: list[float] = []
    covered: list[float] = []
    for item in scores:
        if item.score is None:
            continue
        dimension = by_id[item.dimension_id]
        weighted.append(dimension.weight * oriented_score(dimension, item.score))
        covered.append(dimension.weight)
    coverage = math.fsum(covered)
    if coverage == 0.0:
        return WeightedTotal(total=None, coverage=0.0)
    return WeightedTotal(total=math.fsum(weighted) / coverage, coverage=coverage)
