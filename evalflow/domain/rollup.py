"""The roll-up from majority verdicts to AC, story and Final scores (SPEC §1 Roll-up).

    AC_score    = 0.6·I + 0.4·T
    Story_score = mean of the story's AC scores
    Final       = Σ w_s·Story_score / Σ w_s   over stories with w_s > 0 (P0 = 3, P1 = 2, P2 = 0)
    Adjusted    = Final × 0.5   iff at least one engineering gate is a confirmed ✗

Computation is vectorised over any number of runs in integers: every score is a ratio of
counts, so each AC, story and Final is held as an integer numerator over a denominator built
from the totals alone (AC: 5·i_total·t_total; the common denominator D is the lcm of those,
M the lcm of the stories' AC counts), and the *reported* values are rounded half up to 2
decimals from those exact rationals (0.615 reports as 0.62, never Python's 0.61), with no
`Fraction` per run. Denominators depend only on a baseline's shape, so D and M stay small;
should Σw·M·D ever outgrow int64, the same arithmetic runs on Python integers. The `*_value`
columns are the exact ratios as float64. Σw comes from `PRIORITY_WEIGHTS`, the table the
report prints.

Unmeasured is never a number (SPEC §5 "Undetermined Final"). An UNSCORED majority means
"not judged yet", so while any weighted check (P0/P1) is UNSCORED the Final is NULL and only
its exact bounds are stored (UNSCORED counted as UNMET … as MET); the band is kept only when
both bounds fall in one band. UNSCORED checks of w = 0 stories cannot move the Final, so they
leave it determined. An AC or story whose checks are all UNSCORED has a NULL score and is not
scored; one with some UNSCORED checks reports its lower bound (UNSCORED as UNMET) and its
`n_unscored`.

Reported values follow the one rounding rule of every surface (`evalflow.domain.rounding`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from evalflow.domain.vote import dense_groups, string_column

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


def band_between(lower: float, upper: float) -> str | None:
    """The band both rounded bounds fall in, or None when they straddle a threshold."""
    low, high = band(lower), band(upper)
    return low if low == high else None


@dataclass(frozen=True)
class RollupTables:
    ac: pd.DataFrame
    story: pd.DataFrame
    final: pd.DataFrame


AC_COLUMNS = [
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
STORY_COLUMNS = [
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
FINAL_COLUMNS = [
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
# Half-up rounding reads 200·num + den, so every denominator stays below this in int64.
_INT64_SAFE = (2**63 - 1) // 201


def _bands(lower: np.ndarray, upper: np.ndarray, complete: np.ndarray) -> np.ndarray:
    """`band` of each rounded lower bound, for an incomplete run `band_between` its bounds."""
    thresholds = np.array([threshold for threshold, _ in BANDS]) - 1e-12
    names = np.array([name for _, name in BANDS] + [None], dtype=object)

    def index(values: np.ndarray) -> np.ndarray:
        met = values[:, None] >= thresholds[None, :]
        return np.where(met.any(axis=1), met.argmax(axis=1), len(BANDS) - 1)

    low, high = index(lower), index(upper)
    return names[np.where(complete | (low == high), low, len(BANDS))]


def _lookup(index: pd.Index, values: pd.Series) -> np.ndarray:
    """index.get_indexer(values), looking up each distinct value once (−1: absent)."""
    codes, uniques = pd.factorize(values)
    return np.where(codes >= 0, index.get_indexer(uniques)[codes], -1)


def _sum(groups: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Exact per-group sums (bincount would go through float64)."""
    out = np.zeros(n, dtype=values.dtype)
    np.add.at(out, groups, values)
    return out


