"""Forming matches from AC scores, the baseline-hash guard, and position-bias resolution."""

from __future__ import annotations

import pandas as pd
import pydantic
import pytest

from evalflow.domain.ranking.matches import (
    MATCH_COLUMNS,
    PairwiseVerdicts,
    form_matches,
    resolve_position_bias,
    to_elo_matches,
)
from evalflow.errors import InputError


def _scores(rows: list[tuple[str, str, str, str, float]], **fixed: object) -> pd.DataFrame:
    """rows: (run_key, framework, story_id, ac_id, ac_score)."""
    frame = pd.DataFrame(rows, columns=["run_key", "framework", "story_id", "ac_id", "ac_score"])
    defaults = {"benchmark": "bench", "baseline_sha256": "h1", "prd_id": None}
    for column, value in {**defaults, **fixed}.items():
        frame[column] = value
    return frame


def test_wins_draws_losses_per_ac_with_tolerance() -> None:
    table = _scores(
        [
            ("r1", "alpha", "S1", "S1-AC1", 0.6),
            ("r1", "alpha", "S1", "S1-AC2", 0.5 + 1e-13),
            ("r1", "alpha", "S2", "S2-AC1", 0.0),
            ("r2", "beta", "S1", "S1-AC1", 0.5),
            ("r2", "beta", "S1", "S1-AC2", 0.5),
            ("r2", "beta", "S2", "S2-AC1", 1.0),
        ]
    )
    matches = form_matches(table)
    assert list(matches.columns) == list(MATCH_COLUMNS)
    assert matches[["unit_id", "a", "b", "score_a"]].values.tolist() == [
        ["S1-AC1", "alpha", "beta", 1.0],
        ["S1-AC2", "alpha", "beta", 0.5],
        ["S2-AC1", "alpha", "beta", 0.0],
    ]
    assert set(matches["prd_id"]) == {""}
    assert [m.score_a for m in to_elo_matches(matches)] == [1.0, 0.5, 0.0]


def test_story_unit_uses_mean_of_ac_scores() -> None:
    table = _scores(
        [
            ("r1", "alpha", "S1", "S1-AC1", 1.0),
            ("r1", "alpha", "S1", "S1-AC2", 0.0),
            ("r2", "beta", "S1", "S1-AC1", 0.5),
            ("r2", "beta", "S1", "S1-AC2", 0.4),
        ]
    )
    matches = form_matches(table, unit="story")
    assert matches[["unit_id", "a", "b", "score_a"]].values.tolist() == [
        ["S1", "alpha", "beta", 1.0]
    ]


def test_mixed_baseline_hashes_are_refused_and_named() -> None:
    table = _scores([("r1", "alpha", "S1", "S1-AC1", 1.0), ("r2", "beta", "S1", "S1-AC1", 0.0)])
    table.loc[1, "baseline_sha256"] = "h2"
    with pytest.raises(InputError, match="h1, h2") as caught:
        form_matches(table)
    assert "bench" in str(caught.value)


def test_different_hashes_in_different_prds_are_fine() -> None:
    table = _scores(
        [
            ("r1", "alpha", "S1", "S1-AC1", 1.0),
            ("r2", "beta", "S1", "S1-AC1", 0.0),
            ("r3", "alpha", "S1", "S1-AC1", 0.0),
            ("r4", "beta", "S1", "S1-AC1", 0.0),
        ]
    )
    table["prd_id"] = ["p1", "p1", "p2", "p2"]
    table["baseline_sha256"] = ["h1", "h1", "h2", "h2"]
    matches = form_matches(table)
    assert matches[["prd_id", "a", "b", "score_a"]].values.tolist() == [
        ["p1", "alpha", "beta", 1.0],
        ["p2", "alpha", "beta", 0.5],
    ]


def test_several_runs_of_a_framework_are_distinct_players_unless_aggregated() -> None:
    table = _scores(
        [
            ("alpha.1", "alpha", "S1", "S1-AC1", 1.0),
            ("alpha.2", "alpha", "S1", "S1-AC1", 0.0),
            ("b.1", "beta", "S1", "S1-AC1", 0.4),
        ]
    )
    distinct = form_matches(table)
    assert distinct[["a", "b", "score_a"]].values.tolist() == [
        ["alpha.1", "alpha.2", 1.0],
        ["alpha.1", "beta", 1.0],
        ["alpha.2", "beta", 0.0],
    ]
    merged = form_matches(table, aggregate_runs=True)
    assert merged[["a", "b", "score_a"]].values.tolist() == [["alpha", "beta", 1.0]]
    by_run = form_matches(table, player="run_key")
    assert set(by_run["a"]) | set(by_run["b"]) == {"alpha.1", "alpha.2", "b.1"}


def test_pairs_compare_only_shared_units() -> None:
    table = _scores(
        [
            ("r1", "alpha", "S1", "S1-AC1", 1.0),
            ("r1", "alpha", "S1", "S1-AC2", 1.0),
            ("r2", "beta", "S1", "S1-AC1", 1.0),
        ]
    )
    assert form_matches(table)["unit_id"].tolist() == ["S1-AC1"]


def test_bad_scores_and_duplicates_are_input_errors() -> None:
    table = _scores([("r1", "alpha", "S1", "S1-AC1", 1.5), ("r2", "beta", "S1", "S1-AC1", 0.0)])
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        form_matches(table)
    duplicate = _scores(
        [("r1", "alpha", "S1", "S1-AC1", 1.0), ("r1", "alpha", "S1", "S1-AC1", 0.0)]
    )
    with pytest.raises(InputError, match="more than once"):
        form_matches(duplicate)
    with pytest.raises(InputError, match="missing column"):
        form_matches(duplicate.drop(columns="baseline_sha256"))


def test_position_bias_flags_counts_and_draws() -> None:
    judged = resolve_position_bias(
        [
            PairwiseVerdicts(
                a="alpha",
                b="beta",
                unit_ids=["u1", "u2", "u3", "u4"],
                # u1: alpha both times; u2: "first" both times (bias); u3: tie both times;
                # u4: beta shown first wins, alpha shown first ties (disagreement).
                a_first=["first", "first", "tie", "tie"],
                b_first=["second", "first", "tie", "first"],
            )
        ]
    )
    table = judged.table
    assert table["position_bias"].tolist() == [False, True, False, True]
    assert judged.n_position_bias == 2
    assert judged.n_judged == 4
    assert judged.position_bias_rate == 0.5
    assert judged.matches()["score_a"].tolist() == [1.0, 0.5, 0.5, 0.5]


def test_pairwise_verdicts_are_validated() -> None:
    with pytest.raises(pydantic.ValidationError):
        PairwiseVerdicts(a="x", b="y", unit_ids=["u1"], a_first=["first"], b_first=[])
    with pytest.raises(pydantic.ValidationError):
        PairwiseVerdicts(a="x", b="x", unit_ids=["u1"], a_first=["first"], b_first=["first"])
    with pytest.raises(pydantic.ValidationError):
        PairwiseVerdicts(a="x", b="y", unit_ids=["u1"], a_first=["left"], b_first=["first"])
