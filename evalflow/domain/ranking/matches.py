"""Forming head-to-head matches between framework runs of one benchmark.

Two sources of matches:

* **Score matches** (`form_matches`) from the AC-score table: within one benchmark and one
  PRD, every pair of players is compared unit by unit (an AC, or a story = mean of its ACs'
  scores). The higher score wins; scores within `DRAW_TOLERANCE` (1e-12) are a draw. A pair
  is only compared on units both players have a score for. All runs in one
  benchmark/PRD must have been scored against the same frozen baseline (equal
  `baseline_sha256`), otherwise the comparison is refused.
* **Judged matches** (`resolve_position_bias`) from a pairwise judge that saw every pair in
  both orders (A first, then B first). A unit where the two orders disagree is flagged as a
  position-bias disagreement and counted; it becomes a **draw** (0.5), never a win for
  either side, because the judge's preference there followed the position, not the content.

Players. `player="run_key"` makes every run its own player. `player="framework"` (the
default) names a player after its framework; when one framework has several runs of the same
PRD, those runs stay **distinct players named by their run_key** (so run-to-run noise is
visible and no run's evidence is averaged away) unless `aggregate_runs=True`, which averages
the runs' unit scores into one player named after the framework. A `prd_id` that is null
(single-PRD benchmarks) is stored as "".

The match table has columns `benchmark, prd_id, unit_id, a, b, score_a` with `a < b`
(string order) and `score_a` ∈ {0, 0.5, 1} from a's side. Rows are in a canonical order
(benchmark, prd_id, unit_id, a, b); sequential Elo depends on that order, which is why the
headline rating is the order-free Bradley–Terry fit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, model_validator

from evalflow.domain.ranking.elo import Match
from evalflow.errors import InputError

AC_SCORE_COLUMNS = (
    "benchmark",
    "baseline_sha256",
    "prd_id",
    "run_key",
    "framework",
    "story_id",
    "ac_id",
    "ac_score",
)
MATCH_COLUMNS = ("benchmark", "prd_id", "unit_id", "a", "b", "score_a")
DRAW_TOLERANCE = 1e-12

Unit = Literal["ac", "story"]
PlayerKey = Literal["framework", "run_key"]
Preference = Literal["first", "second", "tie"]


def _require_columns(frame: pd.DataFrame, columns: Iterable[str], where: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}",
            where=where,
            fix=f"provide columns {', '.join(columns)}",
        )


def _normalised(ac_scores: pd.DataFrame) -> pd.DataFrame:
    """A validated copy with string keys and prd_id null → ""."""
    _require_columns(ac_scores, AC_SCORE_COLUMNS, "AC-score table")
    frame = ac_scores.loc[:, list(AC_SCORE_COLUMNS)].copy()
    frame["prd_id"] = frame["prd_id"].astype(object).where(frame["prd_id"].notna(), "")
    for column in ("benchmark", "baseline_sha256", "run_key", "framework", "story_id", "ac_id"):
        if frame[column].isna().any():
            raise InputError(f"null {column}", where="AC-score table", fix=f"fill in {column}")
    for column in ("benchmark", "baseline_sha256", "prd_id", "run_key", "framework"):
        frame[column] = frame[column].astype(str)
    frame["story_id"] = frame["story_id"].astype(str)
    frame["ac_id"] = frame["ac_id"].astype(str)
    score = pd.to_numeric(frame["ac_score"], errors="coerce").astype(float)
    bad = ~score.between(0.0, 1.0)
    if bad.any():
        row = frame[bad].iloc[0]
        raise InputError(
            f"ac_score {row['ac_score']!r} is not a number in [0, 1]",
            where=f"{row['run_key']} {row['ac_id']}",
            fix="score every AC before ranking",
        )
    frame["ac_score"] = score
    frameworks = frame.groupby("run_key")["framework"].nunique()
    if (frameworks > 1).any():
        run_key = str(frameworks[frameworks > 1].index[0])
        raise InputError("run_key belongs to several frameworks", where=run_key)
    duplicated = frame.duplicated(["benchmark", "prd_id", "run_key", "ac_id"], keep=False)
    if duplicated.any():
        row = frame[duplicated].iloc[0]
        raise InputError(
            f"AC {row['ac_id']} appears more than once",
            where=f"{row['benchmark']} {row['run_key']}",
            fix="give every AC of a PRD a unique ac_id, one row per run",
        )
    return frame


def _check_baselines(frame: pd.DataFrame) -> None:
    hashes = frame.groupby(["benchmark", "prd_id"], sort=True)["baseline_sha256"].unique()
    for (benchmark, prd_id), values in hashes.items():
        if len(values) > 1:
            where = f"benchmark {benchmark}" + (f", PRD {prd_id}" if prd_id else "")
            raise InputError(
                f"runs were scored against different baselines: {', '.join(sorted(values))}",
                where=where,
                fix="re-score every run against one frozen _ac-baseline.md before ranking",
            )


def unit_scores(
    ac_scores: pd.DataFrame,
    *,
    unit: Unit = "ac",
    player: PlayerKey = "framework",
    aggregate_runs: bool = False,
) -> pd.DataFrame:
    """One score per (benchmark, prd_id, player, unit_id), after the baseline check."""
    if unit not in ("ac", "story"):
        raise InputError(f"unknown unit {unit!r}", fix="use 'ac' or 'story'")
    if player not in ("framework", "run_key"):
        raise InputError(f"unknown player key {player!r}", fix="use 'framework' or 'run_key'")
    if aggregate_runs and player != "framework":
        raise InputError("aggregate_runs needs player='framework'")
    frame = _normalised(ac_scores)
    _check_baselines(frame)
    scope = ["benchmark", "prd_id"]
    if unit == "ac":
        per_run = frame.rename(columns={"ac_id": "unit_id", "ac_score": "score"})
    else:
        per_run = (
            frame.groupby([*scope, "run_key", "framework", "story_id"], sort=True)["ac_score"]
            .mean()
            .reset_index()
            .rename(columns={"story_id": "unit_id", "ac_score": "score"})
        )
    if player == "run_key":
        per_run["player"] = per_run["run_key"]
    elif aggregate_runs:
        per_run["player"] = per_run["framework"]
    else:
        runs = per_run.groupby([*scope, "framework"])["run_key"].transform("nunique")
        per_run["player"] = per_run["framework"].where(runs == 1, per_run["run_key"])
    scores = per_run.groupby([*scope, "player", "unit_id"], sort=True)["score"].mean()
    return scores.reset_index()


def form_matches(
    ac_scores: pd.DataFrame,
    *,
    unit: Unit = "ac",
    player: PlayerKey = "framework",
    aggregate_runs: bool = False,
    tolerance: float = DRAW_TOLERANCE,
) -> pd.DataFrame:
    """The match table (see module doc) for every pair of players, unit by unit."""
    scores = unit_scores(ac_scores, unit=unit, player=player, aggregate_runs=aggregate_runs)
    parts: list[pd.DataFrame] = []
    for (benchmark, prd_id), group in scores.groupby(["benchmark", "prd_id"], sort=True):
        wide = group.pivot(index="unit_id", columns="player", values="score").sort_index()
        names = np.array(sorted(wide.columns), dtype=object)
        if len(names) < 2:
            continue
        matrix = wide[list(names)].to_numpy(dtype=float)
        left, right = np.triu_indices(len(names), k=1)
        diff = matrix[:, left] - matrix[:, right]
        played = ~np.isnan(diff)
        unit_row, pair = np.nonzero(played)
        delta = diff[unit_row, pair]
        parts.append(
            pd.DataFrame(
                {
                    "benchmark": benchmark,
                    "prd_id": prd_id,
                    "unit_id": wide.index.to_numpy(dtype=object)[unit_row],
                    "a": names[left[pair]],
                    "b": names[right[pair]],
                    "score_a": np.where(
                        delta > tolerance, 1.0, np.where(delta < -tolerance, 0.0, 0.5)
                    ),
                }
            )
        )
    if not parts:
        return pd.DataFrame(
            {c: pd.Series(dtype=float if c == "score_a" else object) for c in MATCH_COLUMNS}
        )
    return pd.concat(parts, ignore_index=True).loc[:, list(MATCH_COLUMNS)]


def match_frame(matches: pd.DataFrame | Sequence[Match]) -> pd.DataFrame:
    """A validated match table from a DataFrame (a, b, score_a, …) or a list of `Match`.

    Extra columns (benchmark, prd_id, unit_id) are kept; score_a must lie in [0, 1] and a
    player never meets itself.
    """
    if isinstance(matches, pd.DataFrame):
        _require_columns(matches, ("a", "b", "score_a"), "match table")
        frame = matches.reset_index(drop=True).copy()
    else:
        frame = pd.DataFrame(
            {
                "a": [m.a for m in matches],
                "b": [m.b for m in matches],
                "score_a": [float(m.score_a) for m in matches],
            }
        )
    frame["a"] = frame["a"].astype(str)
    frame["b"] = frame["b"].astype(str)
    score = pd.to_numeric(frame["score_a"], errors="coerce").astype(float)
    if (~score.between(0.0, 1.0)).any():
        raise InputError("score_a must be a number in [0, 1]", where="match table")
    if (frame["a"] == frame["b"]).any():
        raise InputError("a player cannot play itself", where="match table")
    frame["score_a"] = score
    return frame


def to_elo_matches(matches: pd.DataFrame) -> list[Match]:
    """The match table as `Match` objects, in table order (for `sequential_elo`)."""
    frame = match_frame(matches)
    return [
        Match(a, b, s) for a, b, s in zip(frame["a"], frame["b"], frame["score_a"], strict=True)
    ]


class PairwiseVerdicts(BaseModel):
    """A judge's preferences for one pair of players, unit by unit, in both orders.

    `a_first[i]` is the verdict when `a` was shown first, `b_first[i]` when `b` was shown
    first; each is the *position* preferred: "first", "second" or "tie".
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    a: str
    b: str
    unit_ids: list[str]
    a_first: list[Preference]
    b_first: list[Preference]

    @model_validator(mode="after")
    def _consistent(self) -> PairwiseVerdicts:
        if self.a == self.b:
            raise ValueError("a and b must be different players")
        if not len(self.unit_ids) == len(self.a_first) == len(self.b_first):
            raise ValueError("unit_ids, a_first and b_first must have the same length")
        if len(set(self.unit_ids)) != len(self.unit_ids):
            raise ValueError("unit_ids must be unique")
        return self