def _scaled(den: np.ndarray, common: int, dtype: type) -> np.ndarray:
    """common // den per row (0 where den is 0), in `dtype`."""
    uniques, inverse = np.unique(den, return_inverse=True)
    factors = np.array([common // int(u) if u else 0 for u in uniques], dtype=dtype)
    return factors[inverse]


def _half_up(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num/den rounded half up to 2 decimals, exactly (floor((200·num + den) / (2·den))/100);
    NaN where den is 0."""
    safe = np.where(den > 0, den, 1)
    hundredths = (200 * num + safe) // (2 * safe)
    return np.where(den > 0, hundredths.astype(float) / 100.0, np.nan)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num/den as float64 (NaN where den is 0)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if num.dtype == object:
            return np.array([n / d if d else math.nan for n, d in zip(num, den, strict=True)])
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


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
    check_index = pd.Index(checks["check_id"])
    story_index = pd.Index(stories["ac_id"])
    for index, what in ((check_index, "check_id of checks"), (story_index, "ac_id of stories")):
        if not index.is_unique:
            raise ValueError(f"duplicate {what}")
    position = _lookup(check_index, votes["check_id"])
    voted = position >= 0
    position = position[voted]
    run_code, run_keys = pd.factorize(votes["run_key"], sort=True)
    run_code = run_code[voted]
    status = _lookup(pd.Index(["MET", "UNSCORED"]), votes["majority"])[voted]
    met, unscored = status == 0, status == 1
    ac_code, ac_ids = pd.factorize(checks["ac_id"], sort=True)
    is_i = (checks["kind"] == "I").to_numpy(dtype=bool)[position]
    is_t = (checks["kind"] == "T").to_numpy(dtype=bool)[position]

    # One row per (run, AC), in (run_key, ac_id) order.
    n_acs = max(len(ac_ids), 1)
    row, pair = dense_groups(run_code * n_acs + ac_code[position], len(run_keys) * n_acs)
    n_rows = len(pair)
    ac_run, ac_of = pair // n_acs, pair % n_acs

    def count(mask: np.ndarray) -> np.ndarray:
        return np.bincount(row[mask], minlength=n_rows)

    i_total, t_total = count(is_i), count(is_t)
    i_met, t_met = count(is_i & met), count(is_t & met)
    i_unscored, t_unscored = count(is_i & unscored), count(is_t & unscored)
    n_unscored = i_unscored + t_unscored

    story_row = story_index.get_indexer(ac_ids)[ac_of]
    if (story_row < 0).any():
        raise ValueError(f"AC {ac_ids[ac_of[np.argmax(story_row < 0)]]} has no story")
    story_code, story_ids = pd.factorize(stories["story_id"], sort=True)
    story_weight = stories["priority"].map(dict(weights))
    if story_weight.isna().to_numpy()[story_row].any():
        raise ValueError(f"unknown priority in {sorted(set(stories['priority']))}")
    weight = story_weight.to_numpy(dtype=float)[story_row].astype(np.int64)

    # One row per (run, story), in (run_key, story_id) order.
    n_story_ids = max(len(story_ids), 1)
    story_of_row, story_pair = dense_groups(
        ac_run * n_story_ids + story_code[story_row], len(run_keys) * n_story_ids
    )
    n_stories = len(story_pair)
    story_run = story_pair // n_story_ids
    first_ac = np.full(n_stories, n_rows)
    np.minimum.at(first_ac, story_of_row, np.arange(n_rows))
    s_weight = weight[first_ac]

    # Exact numerators over common denominators built from the totals only.
    valid = (i_total > 0) & (t_total > 0)
    ac_den = 5 * i_total * t_total
    common_ac = math.lcm(*np.unique(ac_den[valid]).tolist())
    s_valid = np.bincount(story_of_row[valid], minlength=n_stories)
    common_story = math.lcm(*np.unique(s_valid[s_valid > 0]).tolist())
    weighted = s_weight > 0
    final_of_story, final_runs = dense_groups(story_run[weighted], len(run_keys))
    sum_w = np.bincount(final_of_story, weights=s_weight[weighted], minlength=len(final_runs))
    sum_w = sum_w.astype(np.int64)
    largest = int(sum_w.max(initial=1)) * common_story * common_ac
    dtype: type = np.int64 if largest <= _INT64_SAFE else object
    ac_scale = _scaled(np.where(valid, ac_den, 0), common_ac, dtype)
    story_scale = _scaled(s_valid[weighted], common_story, dtype) * s_weight[weighted]
    story_den = s_valid.astype(dtype) * common_ac
    final_den = sum_w.astype(dtype) * (common_story * common_ac)

    def exact(i_hits: np.ndarray, t_hits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Story and Final numerators when `*_hits` checks count as met."""
        ac_num = (3 * i_hits * t_total + 2 * t_hits * i_total).astype(dtype) * ac_scale
        story_num = _sum(story_of_row[valid], ac_num[valid], n_stories)
        final_num = _sum(final_of_story, story_num[weighted] * story_scale, len(final_runs))
        return story_num, final_num

    story_num, final_num = exact(i_met, t_met)
    _, upper_num = exact(i_met + i_unscored, t_met + t_unscored)

    with np.errstate(invalid="ignore", divide="ignore"):
        i_score = i_met / i_total
        t_score = t_met / t_total
    ac_score_value = float(I_WEIGHT) * i_score + float(T_WEIGHT) * t_score
    ac_score = _half_up(
        np.where(valid, 3 * i_met * t_total + 2 * t_met * i_total, 0), np.where(valid, ac_den, 0)
    )
    unmeasured = n_unscored == i_total + t_total
    ac = pd.DataFrame(
        {
            "run_key": string_column(run_keys, ac_run),
            "story_id": string_column(stories["story_id"], story_row),
            "ac_id": string_column(ac_ids, ac_of),
            "priority": string_column(stories["priority"], story_row),
            "weight": weight,
            "scored": (weight > 0) & ~unmeasured,
            "i_met": i_met,
            "i_total": i_total,
            "t_met": t_met,
            "t_total": t_total,
            "n_unscored": n_unscored,
            "i_score": np.where(unmeasured, np.nan, i_score),
            "t_score": np.where(unmeasured, np.nan, t_score),
            "ac_score_value": np.where(unmeasured, np.nan, ac_score_value),
            "ac_score": np.where(unmeasured, np.nan, ac_score),
        }
    )

    s_unmeasured = np.bincount(story_of_row, weights=~unmeasured, minlength=n_stories) == 0
    s_unscored = np.bincount(story_of_row, weights=n_unscored, minlength=n_stories)
    s_unscored = s_unscored.astype(np.int64)
    story_value = _ratio(story_num, story_den)
    story_score = _half_up(story_num, story_den)
    story = pd.DataFrame(
        {
            "run_key": string_column(run_keys, story_run),
            "story_id": string_column(story_ids, story_pair % n_story_ids),
            "priority": string_column(stories["priority"], story_row[first_ac]),
            "assumed": stories["assumed"].to_numpy(dtype=bool)[story_row[first_ac]],
            "weight": s_weight,
            "scored": weighted & ~s_unmeasured,
            "n_acs": np.bincount(story_of_row, minlength=n_stories),
            "n_unscored": s_unscored,
            "story_score_value": np.where(s_unmeasured, np.nan, story_value),
            "story_score": np.where(s_unmeasured, np.nan, story_score),
        }
    )

    f_unscored = np.bincount(
        final_of_story, weights=s_unscored[weighted], minlength=len(final_runs)
    ).astype(np.int64)
    complete = f_unscored == 0
    final_keys = np.asarray(run_keys, dtype=object)[final_runs]
    failed = np.array([bool(gates_failed.get(key, False)) for key in final_keys], dtype=bool)
    lower = _half_up(final_num, final_den)
    upper = _half_up(upper_num, final_den)
    value = _ratio(final_num, final_den)
    adjusted = np.where(failed & complete, _half_up(final_num, 2 * final_den), np.nan)
    final = pd.DataFrame(
        {
            "run_key": string_column(run_keys, final_runs),
            "sum_w": sum_w,
            "final_value": np.where(complete, value, np.nan),
            "final": np.where(complete, lower, np.nan),
            "band": _bands(lower, upper, complete),
            "complete": complete,
            "n_unscored": f_unscored,
            "final_lower": lower,
            "final_upper": upper,
            "gates_failed": failed,
            "adjusted_final_value": np.where(failed & complete, value * float(ADJUSTMENT), np.nan),
            "adjusted_final": adjusted,
        }
    )
    return RollupTables(ac=ac[AC_COLUMNS], story=story[STORY_COLUMNS], final=final[FINAL_COLUMNS])
