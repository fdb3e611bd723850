"""The composite score (SPEC §2): dimension weights, layer blends, grades, badges, confidence.

`blended[d] = Σ_l blend[d][l]·score[d][l] / Σ_l blend[d][l]` over the layers that really
produced a score for d (a skipped or failed layer is absent, never 0). A dimension no layer
measured is None and is left out of the composite, whose weights are renormalised over the
measured dimensions (PLUGINEVAL fix 4):

    raw = Σ_measured (W_d / Σ_measured W) × blended_d
    composite = clamp(raw × 100 × penalty, 0, 100)

At quick depth the measured weights are .25 + .20 + .10 + .06 + .03 + .02 = 0.66.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from evalflow.domain.plugineval.model import DIMENSIONS

DIMENSION_WEIGHTS: dict[str, float] = {
    "triggering_accuracy": 0.25,
    "orchestration_fitness": 0.20,
    "output_quality": 0.15,
    "scope_calibration": 0.12,
    "progressive_disclosure": 0.10,
    "token_efficiency": 0.06,
    "robustness": 0.05,
    "structural_completeness": 0.03,
    "code_template_quality": 0.02,
    "ecosystem_coherence": 0.02,
}

BLEND: dict[str, dict[str, float]] = {
    "triggering_accuracy": {"static": 0.15, "judge": 0.25, "monte_carlo": 0.60},
    "orchestration_fitness": {"static": 0.10, "judge": 0.70, "monte_carlo": 0.20},
    "output_quality": {"static": 0.00, "judge": 0.40, "monte_carlo": 0.60},
    "scope_calibration": {"static": 0.30, "judge": 0.55, "monte_carlo": 0.15},
    "progressive_disclosure": {"static": 0.80, "judge": 0.20, "monte_carlo": 0.00},
    "token_efficiency": {"static": 0.40, "judge": 0.10, "monte_carlo": 0.50},
    "robustness": {"static": 0.00, "judge": 0.20, "monte_carlo": 0.80},
    "structural_completeness": {"static": 0.90, "judge": 0.10, "monte_carlo": 0.00},
    "code_template_quality": {"static": 0.30, "judge": 0.70, "monte_carlo": 0.00},
    "ecosystem_coherence": {"static": 0.85, "judge": 0.15, "monte_carlo": 0.00},
}

# Every dimension's blend names these layers, in this order.
LAYERS: tuple[str, ...] = ("static", "judge", "monte_carlo")

LAYERS_FOR_DEPTH: dict[str, tuple[str, ...]] = {
    "quick": ("static",),
    "standard": ("static", "judge"),
    "deep": ("static", "judge", "monte_carlo"),
}

# Badge values are spelled as the public tool's JSON spells them, so scripts written against
# published PluginEval output read evalflow's; `BADGE_DISPLAY` is for human-facing tables.
NO_BADGE = "no_badge"
BADGES: tuple[tuple[str, float, float], ...] = (
    ("platinum", 90.0, 1600.0),
    ("gold", 80.0, 1500.0),
    ("silver", 70.0, 1400.0),
    ("bronze", 60.0, 1300.0),
)
BADGE_DISPLAY: dict[str, str] = {
    "platinum": "Platinum",
    "gold": "Gold",
    "silver": "Silver",
    "bronze": "Bronze",
    NO_BADGE: "no badge",
}
BADGE_STARS: dict[str, str] = {
    "platinum": "★★★★★",
    "gold": "★★★★",
    "silver": "★★★",
    "bronze": "★★",
    NO_BADGE: "—",
}

_DISPLAY_STEPS: tuple[tuple[float, str], ...] = (
    (97, "A+"),
    (93, "A"),
    (90, "A-"),
    (87, "B+"),
    (83, "B"),
    (80, "B-"),
    (77, "C+"),
    (73, "C"),
    (70, "C-"),
    (67, "D+"),
    (63, "D"),
    (60, "D-"),
)

SCORE_DECIMALS = 4
# The Elo kind when no pairwise judge decides matches: it compares dimension scores.
STATIC_SCORE = "static-score"
COMPOSITE_DECIMALS = 2


@dataclass(frozen=True, slots=True)
class DimensionScore:
    """A blended dimension: None when no layer measured it; CI only from stochastic layers."""

    score: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    layers: dict[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Composite:
    """The composite on 0–100 (None if nothing was measured) and how it was formed."""

    score: float | None
    raw: float | None
    measured_weight: float
    penalty: float


def blend_dimensions(
    layer_scores: Mapping[str, Mapping[str, float]],
    layer_cis: Mapping[str, Mapping[str, tuple[float, float]]] | None = None,
) -> dict[str, DimensionScore]:
    """Blend each dimension over the layers that produced it, renormalising blend weights.

    A CI is reported when at least one contributing layer has one; its bounds are blended
    with the same weights, a layer without a CI contributing its point score to both ends.
    """
    layer_cis = layer_cis or {}
    # Each layer's scores and CIs looked up once, not once per dimension.
    layers = [(layer, layer_scores.get(layer, {}), layer_cis.get(layer, {})) for layer in LAYERS]
    out: dict[str, DimensionScore] = {}
    for dim in DIMENSIONS:
        per_layer: dict[str, float | None] = {}
        num = den = lo = hi = 0.0
        has_ci = False
        blend = BLEND[dim]
        for layer, scores, cis in layers:
            value = scores.get(dim)
            per_layer[layer] = value
            w = blend[layer]
            if value is None or w <= 0.0:
                continue
            num += w * value
            den += w
            ci = cis.get(dim)
            if ci is not None:
                has_ci = True
                lo += w * ci[0]
                hi += w * ci[1]
            else:
                lo += w * value
                hi += w * value
        if den <= 0.0:
            out[dim] = DimensionScore(None, None, None, per_layer)
        elif has_ci:
            out[dim] = DimensionScore(num / den, lo / den, hi / den, per_layer)
        else:
            out[dim] = DimensionScore(num / den, None, None, per_layer)
    return out


def composite_score(blended: Mapping[str, float | None], penalty: float) -> Composite:
    """clamp(Σ_measured (W_d / Σ_measured W) × blended_d × 100 × penalty, 0, 100)."""
    measured = {d: s for d, s in blended.items() if s is not None}
    weight = sum(DIMENSION_WEIGHTS[d] for d in measured)
    if weight <= 0.0:
        return Composite(None, None, 0.0, penalty)
    raw = sum(DIMENSION_WEIGHTS[d] / weight * s for d, s in measured.items())
    score = max(0.0, min(100.0, raw * 100.0 * penalty))
    return Composite(score, raw, weight, penalty)


def letter_grade(score: float | None) -> str | None:
    """SPEC letters on a [0, 1] score (graded as displayed, i.e. rounded to 4 places)."""
    if score is None:
        return None
    s = round(score, SCORE_DECIMALS)
    if s >= 0.90:
        return "A"
    if s >= 0.80:
        return "B"
    if s >= 0.70:
        return "C"
    if s >= 0.60:
        return "D"
    return "F"


def display_grade(points: float | None) -> str | None:
    """The +/− display grade on a 0–100 scale."""
    if points is None:
        return None
    p = round(points, COMPOSITE_DECIMALS)
    for floor, grade in _DISPLAY_STEPS:
        if p >= floor:
            return grade
    return "F"


def badge(composite: float | None, elo: float | None) -> str:
    """Highest tier whose composite floor is met, and whose Elo floor too when Elo exists.

    Elo None means it was not computed: the badge is then decided by the composite alone.
    """
    if composite is None:
        return NO_BADGE
    c = round(composite, COMPOSITE_DECIMALS)
    for name, c_min, elo_min in BADGES:
        if c >= c_min and (elo is None or elo >= elo_min):
            return name
    return NO_BADGE


def confidence_label(measured_layers: Iterable[str]) -> str:
    """From the layers that measured data (not the requested depth; a simulation is not one).

    `certified` needs a judge and a real Monte Carlo run, `assessed` one of them,
    otherwise `estimated`.
    """
    stochastic = set(measured_layers) & {"judge", "monte_carlo"}
    if stochastic == {"judge", "monte_carlo"}:
        return "certified"
    if stochastic:
        return "assessed"
    return "estimated"