_A_FIRST_SCORE = {"first": 1.0, "second": 0.0, "tie": 0.5}
_B_FIRST_SCORE = {"first": 0.0, "second": 1.0, "tie": 0.5}


@dataclass(frozen=True)
class JudgedMatches:
    """Both-order judgements of several pairs, with position-bias flags.

    `table`: unit_id, a, b, a_first, b_first (raw verdicts), score_a_first, score_b_first
    (each order's verdict as a's score), position_bias (the two disagree), score_a (the
    agreed score, or 0.5 on a disagreement).
    """

    table: pd.DataFrame

    @property
    def n_judged(self) -> int:
        return len(self.table)

    @property
    def n_position_bias(self) -> int:
        return int(self.table["position_bias"].sum())

    @property
    def position_bias_rate(self) -> float | None:
        return self.n_position_bias / self.n_judged if self.n_judged else None

    def matches(self) -> pd.DataFrame:
        """The match table (unit_id, a, b, score_a): agreed verdicts, disagreements as draws."""
        return self.table.loc[:, ["unit_id", "a", "b", "score_a"]].copy()


def resolve_position_bias(verdicts: Iterable[PairwiseVerdicts]) -> JudgedMatches:
    """Flag and count order disagreements; only agreeing verdicts decide a match."""
    rows = [
        {
            "unit_id": unit_id,
            "a": pair.a,
            "b": pair.b,
            "a_first": first,
            "b_first": second,
            "score_a_first": _A_FIRST_SCORE[first],
            "score_b_first": _B_FIRST_SCORE[second],
        }
        for pair in verdicts
        for unit_id, first, second in zip(pair.unit_ids, pair.a_first, pair.b_first, strict=True)
    ]
    columns = ["unit_id", "a", "b", "a_first", "b_first", "score_a_first", "score_b_first"]
    table = pd.DataFrame(rows, columns=columns)
    table["score_a_first"] = table["score_a_first"].astype(float)
    table["score_b_first"] = table["score_b_first"].astype(float)
    table["position_bias"] = table["score_a_first"] != table["score_b_first"]
    table["score_a"] = table["score_a_first"].where(~table["position_bias"], 0.5)
    return JudgedMatches(table=table)
