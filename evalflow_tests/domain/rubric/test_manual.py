"""A human score becomes a new entry with recomputed total and coverage."""

from __future__ import annotations

import pytest

from evalflow.domain.rubric.manual import with_manual_score
from evalflow.domain.rubric.models import Rubric
from evalflow.errors import InputError
from evalflow_tests.domain.rubric.helpers import entry


def test_manual_score_fills_actionability_and_full_coverage(rubric: Rubric) -> None:
    scores = {d.id: 1.0 for d in rubric.dimensions} | {
        "false_positive_rate": 0.0,
        "actionability": None,
    }
    original = entry(scores)
    updated = with_manual_score(
        original,
        rubric,
        "actionability",
        0.5,
        timestamp="2025-02-01T00:00:00Z",
        version="9.9.9",
        details="reviewed by A",
    )
    by_id = {d.dimension_id: d for d in updated.dimension_scores or ()}
    assert by_id["actionability"].score == 0.5
    assert by_id["actionability"].details == "reviewed by A"
    assert updated.scores["coverage"] == pytest.approx(1.0)
    assert updated.scores["weightedTotal"] == pytest.approx(0.9 + 0.1 * 0.5)
    assert (updated.timestamp, updated.version) == ("2025-02-01T00:00:00Z", "9.9.9")
    assert updated.description == original.description
    before = {d.dimension_id: d.score for d in original.dimension_scores or ()}
    assert before["actionability"] is None


def test_manual_score_is_appended_when_the_entry_lacks_the_dimension(rubric: Rubric) -> None:
    updated = with_manual_score(
        entry({"detection_accuracy": 1.0}),
        rubric,
        "actionability",
        0.0,
        timestamp="2025-02-01T00:00:00Z",
        version="1",
        details="d",
    )
    assert [d.dimension_id for d in updated.dimension_scores or ()] == [
        "detection_accuracy",
        "actionability",
    ]
    assert updated.scores["coverage"] == pytest.approx(0.35)
    assert updated.scores["weightedTotal"] == pytest.approx(0.25 / 0.35)


@pytest.mark.parametrize(
    ("dimension", "score", "message"),
    [
        ("detection_accuracy", 0.5, "not a manual dimension"),
        ("nonexistent", 0.5, "not a manual dimension"),
        ("actionability", 1.5, r"within \[0, 1\]"),
    ],
)
def test_manual_score_refuses_automatic_unknown_or_out_of_range(
    rubric: Rubric, dimension: str, score: float, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        with_manual_score(
            entry({}),
            rubric,
            dimension,
            score,
            timestamp="2025-02-01T00:00:00Z",
            version="1",
            details="d",
        )
