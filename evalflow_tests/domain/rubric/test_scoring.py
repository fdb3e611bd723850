"""Rubric integrity, score validation and the direction-corrected, null-renormalised total."""

from __future__ import annotations

import math

import pytest

from evalflow.domain.rubric.models import Dimension, DimensionScore, Rubric
from evalflow.domain.rubric.scoring import (
    WEIGHT_SUM_TOLERANCE,
    require_sound_rubric,
    rubric_problems,
    validate_dimension_scores,
    weighted_total,
)
from evalflow.errors import InputError

SEED_TABLE = {
    # id: (weight, method, direction, automatable) — SPEC §3's table
    "detection_accuracy": (0.25, "ratio", "higher_is_better", True),
    "false_positive_rate": (0.20, "ratio", "lower_is_better", True),
    "evidence_quality": (0.15, "ratio", "higher_is_better", True),
    "severity_alignment": (0.15, "ratio", "higher_is_better", True),
    "phase_consistency": (0.10, "binary", "higher_is_better", True),
    "actionability": (0.10, "manual", "higher_is_better", False),
    "token_efficiency": (0.05, "ratio", "higher_is_better", True),
}


def _scores(**values: float | None) -> list[DimensionScore]:
    return [DimensionScore(dimension_id=k, score=v) for k, v in values.items()]


def _dimension(id_: str, weight: float, **extra: object) -> Dimension:
    return Dimension.model_validate(
        {"id": id_, "name": id_, "weight": weight, "scoringMethod": "ratio", **extra}
    )


# --- the shipped rubric -------------------------------------------------------------------


def test_shipped_rubric_weights_sum_to_one(rubric: Rubric) -> None:
    assert abs(math.fsum(d.weight for d in rubric.dimensions) - 1.0) < 1e-9


def test_shipped_rubric_ids_are_unique(rubric: Rubric) -> None:
    ids = [d.id for d in rubric.dimensions]
    assert len(ids) == len(set(ids))


def test_shipped_rubric_every_dimension_has_a_direction(rubric: Rubric) -> None:
    assert all(d.direction in ("higher_is_better", "lower_is_better") for d in rubric.dimensions)


def test_false_positive_rate_is_lower_is_better(rubric: Rubric) -> None:
    dimension = rubric.dimension("false_positive_rate")
    assert dimension is not None
    assert dimension.direction == "lower_is_better"


def test_shipped_rubric_matches_the_seed_table(rubric: Rubric) -> None:
    actual = {
        d.id: (d.weight, d.scoring_method, d.direction, d.automatable) for d in rubric.dimensions
    }
    assert actual == SEED_TABLE
    assert all(d.name and d.description for d in rubric.dimensions)


def test_shipped_rubric_has_severity_and_phase_sections(rubric: Rubric) -> None:
    assert rubric.severity is not None
    assert set(rubric.severity) == {"critical", "major", "minor", "info"}
    assert all(level.action for level in rubric.severity.values())
    assert rubric.phase is not None
    assert set(rubric.phase) == {"upstream", "midstream", "downstream"}
    assert rubric_problems(rubric) == []


# --- integrity problems -------------------------------------------------------------------


def test_weights_off_by_more_than_tolerance_are_a_problem() -> None:
    rubric = Rubric(dimensions=[_dimension("a", 0.5), _dimension("b", 0.5 - 1e-8)])
    assert any("sum to" in p for p in rubric_problems(rubric))


def test_weights_within_tolerance_are_fine() -> None:
    rubric = Rubric(
        dimensions=[_dimension("a", 0.5), _dimension("b", 0.5 - WEIGHT_SUM_TOLERANCE / 10)]
    )
    assert rubric_problems(rubric) == []


def test_duplicate_ids_are_a_problem() -> None:
    rubric = Rubric(dimensions=[_dimension("a", 0.5), _dimension("a", 0.5)])
    assert rubric_problems(rubric) == ["duplicate dimension ids: a"]


def test_direction_defaults_to_higher_is_better() -> None:
    assert _dimension("a", 1.0).direction == "higher_is_better"


