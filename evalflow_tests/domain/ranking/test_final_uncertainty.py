"""Monte Carlo uncertainty of Final from k-run vote disagreement."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalflow.domain.ranking.final_uncertainty import (
    CHECK_VOTE_COLUMNS,
    check_coefficients,
    final_uncertainty,
    simulate_finals,
)
from evalflow.errors import InputError


def _worked_example(run_key: str = "r1", k: int = 3) -> pd.DataFrame:
    """SPEC §1's worked example, all votes unanimous: Final = 123/200 = 0.615."""
    spec = [  # (story, weight, ac, kind, met, total)
        ("S1", 3, "S1-AC1", "I", 3, 4),
        ("S1", 3, "S1-AC1", "T", 1, 2),
        ("S1", 3, "S1-AC2", "I", 1, 1),
        ("S1", 3, "S1-AC2", "T", 1, 1),
        ("S2", 2, "S2-AC1", "I", 1, 2),
        ("S2", 2, "S2-AC1", "T", 0, 1),
        ("S3", 0, "S3-AC1", "I", 0, 1),
        ("S3", 0, "S3-AC1", "T", 0, 1),
    ]
    rows = [
        (run_key, story, weight, ac, f"{ac}-{kind}{i}", kind, k if i < met else 0, k)
        for story, weight, ac, kind, met, total in spec
        for i in range(total)
    ]
    return pd.DataFrame(rows, columns=list(CHECK_VOTE_COLUMNS))


def test_unanimous_votes_give_zero_width_ci_at_the_deterministic_final() -> None:
    result = final_uncertainty(_worked_example(), n_simulations=500, seed=1)
    row = result.runs.iloc[0]
    assert row["final_majority"] == pytest.approx(0.615, abs=1e-12)
    assert row["ci_low"] == row["ci_high"] == row["final_majority"]
    assert row["final_mean"] == pytest.approx(0.615, abs=1e-12)
    assert row["n_borderline"] == 0
    assert row["n_checks"] == 13


def test_coefficients_sum_to_one_over_scored_stories() -> None:
    coefficients = check_coefficients(_worked_example())
    assert coefficients["coefficient"].sum() == pytest.approx(1.0)
    assert (coefficients.loc[coefficients["weight"] == 0, "coefficient"] == 0).all()


def test_borderline_checks_widen_the_interval_around_the_expected_final() -> None:
    votes = _worked_example()
    votes.loc[votes["check_id"] == "S1-AC1-I3", "met_votes"] = 1  # was 0 of 3
    votes.loc[votes["check_id"] == "S2-AC1-T0", "met_votes"] = 2  # was 0 of 3
    result = final_uncertainty(votes, n_simulations=4000, seed=3)
    row = result.runs.iloc[0]
    coefficients = check_coefficients(votes)
    expected = (coefficients["coefficient"] * coefficients["met_votes"] / coefficients["k"]).sum()
    assert row["final_mean"] == pytest.approx(expected, abs=0.005)
    assert row["ci_low"] < row["final_majority"] < row["ci_high"]
    # Majority: I3 stays UNMET (1 of 3); S2's only T-check flips to MET (2 of 3), raising
    # S2-AC1 by 0.4 and Final by (2 / 5)·0.4 = 0.16.
    assert row["final_majority"] == pytest.approx(0.615 + 0.16, abs=1e-12)
    assert row["n_borderline"] == 2


def test_seeded_simulation_is_reproducible_and_seed_sensitive() -> None:
    votes = _worked_example()
    votes["met_votes"] = np.where(votes.index % 2 == 0, 2, 1)
    _, _, first = simulate_finals(votes, n_simulations=300, seed=5)
    _, _, again = simulate_finals(votes, n_simulations=300, seed=5)
    _, _, other = simulate_finals(votes, n_simulations=300, seed=6)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_pair_probabilities_and_within_noise() -> None:
    strong = _worked_example("strong")
    strong["met_votes"] = strong["k"]
    twin = _worked_example("twin")
    base = _worked_example("base")
    shaky = _worked_example("shaky")
    shaky.loc[shaky["check_id"] == "S2-AC1-T0", "met_votes"] = 2
    votes = pd.concat([strong, twin, base, shaky], ignore_index=True)
    result = final_uncertainty(votes, n_simulations=2000, seed=0)

    identical = result.pair("base", "twin")
    assert identical["p_tie"] == 1.0
    assert result.within_noise("base", "twin")

    clear = result.pair("strong", "base")
    assert clear["p_a_greater"] == 1.0 and clear["p_b_greater"] == 0.0
    assert not result.within_noise("strong", "base")
    assert not result.within_noise("base", "strong")

    # shaky = base + one 2-of-3 check: ahead of base about 2/3 of the time.
    shaky_vs_base = result.pair("shaky", "base")
    assert shaky_vs_base["p_a_greater"] == pytest.approx(2 / 3, abs=0.04)
    assert shaky_vs_base["p_a_greater"] + shaky_vs_base["p_tie"] == pytest.approx(1.0)
    assert result.within_noise("shaky", "base") and result.within_noise("base", "shaky")
    flipped = result.pair("base", "shaky")
    assert flipped["p_b_greater"] == shaky_vs_base["p_a_greater"]
    assert len(result.pairs) == 6


def test_an_ac_without_a_t_check_is_refused() -> None:
    votes = _worked_example()
    votes = votes[~votes["check_id"].str.startswith("S2-AC1-T")]
    with pytest.raises(InputError, match="S2-AC1 has no T-check"):
        final_uncertainty(votes, n_simulations=10)


def test_invalid_votes_are_input_errors() -> None:
    votes = _worked_example()
    votes.loc[0, "met_votes"] = 4
    with pytest.raises(InputError, match="exceeds k"):
        final_uncertainty(votes, n_simulations=10)
    unscored = _worked_example()
    unscored["weight"] = 0
    with pytest.raises(InputError, match="Σw = 0"):
        final_uncertainty(unscored, n_simulations=10)
    with pytest.raises(InputError, match="missing column"):
        final_uncertainty(_worked_example().drop(columns="kind"))


def test_the_interval_follows_the_voted_outcome() -> None:
    """Final's CI comes from the voted outcome: an UNSCORED vote is no vote against (MET, MET,
    UNSCORED never flips), and under self-preference a borderline check is held where rule 4
    put it, so the interval cannot lie above a Final the rule allows."""
    votes = _worked_example()
    votes["unmet_votes"] = votes["k"] - votes["met_votes"]
    votes["majority"] = np.where(votes["met_votes"] * 2 > votes["k"], "MET", "UNMET")
    stopped = votes["check_id"] == "S1-AC1-I0"  # MET, MET, UNSCORED
    votes.loc[stopped, ["met_votes", "unmet_votes"]] = [2, 0]
    split = votes["check_id"] == "S1-AC1-I3"  # MET, MET, UNMET: rule 4 made it UNMET
    votes.loc[split, ["met_votes", "unmet_votes", "majority"]] = [2, 1, "UNMET"]
    row = final_uncertainty(votes.assign(self_preference=True), n_simulations=500).runs.iloc[0]
    assert row["final_majority"] == pytest.approx(0.615, abs=1e-12)
    assert row["ci_low"] == row["ci_high"] == pytest.approx(0.615, abs=1e-12)
    # Without rule 4 the MET, MET, UNMET split is drawn (2/3 MET); the stopped check never is.
    free = final_uncertainty(votes.assign(self_preference=False), n_simulations=500).runs
    assert free["ci_high"].iloc[0] > 0.615 and free["n_borderline"].iloc[0] == 1
