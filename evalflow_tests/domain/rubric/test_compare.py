"""Direction-aware regressions between the last two entries of a key."""

from __future__ import annotations

from evalflow.domain.rubric.compare import compare_last_two
from evalflow.domain.rubric.models import LedgerEntry, Rubric
from evalflow_tests.domain.rubric.helpers import entry, entry_document


def _rows(comparison_rows: list) -> dict[str, bool]:
    return {row.dimension_id: row.regression for row in comparison_rows}


def test_higher_drop_and_lower_rise_regress_improvements_do_not(rubric: Rubric) -> None:
    before = entry({"detection_accuracy": 0.8, "false_positive_rate": 0.1, "evidence_quality": 0.5})
    after = entry({"detection_accuracy": 0.7, "false_positive_rate": 0.3, "evidence_quality": 0.9})
    [comparison] = compare_last_two([before, after], rubric=rubric)
    assert _rows(comparison.rows) == {
        "detection_accuracy": True,
        "false_positive_rate": True,
        "evidence_quality": False,
    }
    assert [r.dimension_id for r in comparison.regressions] == [
        "detection_accuracy",
        "false_positive_rate",
    ]


def test_lower_is_better_drop_is_an_improvement(rubric: Rubric) -> None:
    before = entry({"false_positive_rate": 0.5})
    after = entry({"false_positive_rate": 0.0})
    [comparison] = compare_last_two([before, after], rubric=rubric)
    assert comparison.regressions == []


def test_change_within_tolerance_is_not_a_regression(rubric: Rubric) -> None:
    before = entry({"detection_accuracy": 0.8})
    after = entry({"detection_accuracy": 0.8 - 0.0005})
    assert compare_last_two([before, after], rubric=rubric)[0].regressions == []
    assert compare_last_two([before, after], rubric=rubric, tolerance=0.0)[0].regressions


def test_nulls_never_regress(rubric: Rubric) -> None:
    before = entry({"actionability": 0.9, "detection_accuracy": None})
    after = entry({"actionability": None, "detection_accuracy": 0.1})
    [comparison] = compare_last_two([before, after], rubric=rubric)
    assert comparison.regressions == []
    assert all(row.delta is None for row in comparison.rows)


def test_only_the_last_two_entries_of_each_key_are_compared(rubric: Rubric) -> None:
    key_a, key_b = "review_eval:a", "review_eval:b"
    entries = [
        entry({"detection_accuracy": 0.1}, description=key_a),
        entry({"detection_accuracy": 0.9}, description=key_a),
        entry({"detection_accuracy": 0.5}, description=key_b),
        entry({"detection_accuracy": 0.9}, description=key_a),
    ]
    comparisons = compare_last_two(entries, rubric=rubric)
    assert [c.key for c in comparisons] == [key_a]
    assert comparisons[0].regressions == []
    assert compare_last_two(entries, key_b, rubric=rubric) == []
    assert compare_last_two(entries, "review_eval:missing", rubric=rubric) == []


def test_dimensions_present_on_one_side_only_are_listed(rubric: Rubric) -> None:
    before = entry({"detection_accuracy": 0.5})
    after = entry({"token_efficiency": 0.5})
    [comparison] = compare_last_two([before, after], rubric=rubric)
    assert [(r.dimension_id, r.previous, r.latest) for r in comparison.rows] == [
        ("detection_accuracy", 0.5, None),
        ("token_efficiency", None, 0.5),
    ]


def test_entries_without_dimensions_compare_their_headline_scores(rubric: Rubric) -> None:
    def run(final: float, borderline: float) -> LedgerEntry:
        return LedgerEntry.model_validate(
            entry_document(
                description="framework_run:trialist.kiro.r1",
                scores={"final": final, "borderline": borderline},
                dimensionScores=None,
            )
        )

    (comparison,) = compare_last_two([run(0.80, 1), run(0.74, 3)], rubric=rubric)
    rows = {r.dimension_id: r for r in comparison.rows}
    assert rows["final"].regression and rows["final"].direction == "higher_is_better"
    assert rows["borderline"].regression and rows["borderline"].direction == "lower_is_better"
    (steady,) = compare_last_two([run(0.74, 3), run(0.80, 1)], rubric=rubric)
    assert steady.regressions == []