def test_manual_dimension_marked_automatable_is_a_problem() -> None:
    rubric = Rubric(dimensions=[_dimension("a", 1.0, scoringMethod="manual", automatable=True)])
    assert rubric_problems(rubric) == ["dimension 'a' is scored manually but marked automatable"]


def test_empty_rubric_is_a_problem_and_require_raises() -> None:
    with pytest.raises(InputError, match="no dimensions"):
        require_sound_rubric(Rubric(), where="x.yaml")


# --- score validation ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dimension_id", "score", "message"),
    [
        ("phase_consistency", 0.5, "must be 0 or 1"),
        ("detection_accuracy", 1.2, r"within \[0, 1\]"),
        ("detection_accuracy", -0.1, r"within \[0, 1\]"),
        ("actionability", 2.0, r"within \[0, 1\]"),
        ("nonexistent", 0.5, "unknown dimension"),
    ],
)
def test_scores_out_of_range_or_unknown_are_rejected(
    rubric: Rubric, dimension_id: str, score: float, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        validate_dimension_scores(rubric, _scores(**{dimension_id: score}))


def test_binary_accepts_zero_and_one(rubric: Rubric) -> None:
    validate_dimension_scores(rubric, _scores(phase_consistency=0.0))
    validate_dimension_scores(rubric, _scores(phase_consistency=1.0))


def test_duplicate_and_mismatched_method_scores_are_rejected(rubric: Rubric) -> None:
    with pytest.raises(InputError, match="scored twice"):
        validate_dimension_scores(rubric, _scores(detection_accuracy=0.5) * 2)
    wrong = [DimensionScore(dimension_id="actionability", score=0.5, scoring_method="ratio")]
    with pytest.raises(InputError, match="rubric says 'manual'"):
        validate_dimension_scores(rubric, wrong)


# --- weighted total -----------------------------------------------------------------------


def test_weighted_total_with_actionability_pending(rubric: Rubric) -> None:
    scores = _scores(
        detection_accuracy=0.8,
        false_positive_rate=0.1,
        evidence_quality=0.6,
        severity_alignment=0.5,
        phase_consistency=1.0,
        actionability=None,
        token_efficiency=0.4,
    )
    # 0.25·0.8 + 0.20·(1 − 0.1) + 0.15·0.6 + 0.15·0.5 + 0.10·1 + 0.05·0.4
    # = 0.2 + 0.18 + 0.09 + 0.075 + 0.1 + 0.02 = 0.665, over a covered weight of 0.90
    result = weighted_total(rubric, scores)
    assert result.coverage == pytest.approx(0.90, abs=1e-12)
    assert result.total == pytest.approx(0.665 / 0.90, abs=1e-12)


def test_weighted_total_when_every_dimension_is_scored(rubric: Rubric) -> None:
    scores = _scores(
        detection_accuracy=1.0,
        false_positive_rate=0.0,
        evidence_quality=1.0,
        severity_alignment=1.0,
        phase_consistency=1.0,
        actionability=1.0,
        token_efficiency=1.0,
    )
    result = weighted_total(rubric, scores)
    assert result.coverage == pytest.approx(1.0, abs=1e-12)
    assert result.total == pytest.approx(1.0, abs=1e-12)


def test_lower_is_better_contributes_one_minus_score(rubric: Rubric) -> None:
    only_fp = weighted_total(rubric, _scores(false_positive_rate=0.25))
    assert only_fp.coverage == pytest.approx(0.20)
    assert only_fp.total == pytest.approx(0.75)


def test_null_is_never_counted_as_zero(rubric: Rubric) -> None:
    with_null = weighted_total(rubric, _scores(detection_accuracy=0.8, actionability=None))
    without = weighted_total(rubric, _scores(detection_accuracy=0.8))
    assert with_null == without
    assert with_null.total == pytest.approx(0.8)
    assert with_null.coverage == pytest.approx(0.25)


def test_all_null_has_no_total_and_zero_coverage(rubric: Rubric) -> None:
    result = weighted_total(rubric, _scores(actionability=None, detection_accuracy=None))
    assert result.total is None
    assert result.coverage == 0.0
    assert result.as_scores() == {"coverage": 0.0}
