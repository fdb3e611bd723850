from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from evalflow.domain.rollup import (
    PRIORITY_WEIGHTS,
    band,
    band_between,
    report_round,
    rollup,
)

# SPEC §1 worked example: (story, priority, I met/total, T met/total) per AC.
WORKED = {
    "S1-AC1": ("S1", "P0", 3, 4, 1, 2),
    "S1-AC2": ("S1", "P0", 1, 1, 1, 1),
    "S2-AC1": ("S2", "P1", 1, 2, 0, 1),
    "S3-AC1": ("S3", "P2", 0, 1, 0, 1),
}


def frames(spec: dict, run_keys=("r1",), assumed: frozenset[str] = frozenset()):
    votes, checks, stories = [], [], []
    for ac, (story, priority, i_met, i_total, t_met, t_total) in spec.items():
        stories.append(
            {"ac_id": ac, "story_id": story, "priority": priority, "assumed": story in assumed}
        )
        for kind, met, total in (("I", i_met, i_total), ("T", t_met, t_total)):
            for j in range(total):
                check_id = f"{ac}-{kind}{j}"
                checks.append({"check_id": check_id, "ac_id": ac, "kind": kind})
                for run_key in run_keys:
                    votes.append(
                        {
                            "run_key": run_key,
                            "check_id": check_id,
                            "majority": "MET" if j < met else "UNMET",
                        }
                    )
    return pd.DataFrame(votes), pd.DataFrame(checks), pd.DataFrame(stories)


def test_spec_worked_example() -> None:
    tables = rollup(*frames(WORKED, ("ok", "gated")), {"gated": True})
    ac = tables.ac[tables.ac.run_key == "ok"].set_index("ac_id")
    assert ac["ac_score"].to_dict() == {"S1-AC1": 0.65, "S1-AC2": 1.0, "S2-AC1": 0.3, "S3-AC1": 0.0}
    story = tables.story[tables.story.run_key == "ok"].set_index("story_id")
    assert story.loc["S1", "story_score_value"] == pytest.approx(0.825)
    assert story.loc["S1", "story_score"] == 0.83
    assert story.loc["S2", "story_score"] == 0.30
    assert not story.loc["S3", "scored"]
    final = tables.final.set_index("run_key")
    assert final.loc["ok", "sum_w"] == 5
    assert final.loc["ok", "final"] == 0.62  # 123/200 = 0.615 exactly, half up
    assert final.loc["ok", "band"] == "partial (major gaps)"
    assert pd.isna(final.loc["ok", "adjusted_final"])
    assert final.loc["gated", "adjusted_final"] == 0.31  # 0.3075 half up
    assert final.loc["gated", "final"] == 0.62  # the unadjusted Final is reported too


def test_sum_w_is_derived_from_the_priority_table() -> None:
    spec = {
        "A-1": ("A", "P0", 1, 1, 1, 1),
        "B-1": ("B", "P1", 0, 1, 0, 1),
        "C-1": ("C", "P2", 1, 1, 1, 1),
    }
    final = rollup(*frames(spec)).final.iloc[0]
    assert final["sum_w"] == PRIORITY_WEIGHTS["P0"] + PRIORITY_WEIGHTS["P1"]
    assert final["final_value"] == pytest.approx(3 / 5)  # the P2 story never counts


def test_assumed_priority_keeps_the_weights() -> None:
    spec = {"A-1": ("A", "P0", 1, 1, 1, 1), "B-1": ("B", "P1", 0, 1, 0, 1)}
    plain = rollup(*frames(spec)).final.iloc[0]
    assumed = rollup(*frames(spec, assumed=frozenset({"B"}))).final.iloc[0]
    assert plain["final_value"] == assumed["final_value"] == pytest.approx(3 / 5)
    story = rollup(*frames(spec, assumed=frozenset({"B"}))).story.set_index("story_id")
    assert bool(story.loc["B", "assumed"])


def test_not_run_gate_never_adjusts() -> None:
    final = rollup(*frames(WORKED), {"r1": False}).final.iloc[0]
    assert not final["gates_failed"] and pd.isna(final["adjusted_final"])


