"""Elo against a corpus: both orders, disagreement flags, permutation mean, bootstrap CI."""

from __future__ import annotations

import pytest

from evalflow.domain.plugineval.elo import compare_scores, skill_elo
from evalflow.domain.ranking.elo import Match, sequential_elo

DIMS_GOOD = {"triggering_accuracy": 0.9, "orchestration_fitness": 0.9, "token_efficiency": 0.9}
DIMS_BAD = {"triggering_accuracy": 0.2, "orchestration_fitness": 0.3, "token_efficiency": 0.4}


def test_compare_scores() -> None:
    assert compare_scores(0.9, 0.8) == 1.0
    assert compare_scores(0.8, 0.9) == 0.0
    assert compare_scores(0.8, 0.8 + 1e-12) == 0.5


def test_single_match_in_both_orders_equals_hand_elo() -> None:
    # candidate beats one opponent on one dimension, judged in both orders:
    # A vs B: E = .5 → R_A = 1516, R_B = 1484
    # B vs A: E_B = 1/(1 + 10^((1516−1484)/400)) = 0.45402 → S_B = 0
    #   R_A = 1516 + 32 × 0.45402 = 1530.53 (either order gives the same result here
    #   because both matches have the same outcome for A)
    res = skill_elo({"triggering_accuracy": 0.9}, {"o": {"triggering_accuracy": 0.1}})
    expected = sequential_elo(
        [Match("candidate", "o", 1.0), Match("o", "candidate", 0.0)], ["candidate", "o"]
    )["candidate"]
    assert res.rating == pytest.approx(expected)
    assert res.rating == pytest.approx(1516 + 32 * (1 - 1 / (1 + 10 ** (-32 / 400))), abs=1e-6)
    assert res.matches == 2
    assert res.disagreements == 0
    assert res.corpus_percentile == 100.0


def test_rating_is_order_independent_mean_and_seeded() -> None:
    corpus = {"a": DIMS_BAD, "b": DIMS_GOOD, "c": {"triggering_accuracy": 0.5}}
    r1 = skill_elo(DIMS_GOOD | {"triggering_accuracy": 0.6}, corpus, seed=5)
    r2 = skill_elo(DIMS_GOOD | {"triggering_accuracy": 0.6}, dict(reversed(corpus.items())), seed=5)
    assert r1 == r2  # corpus iteration order does not matter
    assert r1.permutations == 100
    assert r1.bootstrap_samples == 500
    assert r1.ci_low <= r1.rating <= r1.ci_high
    # 3 + 3 + 1 dimension pairs, two orders each
    assert r1.matches == 14
    # wins vs a (3/3), draws vs b? b: .6 < .9 loses one, draws two → mean .333 → loss;
    # vs c: .6 > .5 → win → 2 wins of 3 opponents
    assert r1.corpus_percentile == pytest.approx(200 / 3)


def test_better_skill_rates_higher() -> None:
    corpus = {f"s{i}": {"triggering_accuracy": i / 11} for i in range(1, 11)}
    high = skill_elo({"triggering_accuracy": 0.95}, corpus)
    low = skill_elo({"triggering_accuracy": 0.05}, corpus)
    assert high.rating > 1500 > low.rating
    assert high.corpus_percentile == 100.0
    assert low.corpus_percentile == 0.0


def test_position_bias_is_flagged() -> None:
    def first_wins(a: float, b: float) -> float:
        return 1.0  # a comparator with total position bias

    res = skill_elo(DIMS_GOOD, {"o": DIMS_BAD}, comparator=first_wins)
    assert res.disagreements == 3


def test_not_computed_without_corpus_or_overlap() -> None:
    assert not skill_elo(DIMS_GOOD, {}).computed
    res = skill_elo({"robustness": 0.5}, {"o": {"triggering_accuracy": 0.5}})
    assert not res.computed
    assert "no dimension" in res.reason
