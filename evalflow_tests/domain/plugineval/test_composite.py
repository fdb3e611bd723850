"""Composite, blending, grades, badges and confidence — worked out by hand."""

from __future__ import annotations

import pytest

from evalflow.domain.plugineval.composite import (
    BADGE_DISPLAY,
    BADGE_STARS,
    BADGES,
    BLEND,
    DIMENSION_WEIGHTS,
    LAYERS,
    NO_BADGE,
    badge,
    blend_dimensions,
    composite_score,
    confidence_label,
    display_grade,
    letter_grade,
)
from evalflow.domain.plugineval.model import DIMENSIONS

STATIC = {
    "triggering_accuracy": 0.80,
    "orchestration_fitness": 0.90,
    "progressive_disclosure": 0.60,
    "token_efficiency": 1.00,
    "structural_completeness": 0.50,
    "ecosystem_coherence": 0.75,
}


def test_tables_match_spec() -> None:
    assert sum(DIMENSION_WEIGHTS.values()) == pytest.approx(1.0)
    for d in DIMENSIONS:
        assert sum(BLEND[d].values()) == pytest.approx(1.0)


def test_quick_composite_by_hand() -> None:
    dims = blend_dimensions({"static": STATIC})
    # Only static ran: each blended score is the static score (weights renormalise to 1).
    assert dims["triggering_accuracy"].score == pytest.approx(0.80)
    for unmeasured in (
        "output_quality",
        "scope_calibration",
        "robustness",
        "code_template_quality",
    ):
        assert dims[unmeasured].score is None
    comp = composite_score({d: s.score for d, s in dims.items()}, penalty=0.95)
    # measured weight = .25 + .20 + .10 + .06 + .03 + .02 = 0.66
    assert comp.measured_weight == pytest.approx(0.66)
    # Σ W_d × s_d = .25×.80 + .20×.90 + .10×.60 + .06×1.00 + .03×.50 + .02×.75
    #            = .200 + .180 + .060 + .060 + .015 + .015 = 0.530
    # raw = 0.530 / 0.66 = 0.803030…
    assert comp.raw == pytest.approx(0.530 / 0.66)
    # composite = 0.803030 × 100 × 0.95 = 76.2879 (one anti-pattern)
    assert comp.score == pytest.approx(76.28787878, abs=1e-6)


def test_standard_blend_renormalises_over_static_and_judge() -> None:
    judge = {
        "triggering_accuracy": 0.60,
        "orchestration_fitness": 0.70,
        "output_quality": 0.80,
        "scope_calibration": 0.90,
    }
    dims = blend_dimensions({"static": STATIC, "judge": judge})
    # triggering: (.15×.80 + .25×.60) / (.15 + .25) = (.12 + .15) / .40 = 0.675
    assert dims["triggering_accuracy"].score == pytest.approx(0.675)
    # orchestration: (.10×.90 + .70×.70) / .80 = (.09 + .49) / .80 = 0.725
    assert dims["orchestration_fitness"].score == pytest.approx(0.725)
    # output_quality: static blend weight 0 → judge only = 0.80
    assert dims["output_quality"].score == pytest.approx(0.80)
    # scope: static has no score, judge only = 0.90
    assert dims["scope_calibration"].score == pytest.approx(0.90)
    # the judge gave no progressive_disclosure score → static alone
    assert dims["progressive_disclosure"].score == pytest.approx(0.60)
    assert dims["robustness"].score is None
    comp = composite_score({d: s.score for d, s in dims.items()}, penalty=1.0)
    # measured weight = .66 + .15 (output) + .12 (scope) = .93
    assert comp.measured_weight == pytest.approx(0.93)
    # Σ = .25×.675 + .20×.725 + .15×.80 + .12×.90 + .10×.60 + .06×1 + .03×.50 + .02×.75
    #   = .16875 + .145 + .12 + .108 + .06 + .06 + .015 + .015 = 0.69175
    assert comp.score == pytest.approx(0.69175 / 0.93 * 100)


