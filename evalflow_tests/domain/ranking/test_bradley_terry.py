"""Bradley–Terry: closed forms, ties as half wins, order independence, separation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalflow.domain.ranking.bradley_terry import (
    ELO_SCALE,
    bradley_terry,
    fit_bradley_terry_batch,
    win_matrix,
)
from evalflow.domain.ranking.elo import Match


def _matches(spec: list[tuple[str, str, float, int]]) -> list[Match]:
    return [Match(a, b, s) for a, b, s, n in spec for _ in range(n)]


def test_two_players_strength_ratio_is_wins_over_losses() -> None:
    ratings = bradley_terry(_matches([("a", "b", 1.0, 3), ("a", "b", 0.0, 1)]))
    # p_a / p_b = 3 / 1, so the gap is 400·log10(3) = 190.8485 Elo points around 1500.
    gap = 400.0 * math.log10(3.0)
    assert ratings["a"] - ratings["b"] == pytest.approx(gap, abs=1e-3)
    assert ratings["a"] + ratings["b"] == pytest.approx(3000.0, abs=1e-9)


def test_three_players_hand_computed() -> None:
    # Strengths 4 : 2 : 1 reproduce these counts exactly (a–b 2:1, b–c 2:1, a–c 4:1), so the
    # MLE is θ = ln(4, 2, 1) centred = (ln 2, 0, −ln 2): ratings 1500 ± 400·log10(2).
    ratings = bradley_terry(
        _matches(
            [
                ("a", "b", 1.0, 2),
                ("a", "b", 0.0, 1),
                ("b", "c", 1.0, 2),
                ("b", "c", 0.0, 1),
                ("a", "c", 1.0, 4),
                ("a", "c", 0.0, 1),
            ]
        )
    )
    step = 400.0 * math.log10(2.0)
    assert ratings["a"] == pytest.approx(1500.0 + step, abs=1e-3)
    assert ratings["b"] == pytest.approx(1500.0, abs=1e-3)
    assert ratings["c"] == pytest.approx(1500.0 - step, abs=1e-3)


def test_draws_count_as_half_wins() -> None:
    with_draws = bradley_terry(_matches([("a", "b", 1.0, 2), ("a", "b", 0.5, 2)]))
    plain = bradley_terry(_matches([("a", "b", 1.0, 3), ("a", "b", 0.0, 1)]))
    assert with_draws == pytest.approx(plain, abs=1e-9)
    even = bradley_terry(_matches([("a", "b", 0.5, 4)]))
    assert even == pytest.approx({"a": 1500.0, "b": 1500.0}, abs=1e-9)


def test_order_independent_bit_for_bit() -> None:
    rng = np.random.default_rng(5)
    names = np.array(["a", "b", "c", "d", "e"])
    a = rng.integers(0, 5, 400)
    b = (a + rng.integers(1, 5, 400)) % 5
    frame = pd.DataFrame(
        {"a": names[a], "b": names[b], "score_a": rng.choice([0.0, 0.5, 1.0], 400)}
    )
    shuffled = frame.sample(frac=1.0, random_state=3)
    assert bradley_terry(frame) == bradley_terry(shuffled)
    # Swapping sides (b vs a with 1 − score) is the same match.
    swapped = pd.DataFrame({"a": frame["b"], "b": frame["a"], "score_a": 1.0 - frame["score_a"]})
    assert bradley_terry(swapped) == pytest.approx(bradley_terry(frame), abs=1e-9)


def test_perfect_separation_stays_finite_and_ordered() -> None:
    ratings = bradley_terry(_matches([("a", "b", 1.0, 3), ("b", "c", 1.0, 3)]))
    assert all(math.isfinite(r) for r in ratings.values())
    assert ratings["a"] > ratings["b"] > ratings["c"]
    assert sum(ratings.values()) / 3 == pytest.approx(1500.0)


def test_player_without_matches_sits_at_the_mean_and_mean_is_1500() -> None:
    ratings = bradley_terry(_matches([("a", "b", 1.0, 2), ("a", "b", 0.0, 1)]), players=["z"])
    assert set(ratings) == {"a", "b", "z"}
    assert ratings["z"] == pytest.approx(1500.0, abs=1e-6)
    assert np.mean(list(ratings.values())) == pytest.approx(1500.0, abs=1e-9)


def test_batched_fit_equals_one_by_one() -> None:
    rng = np.random.default_rng(11)
    wins = rng.integers(0, 6, size=(7, 4, 4)).astype(float)
    wins[:, np.arange(4), np.arange(4)] = 0.0
    batch = fit_bradley_terry_batch(wins)
    assert batch.converged
    for i in range(len(wins)):
        single = fit_bradley_terry_batch(wins[i : i + 1])
        np.testing.assert_allclose(batch.ratings[i], single.ratings[0], atol=1e-7)
    # The MLE's score equations: expected wins equal actual wins (up to the tiny prior).
    theta = batch.theta
    p = 1.0 / (1.0 + np.exp(-(theta[:, :, None] - theta[:, None, :])))
    games = wins + wins.transpose(0, 2, 1)
    np.testing.assert_allclose((games * p).sum(axis=2), wins.sum(axis=2), atol=1e-4)


def test_win_matrix_and_elo_scale() -> None:
    w = win_matrix(np.array([0, 0, 1]), np.array([1, 1, 0]), np.array([1.0, 0.5, 1.0]), 2)
    np.testing.assert_array_equal(w, [[0.0, 1.5], [1.5, 0.0]])
    assert math.isclose(ELO_SCALE, 400.0 / math.log(10.0))


def test_nonpositive_prior_is_refused() -> None:
    with pytest.raises(ValueError, match="prior"):
        fit_bradley_terry_batch(np.zeros((1, 2, 2)), prior=0.0)
