"""Worked examples for sequential Elo (SPEC §2: start 1500, K = 32)."""

from __future__ import annotations

import pytest

from evalflow.domain.ranking.elo import ELO_K, Match, expected_score, sequential_elo


def test_equal_ratings_win_moves_16_points_each_way() -> None:
    ratings = sequential_elo([Match("a", "b", 1.0)])
    assert ratings == {"a": 1516.0, "b": 1484.0}


def test_draw_between_1600_and_1400() -> None:
    # E = 1 / (1 + 10^(-200/400)) = 0.7597469266...; the favourite loses 32·0.2597469 points.
    e_a = expected_score(1600.0, 1400.0)
    assert e_a == pytest.approx(0.7597469266479578, abs=1e-15)
    new_a = 1600.0 + ELO_K * (0.5 - e_a)
    new_b = 1400.0 + ELO_K * (0.5 - (1.0 - e_a))
    assert new_a == pytest.approx(1591.688098347, abs=1e-9)
    assert new_b == pytest.approx(1408.311901653, abs=1e-9)


def test_unplayed_players_start_at_1500_and_points_are_conserved() -> None:
    matches = [Match("a", "b", 1.0), Match("b", "c", 0.5), Match("c", "a", 0.0)]
    ratings = sequential_elo(matches, players=["d"])
    assert ratings["d"] == 1500.0
    assert sum(ratings.values()) == pytest.approx(4 * 1500.0)
