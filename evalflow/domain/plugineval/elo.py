"""Elo of a skill against a gold corpus (SPEC §2, PLUGINEVAL fix 7), on top of `ranking.elo`.

Matches are really formed: the candidate meets every corpus skill on every dimension both
have a blended score for, and each pair is judged in BOTH orders (A vs B and B vs A); a pair
whose two verdicts do not mirror each other (S_ab + S_ba ≠ 1) is counted as a
disagreement. The comparator here is deterministic, so disagreements are 0 unless a
custom comparator is passed — the count is still computed and reported.

Sequential Elo depends on match order, so the reported rating is the mean of the
candidate's rating over `permutations` seeded random orders (start 1500, K = 32). The 95 %
CI is the 2.5/97.5 percentile of a seeded bootstrap (500 samples) that resamples
(opponent, dimension) pairs with both orders kept together. The corpus percentile is the
pairwise win rate against corpus skills: per opponent, the candidate's mean match score
over dimensions and both orders gives a win (> 0.5), draw (= 0.5) or loss; the rate is
(wins + draws / 2) / opponents × 100.

Without a pairwise judge the comparator compares the two skills' dimension scores, so the
rating is a *static-score Elo* (`kind`), which every surface says; `basis` names the depth and
layers both sides were scored with (the caller guarantees they are the same).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from evalflow.domain.plugineval.composite import STATIC_SCORE
from evalflow.domain.plugineval.model import DIMENSIONS
from evalflow.domain.ranking.elo import ELO_K, ELO_START, Match, sequential_elo

PERMUTATIONS = 100
BOOTSTRAP_SAMPLES = 500
CANDIDATE_ID = "candidate"
_TIE_TOLERANCE = 1e-9

Comparator = Callable[[float, float], float]


def compare_scores(a: float, b: float) -> float:
    """1 if a is higher, 0 if lower, 0.5 within 1e-9."""
    if abs(a - b) <= _TIE_TOLERANCE:
        return 0.5
    return 1.0 if a > b else 0.0


@dataclass(frozen=True, slots=True)
class EloResult:
    """The candidate's Elo; `computed` False (with a reason) when there was nothing to play."""

    computed: bool
    reason: str | None = None
    rating: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    corpus_percentile: float | None = None
    opponents: int = 0
    matches: int = 0
    disagreements: int = 0
    permutations: int = 0
    bootstrap_samples: int = 0
    kind: str = STATIC_SCORE
    basis: str | None = None


def skill_elo(
    candidate: Mapping[str, float | None],
    corpus: Mapping[str, Mapping[str, float | None]],
    *,
    seed: int = 0,
    permutations: int = PERMUTATIONS,
    bootstrap_samples: int = BOOTSTRAP_SAMPLES,
    comparator: Comparator = compare_scores,
    basis: str | None = None,
) -> EloResult:
    """Play the candidate's blended dimension scores against each corpus skill's."""
    if not corpus:
        return EloResult(False, "the corpus is empty", basis=basis)
    units: list[tuple[Match, Match]] = []
    per_opponent: dict[str, list[float]] = {}
    disagreements = 0
    for opponent in sorted(corpus):
        scores = corpus[opponent]
        for dim in DIMENSIONS:
            a, b = candidate.get(dim), scores.get(dim)
            if a is None or b is None:
                continue
            s_ab = comparator(a, b)
            s_ba = comparator(b, a)
            if abs(s_ab + s_ba - 1.0) > 1e-12:
                disagreements += 1
            units.append((Match(CANDIDATE_ID, opponent, s_ab), Match(opponent, CANDIDATE_ID, s_ba)))
            per_opponent.setdefault(opponent, []).extend((s_ab, 1.0 - s_ba))
    if not units:
        return EloResult(
            False, "no dimension is scored for both the skill and the corpus", basis=basis
        )

    players = [CANDIDATE_ID, *sorted(per_opponent)]
    matches = [m for unit in units for m in unit]
    rng = np.random.default_rng(seed)
    ratings = [
        sequential_elo(
            [matches[i] for i in rng.permutation(len(matches))],
            players,
            start=ELO_START,
            k=ELO_K,
        )[CANDIDATE_ID]
        for _ in range(permutations)
    ]
    boot: list[float] = []
    for _ in range(bootstrap_samples):
        picked = rng.integers(0, len(units), len(units))
        sample = [m for i in picked for m in units[i]]
        boot.append(sequential_elo(sample, players, start=ELO_START, k=ELO_K)[CANDIDATE_ID])
    lo, hi = (float(x) for x in np.percentile(boot, [2.5, 97.5]))

    outcomes: list[float] = []
    for opp_scores in per_opponent.values():
        mean = sum(opp_scores) / len(opp_scores)
        outcomes.append(1.0 if mean > 0.5 else 0.5 if mean == 0.5 else 0.0)
    return EloResult(
        computed=True,
        rating=float(np.mean(ratings)),
        ci_low=lo,
        ci_high=hi,
        corpus_percentile=100.0 * sum(outcomes) / len(outcomes),
        opponents=len(per_opponent),
        matches=len(matches),
        disagreements=disagreements,
        permutations=permutations,
        bootstrap_samples=bootstrap_samples,
        basis=basis,
    )