def test_unscored_makes_final_incomplete_with_bounds() -> None:
    votes, checks, stories = frames({"A-1": ("A", "P0", 1, 2, 1, 1)})
    votes.loc[votes.check_id == "A-1-I1", "majority"] = "UNSCORED"
    tables = rollup(votes, checks, stories, {"r1": True})
    final = tables.final.iloc[0]
    assert not final["complete"] and final["n_unscored"] == 1
    assert final["final_lower"] == 0.70  # 0.6 * 1/2 + 0.4
    assert final["final_upper"] == 1.00
    # Undetermined: no Final, no Adjusted Final, and 0.70 … 1.00 straddles three bands.
    assert pd.isna(final["final"]) and pd.isna(final["final_value"])
    assert pd.isna(final["adjusted_final"]) and pd.isna(final["adjusted_final_value"])
    assert pd.isna(final["band"]) and bool(final["gates_failed"])
    # A partly judged AC keeps its lower bound and says how many checks are missing.
    ac = tables.ac.iloc[0]
    assert ac["scored"] and ac["n_unscored"] == 1 and ac["ac_score"] == 0.70


def test_all_unscored_run_is_null_everywhere() -> None:
    votes, checks, stories = frames(WORKED, ("blind", "seen"))
    votes.loc[votes.run_key == "blind", "majority"] = "UNSCORED"
    tables = rollup(votes, checks, stories)
    final = tables.final.set_index("run_key")
    blind = final.loc["blind"]
    assert not blind["complete"] and blind["n_unscored"] == 11  # the P2 story's 2 do not count
    assert pd.isna(blind["final"]) and pd.isna(blind["band"])
    assert (blind["final_lower"], blind["final_upper"]) == (0.0, 1.0)
    ac = tables.ac[tables.ac.run_key == "blind"]
    assert not ac["scored"].any() and ac["ac_score"].isna().all()
    assert ac[["i_score", "t_score", "ac_score_value"]].isna().all().all()
    story = tables.story[tables.story.run_key == "blind"]
    assert not story["scored"].any() and story["story_score"].isna().all()
    # The other run is untouched: the worked example.
    assert final.loc["seen", "final"] == 0.62 and final.loc["seen", "complete"]


def test_band_is_kept_when_both_bounds_share_it() -> None:
    # 20 I-checks and 20 T-checks, one I-check UNSCORED: bounds 0.95 and 0.98 ⇒ one band.
    votes, checks, stories = frames({"A-1": ("A", "P0", 19, 20, 19, 20)})
    votes.loc[votes.check_id == "A-1-I19", "majority"] = "UNSCORED"
    final = rollup(votes, checks, stories).final.iloc[0]
    assert (final["final_lower"], final["final_upper"]) == (0.95, 0.98)
    assert pd.isna(final["final"]) and final["band"] == "fully meets spec"


def test_unscored_checks_of_unweighted_stories_leave_the_final_determined() -> None:
    votes, checks, stories = frames(WORKED)
    votes.loc[votes.check_id.str.startswith("S3-"), "majority"] = "UNSCORED"
    tables = rollup(votes, checks, stories)
    final = tables.final.iloc[0]
    assert final["complete"] and final["n_unscored"] == 0 and final["final"] == 0.62
    s3 = tables.ac.set_index("ac_id").loc["S3-AC1"]
    assert not s3["scored"] and pd.isna(s3["ac_score"]) and s3["n_unscored"] == 2


def test_band_between() -> None:
    assert band_between(0.60, 0.74) == "partial (major gaps)"
    assert band_between(0.74, 0.75) is None


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (0.90, "fully meets spec"),
        (0.89, "good (minor gaps)"),
        (0.75, "good (minor gaps)"),
        (0.74, "partial (major gaps)"),
        (0.60, "partial (major gaps)"),
        (0.59, "poor"),
        (0.40, "poor"),
        (0.39, "very poor"),
        (0.0, "very poor"),
    ],
)
def test_bands_use_the_rounded_final(value: float, name: str) -> None:
    assert band(value) == name


def test_report_round_settles_ties_exactly() -> None:
    values = np.array([0.615, 0.125, 0.3333333, 0.005])
    exact = [Fraction(123, 200), Fraction(1, 8), Fraction(1, 3), Fraction(1, 200)]
    assert report_round(values, lambda i: exact[i]).tolist() == [0.62, 0.13, 0.33, 0.01]


def test_full_precision_until_the_end() -> None:
    # Three ACs of 1/3 each: rounding per AC first would give 0.33 * 3 = 0.99.
    spec = {f"A-{n}": ("A", "P0", 1, 3, 1, 3) for n in range(3)}
    final = rollup(*frames(spec)).final.iloc[0]
    assert final["final_value"] == pytest.approx(1 / 3)
    assert final["final"] == 0.33