def test_deep_blend_and_ci_propagation() -> None:
    mc = {"triggering_accuracy": 1.0, "robustness": 0.9}
    cis = {"monte_carlo": {"triggering_accuracy": (0.9, 1.0), "robustness": (0.8, 0.95)}}
    dims = blend_dimensions({"static": STATIC, "monte_carlo": mc}, cis)
    # (.15×.80 + .60×1.0) / .75 = .72 / .75 = 0.96
    assert dims["triggering_accuracy"].score == pytest.approx(0.96)
    # CI: static contributes its point to both ends → (.12 + .60×.9)/.75, (.12 + .60)/.75
    assert dims["triggering_accuracy"].ci_low == pytest.approx((0.12 + 0.54) / 0.75)
    assert dims["triggering_accuracy"].ci_high == pytest.approx(0.96)
    assert dims["robustness"].score == pytest.approx(0.9)
    assert (dims["robustness"].ci_low, dims["robustness"].ci_high) == pytest.approx((0.8, 0.95))
    # static-only dimension has no CI
    assert dims["progressive_disclosure"].ci_low is None


def test_skipping_a_layer_does_not_lower_a_score() -> None:
    with_mc = blend_dimensions({"static": STATIC, "monte_carlo": {}})
    without = blend_dimensions({"static": STATIC})
    assert with_mc == without


def test_composite_clamps_and_handles_nothing_measured() -> None:
    assert composite_score({d: None for d in DIMENSIONS}, 1.0).score is None
    assert composite_score({"triggering_accuracy": 1.0}, 1.0).score == pytest.approx(100.0)


@pytest.mark.parametrize(
    ("score", "grade"),
    [
        (0.90, "A"),
        (0.8999, "B"),
        (0.80, "B"),
        (0.70, "C"),
        (0.6999, "D"),
        (0.60, "D"),
        (0.5999, "F"),
        (None, None),
    ],
)
def test_letter_grades(score: float | None, grade: str | None) -> None:
    assert letter_grade(score) == grade


def test_letter_grade_tolerates_float_noise() -> None:
    assert letter_grade(0.1 + 0.7 + 0.1) == "A"  # 0.8999999999999999 displays as 0.9


@pytest.mark.parametrize(
    ("points", "grade"),
    [
        (97, "A+"),
        (96.99, "A"),
        (93, "A"),
        (90, "A-"),
        (89.99, "B+"),
        (80, "B-"),
        (60, "D-"),
        (59.99, "F"),
    ],
)
def test_display_grades(points: float, grade: str) -> None:
    assert display_grade(points) == grade


@pytest.mark.parametrize(
    ("composite", "elo", "expected"),
    [
        (95, None, "platinum"),  # Elo not computed → composite alone
        (85, None, "gold"),
        (59.99, None, NO_BADGE),
        (95, 1600, "platinum"),
        (95, 1599, "gold"),  # composite qualifies for Platinum, Elo only for Gold
        (95, 1450, "silver"),
        (95, 1300, "bronze"),
        (95, 1299, NO_BADGE),
        (72, 1700, "silver"),  # Elo cannot lift a badge above the composite tier
        (60, 1300, "bronze"),
        (None, 1700, NO_BADGE),
    ],
)
def test_badges(composite: float | None, elo: float | None, expected: str) -> None:
    assert badge(composite, elo) == expected


def test_badge_values_are_the_public_tools_spellings() -> None:
    # plugin_eval.models.Badge: platinum, gold, silver, bronze, no_badge
    assert [name for name, _, _ in BADGES] + [NO_BADGE] == [
        "platinum",
        "gold",
        "silver",
        "bronze",
        "no_badge",
    ]
    assert set(BADGE_DISPLAY) == set(BADGE_STARS) == {*(n for n, _, _ in BADGES), NO_BADGE}


def test_confidence_comes_from_layers_with_data() -> None:
    assert confidence_label(["static"]) == "estimated"
    assert confidence_label(["static", "judge"]) == "assessed"
    assert confidence_label(["static", "monte_carlo"]) == "assessed"
    assert confidence_label(["static", "judge", "monte_carlo"]) == "certified"
    # a simulated Monte Carlo layer is never passed in: see test_evaluate's deep tests


def test_every_blend_names_the_layers_in_order() -> None:
    # blend_dimensions walks LAYERS and reads each dimension's weights by layer name.
    assert all(tuple(blend) == LAYERS for blend in BLEND.values())
