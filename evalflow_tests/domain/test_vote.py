from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalflow.domain.vote import agreement, fleiss_kappa, majority_vote
from evalflow.errors import InputError


def verdicts(statuses: dict[str, list[str]], run_key: str = "r") -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"run_key": run_key, "check_id": check, "run": i + 1, "status": status}
            for check, runs in statuses.items()
            for i, status in enumerate(runs)
        ]
    )


def test_majority_and_borderline() -> None:
    votes = majority_vote(
        verdicts(
            {
                "unanimous": ["MET", "MET", "MET"],
                "two_met": ["MET", "UNMET", "MET"],
                "two_unmet": ["UNMET", "MET", "UNMET"],
                "split": ["MET", "UNMET", "UNSCORED"],
                "unscored": ["UNSCORED", "UNSCORED", "MET"],
            }
        ),
        3,
    ).set_index("check_id")
    assert votes["majority"].to_dict() == {
        "split": "UNSCORED",  # no status has more than half the runs
        "two_met": "MET",
        "two_unmet": "UNMET",
        "unanimous": "MET",
        "unscored": "UNSCORED",
    }
    # Borderline: the decided votes differ; an UNSCORED vote is no disagreement.
    assert votes["borderline"].to_dict() == {
        "split": True,
        "two_met": True,
        "two_unmet": True,
        "unanimous": False,
        "unscored": False,
    }
    assert votes.loc["two_met", ["met_votes", "unmet_votes", "unscored_votes"]].tolist() == [
        2,
        1,
        0,
    ]


def test_self_preference_turns_borderline_met_into_unmet() -> None:
    votes = majority_vote(
        verdicts({"c": ["MET", "MET", "UNMET"], "d": ["MET"] * 3}), 3, borderline_to_unmet=True
    ).set_index("check_id")
    assert votes.loc["c", "majority"] == "UNMET"
    assert votes.loc["d", "majority"] == "MET"


@pytest.mark.parametrize("independent", [None, [True, False, False]])
def test_self_preference_never_turns_an_unscored_vote_into_unmet(independent) -> None:
    """MET, MET, UNSCORED (a budget-stopped vote) is two agreeing MET votes, not a borderline
    check; MET, UNMET, UNSCORED has no majority and stays UNSCORED, panel or not."""
    frame = verdicts({"stopped": ["MET", "MET", "UNSCORED"], "split": ["MET", "UNMET", "UNSCORED"]})
    mine = None if independent is None else pd.Series(independent * 2)
    votes = majority_vote(frame, 3, borderline_to_unmet=True, independent=mine)
    assert votes.set_index("check_id")["majority"].to_dict() == {
        "split": "UNSCORED",
        "stopped": "MET",
    }


def test_missing_run_is_an_error() -> None:
    with pytest.raises(InputError, match="expected one per run"):
        majority_vote(verdicts({"c": ["MET", "MET"]}), 3)


def test_unknown_status_is_an_error() -> None:
    with pytest.raises(InputError, match="unknown verdict status"):
        majority_vote(verdicts({"c": ["MET", "MAYBE", "MET"]}), 3)


def test_fleiss_kappa_hand_case() -> None:
    # Two subjects, three raters, two categories: [3,0] and [1,2].
    # P_i = (9-3)/6 = 1, (1+4-3)/6 = 1/3 → P̄ = 2/3; p = (4/6, 2/6) → P_e = 5/9.
    # kappa = (2/3 - 5/9) / (1 - 5/9) = 0.25
    assert fleiss_kappa(np.array([[3, 0], [1, 2]])) == pytest.approx(0.25)


def test_fleiss_kappa_undefined_when_all_in_one_category() -> None:
    assert fleiss_kappa(np.array([[3, 0, 0], [3, 0, 0]])) is None


def test_agreement_per_run() -> None:
    votes = majority_vote(verdicts({"a": ["MET"] * 3, "b": ["UNMET"] * 3}), 3)
    row = agreement(votes).iloc[0]
    assert row["fleiss_kappa"] == pytest.approx(1.0)
    assert row["n_borderline"] == 0
