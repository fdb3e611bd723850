from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from evalflow.domain import rollup as rollup_module
from evalflow.domain.rollup import (
    PRIORITY_WEIGHTS,
    band,
    band_between,
    rollup,
)
from evalflow.domain.vote import majority_vote

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


def _half_up(value: Fraction) -> float:
    return math.floor(value * 100 + Fraction(1, 2)) / 100


def _fraction_rollup(votes: pd.DataFrame, checks: pd.DataFrame, stories: pd.DataFrame):
    """The roll-up one row at a time with `Fraction` (UNSCORED as UNMET, then as MET): the
    exact reference the integer path must equal."""
    kind = dict(zip(checks["check_id"], checks["kind"], strict=True))
    ac_of = dict(zip(checks["check_id"], checks["ac_id"], strict=True))
    story_of = dict(zip(stories["ac_id"], stories["story_id"], strict=True))
    weight = {
        row.story_id: PRIORITY_WEIGHTS[row.priority] for row in stories.itertuples(index=False)
    }
    out = {}
    for hits in (("MET",), ("MET", "UNSCORED")):
        counts: dict[tuple[str, str], list[int]] = {}
        for run_key, check_id, majority in zip(
            votes["run_key"], votes["check_id"], votes["majority"], strict=True
        ):
            slot = counts.setdefault((run_key, ac_of[check_id]), [0, 0, 0, 0])
            offset = 0 if kind[check_id] == "I" else 2
            slot[offset] += majority in hits
            slot[offset + 1] += 1
        ac = {
            key: Fraction(3, 5) * Fraction(i, it) + Fraction(2, 5) * Fraction(t, tt)
            for key, (i, it, t, tt) in counts.items()
        }
        story: dict[tuple[str, str], list[Fraction]] = {}
        for (run_key, ac_id), value in ac.items():
            story.setdefault((run_key, story_of[ac_id]), []).append(value)
        means = {key: sum(v, Fraction(0)) / len(v) for key, v in story.items()}
        final: dict[str, list] = {}
        for (run_key, story_id), value in means.items():
            total = final.setdefault(run_key, [Fraction(0), 0])
            total[0] += weight[story_id] * value
            total[1] += weight[story_id]
        out[hits] = (ac, means, {key: num / den for key, (num, den) in final.items() if den})
    return out[("MET",)], out[("MET", "UNSCORED")][2]


@pytest.mark.parametrize("int64", [True, False])
def test_integer_path_equals_the_fraction_path(int64: bool, monkeypatch) -> None:
    """Every reported value equals the exact Fraction roll-up, half-up ties included, in
    int64 and in the Python-integer fallback for denominators int64 cannot hold."""
    if not int64:
        monkeypatch.setattr(rollup_module, "_INT64_SAFE", 0)
    rng = np.random.default_rng(7)
    checks = pd.DataFrame(
        {
            "check_id": [f"c{i:02d}" for i in range(42)],
            "ac_id": [f"AC{i // 6}" for i in range(42)],
            "kind": ["I" if i % 6 < [1, 2, 3, 4, 5, 3, 2][i // 6] else "T" for i in range(42)],
        }
    )
    stories = pd.DataFrame(
        {
            "ac_id": [f"AC{a}" for a in range(7)],
            "story_id": ["S1", "S1", "S2", "S2", "S2", "S3", "S4"],
            "priority": ["P0", "P0", "P1", "P1", "P1", "P2", "P0"],
            "assumed": False,
        }
    )
    statuses = rng.choice(["MET", "UNMET", "UNSCORED"], p=[0.6, 0.3, 0.1], size=(300, 42, 3))
    verdicts = pd.DataFrame(
        {
            "run_key": np.repeat([f"r{n:03d}" for n in range(300)], 42 * 3),
            "check_id": np.tile(np.repeat(checks["check_id"], 3), 300),
            "run": np.tile([1, 2, 3], 300 * 42),
            "status": statuses.ravel(),
        }
    )
    votes = majority_vote(verdicts, 3)
    tables = rollup(votes, checks, stories, {"r001": True})
    (ac, story, lower), upper = _fraction_rollup(votes, checks, stories)
    got = tables.ac.set_index(["run_key", "ac_id"])
    measured = got["ac_score"].notna()
    assert measured.sum() > 1000
    assert got["ac_score"][measured].to_dict() == {
        key: _half_up(value) for key, value in ac.items() if measured[key]
    }
    got_story = tables.story.set_index(["run_key", "story_id"])["story_score"].dropna()
    assert got_story.to_dict() == {key: _half_up(story[key]) for key in got_story.index}
    final = tables.final.set_index("run_key")
    assert final["final_lower"].to_dict() == {k: _half_up(v) for k, v in lower.items()}
    assert final["final_upper"].to_dict() == {k: _half_up(v) for k, v in upper.items()}
    assert (
        final.loc["r001", "adjusted_final"] == _half_up(lower["r001"] / 2)
        or not (final.loc["r001", "complete"])
    )
    ties = [v for v in lower.values() if (v * 200).denominator == 1 and (v * 200) % 2 == 1]
    assert ties, "the data must hold half-up ties for this test to mean anything"


def test_full_precision_until_the_end() -> None:
    # Three ACs of 1/3 each: rounding per AC first would give 0.33 * 3 = 0.99.
    spec = {f"A-{n}": ("A", "P0", 1, 3, 1, 3) for n in range(3)}
    final = rollup(*frames(spec)).final.iloc[0]
    assert final["final_value"] == pytest.approx(1 / 3)
    assert final["final"] == 0.33
