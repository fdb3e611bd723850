"""The roll-up from majority verdicts to AC, story and Final scores (SPEC §1 Roll-up).

    AC_score    = 0.6·I + 0.4·T
    Story_score = mean of the story's AC scores
    Final       = Σ w_s·Story_score / Σ w_s   over stories with w_s > 0 (P0 = 3, P1 = 2, P2 = 0)
    Adjusted    = Final × 0.5   iff at least one engineering gate is a confirmed ✗

Computation is vectorised over any number of runs in float64; the *reported* values are
rounded half up to 2 decimals from the exact rational. Every input is a count, so a float
can only be ambiguous when it sits within 1e-9 of a rounding tie; those few values are
recomputed exactly with `fractions.Fraction` before rounding (0.615 reports as 0.62, never
Python's 0.61). Σw comes from `PRIORITY_WEIGHTS`, the table the report prints.

Unmeasured is never a number (SPEC §5 "Undetermined Final"). An UNSCORED majority means
"not judged yet", so while any weighted check (P0/P1) is UNSCORED the Final is NULL and only
its exact bounds are stored (UNSCORED counted as UNMET … as MET); the band is kept only when
both bounds fall in one band. UNSCORED checks of w = 0 stories cannot move the Final, so they
leave it determined. An AC or story whose checks are all UNSCORED has a NULL score and is not
scored; one with some UNSCORED checks reports its lower bound (UNSCORED as UNMET) and its
`n_unscored`.

Reported values are rounded by `evalflow.domain.rounding`, the one rounding rule of every
surface.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from evalflow.domain.rounding import TIE_TOLERANCE, round_half_up

PRIORITY_WEIGHTS: Mapping[str, int] = {"P0": 3, "P1": 2, "P2": 0}
I_WEIGHT = Fraction(3, 5)
T_WEIGHT = Fraction(2, 5)
ADJUSTMENT = Fraction(1, 2)
BANDS: tuple[tuple[float, str], ...] = (
    (0.90, "fully meets spec"),
    (0.75, "good (minor gaps)"),
    (0.60, "partial (major gaps)"),
    (0.40, "poor"),
    (0.0, "very poor"),
)


def band(final_rounded: float) -> str:
    """The band of a rounded Final (SPEC: bands use the rounded value)."""
    for threshold, name in BANDS:
        if final_rounded >= threshold - 1e-12:
            return name
    return BANDS[-1][1]


def report_round(values: np.ndarray, exact: Callable[[int], Fraction]) -> np.ndarray:
    """Half-up rounding of float scores; values near a tie are settled by `exact(i)`."""
    values = np.asarray(values, dtype=float)
    scaled = values * 100.0 + 0.5
    out = np.floor(scaled) / 100.0
    near_tie = np.abs(scaled - np.round(scaled)) < TIE_TOLERANCE
    for i in np.flatnonzero(near_tie & ~np.isnan(values)):
        out[i] = round_half_up(exact(int(i)))
    return out


def band_between(lower: float, upper: float) -> str | None:
    """The band both rounded bounds fall in, or None when they straddle a threshold."""
    low, high = band(lower), band(upper)
    return low if low == high else None


def ac_exact(i_met: int, i_total: int, t_met: int, t_total: int) -> Fraction:
    return I_WEIGHT * Fraction(i_met, i_total) + T_WEIGHT * Fraction(t_met, t_total)


@dataclass(frozen=True)
class RollupTables:
    ac: pd.DataFrame
    story: pd.DataFrame
    final: pd.DataFrame


def _ac_counts(
    votes: pd.DataFrame, checks: pd.DataFrame, met_statuses: tuple[str, ...]
) -> pd.DataFrame:
    joined = votes[["run_key", "check_id", "majority"]].merge(
        checks[["check_id", "ac_id", "kind"]], on="check_id", how="inner", validate="many_to_one"
    )
    joined["met"] = joined["majority"].isin(met_statuses).astype("int64")
    grouped = joined.groupby(["run_key", "ac_id", "kind"], sort=True)["met"].agg(["sum", "count"])
    wide = grouped.unstack("kind", fill_value=0)
    frame = pd.DataFrame(
        {
            name: wide[(stat, kind)] if (stat, kind) in wide.columns else 0
            for name, stat, kind in (
                ("i_met", "sum", "I"),
                ("i_total", "count", "I"),
                ("t_met", "sum", "T"),
                ("t_total", "count", "T"),
            )
        },
        index=wide.index,
    ).reset_index()
    return frame.astype({c: "int64" for c in ("i_met", "i_total", "t_met", "t_total")})


def _scores(
    counts: pd.DataFrame, stories: pd.DataFrame, weights: Mapping[str, int]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    ac = counts.merge(stories, on="ac_id", how="left", validate="many_to_one")
    ac["weight"] = ac["priority"].map(weights).astype("int64")
    ac["i_score"] = ac["i_met"] / ac["i_total"]
    ac["t_score"] = ac["t_met"] / ac["t_total"]
    ac["ac_score_value"] = float(I_WEIGHT) * ac["i_score"] + float(T_WEIGHT) * ac["t_score"]
    story = (
        ac.groupby(["run_key", "story_id"], sort=True)
        .agg(
            priority=("priority", "first"),
            assumed=("assumed", "first"),
            weight=("weight", "first"),
            n_acs=("ac_id", "size"),
            story_score_value=("ac_score_value", "mean"),
        )
        .reset_index()
    )
    scored = story[story["weight"] > 0]
    weighted = scored["weight"] * scored["story_score_value"]
    final = (
        pd.DataFrame({"run_key": scored["run_key"], "wx": weighted, "w": scored["weight"]})
        .groupby("run_key", sort=True)
        .sum()
    )
    final = pd.DataFrame(
        {
            "run_key": final.index,
            "sum_w": final["w"].astype("int64").to_numpy(),
            "final_value": (final["wx"] / final["w"]).to_numpy(),
        }
    )
    return ac, story, final


class _ExactScores:
    """Exact story and final scores of one run at a time, computed only when a float sits
    near a rounding tie (so the bulk path stays vectorised)."""

    def __init__(self, ac: pd.DataFrame) -> None:
        self._rows = ac.groupby("run_key", sort=False).indices
        self._columns = {
            c: ac[c].tolist()
            for c in ("story_id", "weight", "i_met", "i_total", "t_met", "t_total")
        }

    @functools.cache  # noqa: B019 - one instance per roll-up call, freed with it
    def run(self, run_key: str) -> tuple[dict[str, Fraction], Fraction | None]:
        col = self._columns
        grouped: dict[str, list[Fraction]] = {}
        weights: dict[str, int] = {}
        for i in self._rows[run_key].tolist():
            value = ac_exact(col["i_met"][i], col["i_total"][i], col["t_met"][i], col["t_total"][i])
            grouped.setdefault(col["story_id"][i], []).append(value)
            weights[col["story_id"][i]] = col["weight"][i]
        story = {sid: sum(v, Fraction(0)) / len(v) for sid, v in grouped.items()}
        sum_w = sum(w for w in weights.values() if w > 0)
        final = (
            sum((weights[s] * v for s, v in story.items() if weights[s] > 0), Fraction(0)) / sum_w
            if sum_w
            else None
        )
        return story, final

    def story(self, run_key: str, story_id: str) -> Fraction:
        return self.run(run_key)[0][story_id]

    def final(self, run_key: str) -> Fraction:
        value = self.run(run_key)[1]
        if value is None:
            raise ValueError(f"run {run_key} has no scored story")
        return value


def rollup(
    votes: pd.DataFrame,
    checks: pd.DataFrame,
    stories: pd.DataFrame,
    gates_failed: Mapping[str, bool] | None = None,
    *,
    weights: Mapping[str, int] = PRIORITY_WEIGHTS,
) -> RollupTables:
    """AC, story and final tables for every run in `votes`.

    votes: run_key, check_id, majority. checks: check_id, ac_id, kind (I|T).
    stories: ac_id, story_id, priority, assumed. gates_failed: run_key → a gate is a
    confirmed ✗ (missing ⇒ no confirmed failure: not-run never adjusts).
    A run with UNSCORED majorities on weighted checks is *incomplete*: `final` (and
    `final_value`, `adjusted_final*`) are NULL, `final_lower`/`final_upper` give the bounds
    (UNSCORED as UNMET / as MET) and `band` is NULL unless both bounds share one.
    """
    gates_failed = gates_failed or {}
    ac, story, final = _scores(_ac_counts(votes, checks, ("MET",)), stories, weights)
    upper_ac, _, upper = _scores(_ac_counts(votes, checks, ("MET", "UNSCORED")), stories, weights)
    unscored_ac = _ac_counts(votes, checks, ("UNSCORED",))
    exact, exact_upper = _ExactScores(ac), _ExactScores(upper_ac)

    keys = ["run_key", "ac_id"]
    unscored = unscored_ac.set_index(keys)
    ac_unscored = (unscored["i_met"] + unscored["t_met"]).rename("n_unscored")
    ac = ac.merge(ac_unscored.reset_index(), on=keys, how="left", validate="one_to_one")
    # Every check of the AC is UNSCORED: nothing about it was measured.
    unmeasured = ac["n_unscored"] == ac["i_total"] + ac["t_total"]

    counts = ac[["i_met", "i_total", "t_met", "t_total"]].to_numpy()
    ac["ac_score"] = report_round(
        ac["ac_score_value"].to_numpy(), lambda i: ac_exact(*(int(v) for v in counts[i]))
    )
    for column in ("i_score", "t_score", "ac_score_value", "ac_score"):
        ac[column] = ac[column].mask(unmeasured)
    ac["scored"] = (ac["weight"] > 0) & ~unmeasured

    story["story_score"] = report_round(
        story["story_score_value"].to_numpy(),
        lambda i: exact.story(story["run_key"].iat[i], story["story_id"].iat[i]),
    )
    per_story = ac.assign(unmeasured=unmeasured).groupby(["run_key", "story_id"], sort=True)
    story_unscored = per_story["n_unscored"].sum().rename("n_unscored")
    story_unmeasured = per_story["unmeasured"].all().rename("unmeasured")
    story = story.merge(
        pd.concat([story_unscored, story_unmeasured], axis=1).reset_index(),
        on=["run_key", "story_id"],
        how="left",
        validate="one_to_one",
    )
    for column in ("story_score_value", "story_score"):
        story[column] = story[column].mask(story["unmeasured"])
    story["scored"] = (story["weight"] > 0) & ~story["unmeasured"]

    weighted_unscored = (
        story[story["weight"] > 0].groupby("run_key")["n_unscored"].sum().astype("int64")
    )
    final["n_unscored"] = final["run_key"].map(weighted_unscored).fillna(0).astype("int64")
    final["complete"] = final["n_unscored"] == 0
    lower = report_round(
        final["final_value"].to_numpy(), lambda i: exact.final(final["run_key"].iat[i])
    )
    upper_rounded = report_round(
        upper["final_value"].to_numpy(), lambda i: exact_upper.final(upper["run_key"].iat[i])
    )
    final["final_lower"] = lower
    final = final.merge(
        pd.DataFrame({"run_key": upper["run_key"], "final_upper": upper_rounded}),
        on="run_key",
        validate="one_to_one",
    )
    complete = final["complete"]
    final["final"] = final["final_lower"].where(complete)
    final["band"] = [
        band(low) if done else band_between(low, high)
        for low, high, done in zip(
            final["final_lower"], final["final_upper"], complete, strict=True
        )
    ]
    failed = final["run_key"].map(lambda key: bool(gates_failed.get(key, False))).astype(bool)
    final["gates_failed"] = failed
    adjusted_value = final["final_value"] * float(ADJUSTMENT)
    adjusted = report_round(
        adjusted_value.to_numpy(),
        lambda i: exact.final(final["run_key"].iat[i]) * ADJUSTMENT,
    )
    final["adjusted_final_value"] = adjusted_value.where(failed & complete)
    final["adjusted_final"] = pd.Series(adjusted, index=final.index).where(failed & complete)
    final["final_value"] = final["final_value"].where(complete)
    ac_cols = [
        "run_key",
        "story_id",
        "ac_id",
        "priority",
        "weight",
        "scored",
        "i_met",
        "i_total",
        "t_met",
        "t_total",
        "n_unscored",
        "i_score",
        "t_score",
        "ac_score_value",
        "ac_score",
    ]
    story_cols = [
        "run_key",
        "story_id",
        "priority",
        "assumed",
        "weight",
        "scored",
        "n_acs",
        "n_unscored",
        "story_score_value",
        "story_score",
    ]
    final_cols = [
        "run_key",
        "sum_w",
        "final_value",
        "final",
        "band",
        "complete",
        "n_unscored",
        "final_lower",
        "final_upper",
        "gates_failed",
        "adjusted_final_value",
        "adjusted_final",
    ]
    return RollupTables(
        ac=ac[ac_cols].sort_values(["run_key", "ac_id"], ignore_index=True),
        story=story[story_cols].sort_values(["run_key", "story_id"], ignore_index=True),
        final=final[final_cols].sort_values("run_key", ignore_index=True),
    )
