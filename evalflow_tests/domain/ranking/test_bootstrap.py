"""Seeded bootstrap CIs, resampling unit, separability, and the vectorised Elo replay."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalflow.domain.ranking import bootstrap
from evalflow.domain.ranking.bootstrap import (
    RATING_COLUMNS,
    _elo_sequences,
    bootstrap_win_matrices,
    elo_batch,
    prepare,
    rate,
    separability,
)
from evalflow.domain.ranking.elo import sequential_elo
from evalflow.domain.ranking.matches import to_elo_matches
from evalflow.errors import InputError


def _random_matches(n: int, p_a: float, seed: int, prds: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    u = rng.random(n)
    return pd.DataFrame(
        {
            "benchmark": "bench",
            "prd_id": [f"p{i % prds}" for i in range(n)],
            "unit_id": [f"u{i}" for i in range(n)],
            "a": "alpha",
            "b": "beta",
            "score_a": np.where(u < p_a, 1.0, 0.0),
        }
    )


def test_seeded_bootstrap_is_reproducible_and_seed_sensitive() -> None:
    matches = _random_matches(120, 0.6, seed=1)
    first = rate(matches, n_samples=100, seed=7)
    again = rate(matches, n_samples=100, seed=7)
    other = rate(matches, n_samples=100, seed=8)
    pd.testing.assert_frame_equal(first.rating, again.rating)
    assert not np.allclose(first.rating["ci_low"], other.rating["ci_low"])
    np.testing.assert_array_equal(first.rating["rating"], other.rating["rating"])


def test_clear_winner_is_separable() -> None:
    report = rate(_random_matches(200, 0.95, seed=2), n_samples=200, seed=0)
    bt = report.rating[report.rating["method"] == "bradley_terry"].set_index("player")
    assert bt.loc["alpha", "ci_low"] > bt.loc["beta", "ci_high"]
    assert report.separability == 1.0


def test_two_equal_frameworks_are_within_noise() -> None:
    matches = _random_matches(200, 0.5, seed=3)
    report = rate(matches, n_samples=200, seed=0)
    bt = report.rating[report.rating["method"] == "bradley_terry"].set_index("player")
    assert bt.loc["alpha", "ci_low"] < bt.loc["beta", "ci_high"]
    assert bt.loc["beta", "ci_low"] < bt.loc["alpha", "ci_high"]
    assert report.separability == 0.0


def test_rating_table_shape_and_player_stats() -> None:
    matches = pd.DataFrame(
        {
            "a": ["x", "x", "x", "y"],
            "b": ["y", "y", "z", "z"],
            "score_a": [1.0, 0.5, 0.0, 1.0],
        }
    )
    report = rate(matches, players=["idle"], n_samples=50, seed=0)
    rating = report.rating
    assert list(rating.columns) == list(RATING_COLUMNS)
    assert sorted(set(rating["method"])) == ["bradley_terry", "elo"]
    assert (rating["ci_low"] <= rating["ci_high"]).all()
    stats = rating[rating["method"] == "elo"].set_index("player")
    assert stats.loc["x", "n_matches"] == 3
    assert stats.loc["x", "win_rate"] == pytest.approx(1.5 / 3)
    # Pairwise win rate: 0.75 against y (1 win, 1 draw), 0 against z → mean 37.5.
    assert stats.loc["x", "percentile"] == pytest.approx(37.5)
    assert stats.loc["idle", "n_matches"] == 0
    assert np.isnan(stats.loc["idle", "percentile"])
    assert report.resample_unit == "match"
    bt = rating[rating["method"] == "bradley_terry"]
    assert bt["rating"].mean() == pytest.approx(1500.0)


def test_several_prds_resample_whole_prds() -> None:
    matches = _random_matches(60, 0.7, seed=4, prds=3)
    res = prepare(matches)
    assert res.unit == "prd"
    assert res.n_draw == 3
    wins = bootstrap_win_matrices(res, 40, seed=1)
    per_prd = 20
    # Every sample is a multiset of 3 whole PRDs of 20 matches each.
    np.testing.assert_allclose(wins.sum(axis=(1, 2)), 3 * per_prd)
    assert rate(matches, n_samples=40, seed=1).resample_unit == "prd"


def test_match_resampling_keeps_sample_size() -> None:
    res = prepare(_random_matches(37, 0.5, seed=5))
    wins = bootstrap_win_matrices(res, 25, seed=3)
    np.testing.assert_allclose(wins.sum(axis=(1, 2)), 37.0)


def test_bradley_terry_samples_are_fitted_in_bounded_blocks(monkeypatch) -> None:
    # One batch of B × P × P Hessians was 5.4 GB at 500 samples of 500 players: blocks of
    # win matrices are fitted one at a time, each sample exactly as in one batch.
    res = prepare(_random_matches(400, 0.6, seed=6))
    n = res.encoded.n_players
    whole = bootstrap.bootstrap_bradley_terry(res, n_samples=30, seed=2).samples
    monkeypatch.setattr(bootstrap, "_FIT_ELEMENTS", 4 * n * n)
    blocks = list(bootstrap._win_matrix_blocks(res, 30, seed=2))
    assert max(len(b) for b in blocks) == 4 and sum(len(b) for b in blocks) == 30
    samples = bootstrap.bootstrap_bradley_terry(res, n_samples=30, seed=2).samples
    np.testing.assert_array_equal(samples, whole)


def test_elo_reference_is_left_out_over_its_replay_budget() -> None:
    # 500 runs of one PRD are 1.25 M matches: replaying them for 500 samples was ~40 CPU-min.
    matches = _random_matches(300, 0.6, seed=8)
    within = rate(matches, n_samples=40, seed=1, elo_budget=40 * 300)
    over = rate(matches, n_samples=40, seed=1, elo_budget=40 * 300 - 1)
    assert within.elo_left_out is None and set(within.rating["method"]) == {"bradley_terry", "elo"}
    assert set(over.rating["method"]) == {"bradley_terry"}
    assert over.elo_left_out is not None and "40 samples × 300 matches" in over.elo_left_out
    bt = within.rating[within.rating["method"] == "bradley_terry"].reset_index(drop=True)
    pd.testing.assert_frame_equal(over.rating, bt)


@pytest.mark.parametrize("prds", [1, 3])
def test_vectorised_elo_matches_sequential_elo(prds: int) -> None:
    rng = np.random.default_rng(9)
    names = np.array(["a", "b", "c", "d"])
    a = rng.integers(0, 4, 90)
    b = (a + rng.integers(1, 4, 90)) % 4
    matches = pd.DataFrame(
        {
            "prd_id": [f"p{i % prds}" for i in range(90)],
            "a": names[a],
            "b": names[b],
            "score_a": rng.choice([0.0, 0.5, 1.0], 90),
        }
    )
    res = prepare(matches)
    sequences = _elo_sequences(res, 6, seed=2)
    batch = elo_batch(res.encoded, sequences)
    elo_matches = to_elo_matches(matches)
    for row in range(6):
        played = [elo_matches[i] for i in sequences[row] if i >= 0]
        expected = sequential_elo(played, res.encoded.players)
        np.testing.assert_allclose(
            batch[row], [expected[p] for p in res.encoded.players], rtol=0, atol=1e-9
        )


def test_separability_counts_non_overlapping_pairs() -> None:
    low = np.array([1600.0, 1450.0, 1440.0])
    high = np.array([1700.0, 1550.0, 1460.0])
    assert separability(low, high) == pytest.approx(2 / 3)
    assert separability(low[:1], high[:1]) is None


def test_refuses_mixed_benchmarks_and_empty_tables() -> None:
    matches = _random_matches(10, 0.5, seed=6)
    matches.loc[0, "benchmark"] = "other"
    with pytest.raises(InputError, match="several benchmarks"):
        rate(matches, n_samples=10)
    with pytest.raises(InputError, match="no matches"):
        rate(matches.iloc[:0], n_samples=10)
