"""Framework-level ratings across the benchmarks (PRDs) of a suite, with honest uncertainty.

Owns the pure computation behind `suite_rating`, `suite_pair`, `suite_prd_score` and
`suite_left_out` (no I/O, no Dagster):

**Who enters** (`select_runs`). A run enters only when it is ranked on its benchmark's
leaderboard (a determined Final from current inputs: an incomplete or stale run is left
out with that reason, and a NULL Final never becomes 0) and it shares the comparability
key: one baseline hash per benchmark and one judge id, judge model and prompt version across
the suite. Pinned values (the suite file) leave other runs out as "different key"; without
a pin, several values are refused with an InputError, never mixed.

**Players are frameworks.** Within one PRD every run of framework A meets every run of
framework B on every AC both scored (a run-vs-run AC match: higher AC score wins, equal
within `DRAW_TOLERANCE` is a draw = half a win). Repeated runs of one framework are its
samples: the n_A·n_B run pairs of one AC share one unit of weight (each counts
1 / (n_A·n_B)), so a framework with more runs gets a more precise estimate but not a louder
voice, and each AC of a PRD weighs the suite weight of its benchmark. The Bradley–Terry
fit is `bradley_terry.fit_bradley_terry_batch` on the summed (fractional) win matrices.

**Cluster bootstrap** (seeded, `SUITE_SAMPLES` = 1,000 by default). A sample draws PRDs
with replacement, then, independently for every drawn PRD, each framework's runs on it with
replacement; ratings, mean Finals and pairwise probabilities all come from the same
samples. Vectorised: per PRD the AC matches collapse once into a run × run matrix S of
summed scores, so a drawn PRD costs one bilinear form vᵀ S v per framework pair (v = run
multiplicities / n runs) in a batched matrix product.

**Per framework**: `rating` (full-data BT MLE, Elo scale, mean 1500) with its percentile CI;
`mean_final` = suite-weighted mean over the PRDs it ran of its mean Final per PRD, with a CI
from the same bootstrap (`mean_effective_final` likewise with the Adjusted Final where a gate
failed, the value the Pareto plot draws); the variance decomposition: `judge_sd` (√ of the
mean, over its runs' cells, of each run's Final variance under the k-run vote split — the
model `final_uncertainty` simulates, here exactly: Σ coefficient²·p·(1 − p)), `run_to_run_sd`
(√ of the pooled sample variance of Finals across repeated runs on one PRD; NULL without a
repeated run) and `prd_sd` (sample SD of its per-PRD mean Finals; NULL below 2 PRDs; it
still contains run noise).

**Per pair**: P(A better) = share of samples where A's rating is higher (ties half);
`ci_overlap` of the rating intervals; `within_run_noise` when |mean Final gap| is below
√(σ²_run,A + σ²_run,B), the SD of the difference of one run of each: a gap that one more
run of each could reverse (NULL when either has no repeated run). Separability is the
Arena-Hard share of pairs whose rating intervals do not overlap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalflow.domain.ranking.bootstrap import CI_LEVEL, separability
from evalflow.domain.ranking.bradley_terry import fit_or_raise
from evalflow.domain.ranking.final_uncertainty import check_coefficients, met_probability
from evalflow.domain.ranking.matches import DRAW_TOLERANCE
from evalflow.errors import InputError

SUITE_SAMPLES = 1000
JUDGE_FIELDS = ("judge_id", "judge_model", "judge_prompt_version")
RUN_COLUMNS = (
    "run_key",
    "benchmark",
    "framework",
    "baseline_sha256",
    *JUDGE_FIELDS,
    "final",
    "adjusted_final",
    "not_ranked_reason",
    "framework_cost_usd",
    "judge_cost_usd",
)
AC_COLUMNS = ("run_key", "ac_id", "ac_score")
LEFT_OUT_COLUMNS = ("benchmark", "framework", "run_key", "reason")
RATING_COLUMNS = (
    "rank",
    "framework",
    "rating",
    "rating_ci_low",
    "rating_ci_high",
    "mean_final",
    "mean_final_ci_low",
    "mean_final_ci_high",
    "mean_effective_final",
    "mean_effective_ci_low",
    "mean_effective_ci_high",
    "n_adjusted",
    "n_prds",
    "n_runs",
    "n_matches",
    "run_to_run_sd",
    "judge_sd",
    "prd_sd",
    "gap_to_next_within_run_noise",
    "cost_per_run_usd",
    "cost_per_final_point_usd",
)
PAIR_COLUMNS = (
    "a",
    "b",
    "p_a_better",
    "rating_gap",
    "mean_final_gap",
    "ci_overlap",
    "within_run_noise",
)
PRD_COLUMNS = (
    "framework",
    "benchmark",
    "weight",
    "n_runs",
    "mean_final",
    "mean_effective_final",
    "run_to_run_sd",
    "judge_sd",
)


def _require(frame: pd.DataFrame, wanted: tuple[str, ...], what: str) -> None:
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}",
            where=what,
            fix=f"provide columns {', '.join(wanted)}",
        )


def judge_variance(votes: pd.DataFrame) -> pd.Series:
    """run_key → variance of its Final under the k-run vote split (each check MET with
    probability `met_probability`, independently): Σ coefficient² · p · (1 − p), exact for
    the model `final_uncertainty` simulates."""
    frame = check_coefficients(votes)
    p = met_probability(frame)
    terms = frame["coefficient"] ** 2 * p * (1.0 - p)
    return terms.groupby(frame["run_key"], sort=True).sum()


def _key_text(values: tuple) -> str:
    return "/".join("null" if pd.isna(v) else str(v) for v in values)


def select_runs(
    runs: pd.DataFrame,
    weights: Mapping[str, float],
    *,
    baselines: Mapping[str, str | None] | None = None,
    pins: Mapping[str, str | None] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs that enter one rating, LEFT_OUT_COLUMNS: runs of the suite left out and why).

    Runs of benchmarks outside `weights` are not part of the suite and are not listed."""
    _require(runs, RUN_COLUMNS, "suite run table")
    frame = runs[runs["benchmark"].isin(list(weights))].loc[:, list(RUN_COLUMNS)].copy()
    frame = frame.astype({c: object for c in JUDGE_FIELDS}).reset_index(drop=True)
    for column in JUDGE_FIELDS:
        frame[column] = frame[column].where(frame[column].notna(), None)
    reason = frame["not_ranked_reason"].where(frame["not_ranked_reason"].notna(), None)
    reason = reason.where(reason.notna() | frame["final"].notna(), "unmeasured: Final is NULL")
    for bench, pinned in (baselines or {}).items():
        if pinned is None:
            continue
        other = (frame["benchmark"] == bench) & (frame["baseline_sha256"] != pinned)
        text = "different key: baseline " + frame["baseline_sha256"].str[:12]
        reason = reason.where(~other | reason.notna(), text + f", the suite pins {pinned[:12]}")
    for field, pinned in (pins or {}).items():
        other = frame[field].map(lambda v, p=pinned: v != p)
        text = f"different key: {field} " + frame[field].map(lambda v: _key_text((v,)))
        reason = reason.where(
            ~other | reason.notna(), text + f", the suite pins {_key_text((pinned,))}"
        )
    left_out = frame.loc[reason.notna(), ["benchmark", "framework", "run_key"]]
    left_out = left_out.assign(reason=reason[reason.notna()])
    kept = frame[reason.isna()].reset_index(drop=True)
    keys = kept[list(JUDGE_FIELDS)].apply(lambda r: _key_text(tuple(r)), axis=1)
    if keys.nunique() > 1:
        counts = keys.value_counts().sort_index()
        listed = ", ".join(f"{k} ({n} runs)" for k, n in counts.items())
        raise InputError(
            f"runs were scored by different judges (judge_id/model/prompt): {listed}",
            where="suite",
            fix="rate one judge at a time: pin `comparability:` in the suite file",
        )
    baseline_count = kept.groupby("benchmark")["baseline_sha256"].nunique()
    if (baseline_count > 1).any():
        bench = str(baseline_count[baseline_count > 1].index[0])
        hashes = sorted(kept.loc[kept["benchmark"] == bench, "baseline_sha256"].str[:12].unique())
        raise InputError(
            f"runs were scored against different baselines: {', '.join(hashes)}",
            where=f"suite benchmark {bench}",
            fix="re-score them against one frozen baseline, or pin its baseline_sha256",
        )
    left_out = left_out.sort_values(["benchmark", "framework", "run_key"], ignore_index=True)
    return kept, left_out.loc[:, list(LEFT_OUT_COLUMNS)]


@dataclass(frozen=True)
class _Prd:
    """One PRD's runs (sorted by framework, run_key) in the arrays the bootstrap needs."""

    weight: float
    framework: np.ndarray  # run → framework code
    group_start: np.ndarray  # run → first run of its framework on this PRD
    group_size: np.ndarray  # run → n runs of its framework on this PRD
    scores: np.ndarray  # S[r, s]: r's AC score share against s summed over ACs
    matches: np.ndarray  # C[r, s]: ACs both scored (cross-framework pairs only)
    final: np.ndarray
    effective: np.ndarray


def _prd_arrays(
    runs: pd.DataFrame, ac_scores: pd.DataFrame, frameworks: pd.Index, weight: float
) -> _Prd:
    """`runs` sorted by framework and run_key; `ac_scores` the AC rows of those runs."""
    codes = frameworks.get_indexer(runs["framework"]).astype(np.int64)
    sizes = runs.groupby("framework", sort=True)["run_key"].transform("size").to_numpy()
    starts = np.searchsorted(codes, codes, side="left")
    row = pd.Index(runs["run_key"]).get_indexer(ac_scores["run_key"])
    column, ac_ids = pd.factorize(ac_scores["ac_id"], sort=True)
    x = np.full((len(runs), len(ac_ids)), np.nan)
    x[row, column] = ac_scores["ac_score"].to_numpy(dtype=float)
    cross = codes[:, None] != codes[None, :]
    scores = np.zeros((len(runs), len(runs)))
    matches = np.zeros((len(runs), len(runs)), dtype=np.int64)
    # One AC at a time: R × R memory, not R × R × ACs (500 runs × 40 ACs would be 80 MB a
    # temporary).
    for column in x.T:
        diff = column[:, None] - column[None, :]
        both = ~np.isnan(diff)
        scores += (
            np.where(diff > DRAW_TOLERANCE, 1.0, np.where(diff < -DRAW_TOLERANCE, 0.0, 0.5)) * both
        )
        matches += both
    scores *= cross
    matches *= cross
    final = runs["final"].to_numpy(dtype=float)
    effective = runs["adjusted_final"].astype(float).fillna(runs["final"]).to_numpy(dtype=float)
    return _Prd(weight, codes, starts, sizes, scores, matches, final, effective)


def _onehot(prd: _Prd, n_frameworks: int) -> np.ndarray:
    onehot = np.zeros((len(prd.framework), n_frameworks))
    onehot[np.arange(len(prd.framework)), prd.framework] = 1.0
    return onehot


def _point_wins(prd: _Prd, n_frameworks: int) -> np.ndarray:
    """F × F weighted win matrix of the full data: every run pair weighs 1 / (n_A·n_B)."""
    onehot = _onehot(prd, n_frameworks)
    share = prd.scores / np.outer(prd.group_size, prd.group_size)
    return prd.weight * (onehot.T @ share @ onehot)


def _slot_wins(prd: _Prd, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The frameworks G on this PRD and the K × G × G weighted win matrices of K drawn copies
    of it (rows of `counts`: how often each run was drawn),
    X[k, f, g] = Σ_{r∈f, s∈g} m_kr·m_ks·S[r, s] / (n_f·n_g).

    One framework g at a time: T = V_g · S_·gᵀ (K × R, V = m / n) is what every run scores
    against g's drawn runs, and summing V·T over each framework's runs gives column g. That
    is K·R² multiply-adds in G matrix products and K·R floats of memory whatever the number
    of runs per framework: tables over the distinct draws of each framework (fewer for
    n = 3, but C(2n − 1, n) of them, 92,378 for n = 10) would grow as G²·draws²."""
    groups, first = np.unique(prd.framework, return_index=True)
    starts, sizes = prd.group_start[first], prd.group_size[first]
    v = counts / prd.group_size
    wins = np.empty((len(counts), len(groups), len(groups)))
    for g, (start, size) in enumerate(zip(starts, sizes, strict=True)):
        block = slice(start, start + size)
        against = v[:, block] @ prd.scores[:, block].T
        wins[:, :, g] = np.add.reduceat(v * against, starts, axis=1)
    return groups, prd.weight * wins


def _framework_sums(prd: _Prd, v: np.ndarray, n_frameworks: int) -> tuple[np.ndarray, ...]:
    """K × F sums of v·final and v·effective (v = multiplicity / n: the framework's mean over
    its drawn runs on this PRD)."""
    groups, first = np.unique(prd.framework, return_index=True)
    starts = prd.group_start[first]
    final = np.zeros((len(v), n_frameworks))
    effective = np.zeros((len(v), n_frameworks))
    final[:, groups] = np.add.reduceat(v * prd.final, starts, axis=1)
    effective[:, groups] = np.add.reduceat(v * prd.effective, starts, axis=1)
    return final, effective


def _add_rows(target: np.ndarray, rows: np.ndarray, values: np.ndarray) -> None:
    """target[rows[i]] += values[i] with repeated rows summed (a faster `np.add.at`)."""
    width = int(np.prod(target.shape[1:]))
    flat = (rows[:, None] * width + np.arange(width)[None, :]).ravel()
    summed = np.bincount(flat, weights=values.reshape(len(rows), width).ravel(),
                         minlength=target.size)  # fmt: skip
    target += summed.reshape(target.shape)


@dataclass(frozen=True)
class SuiteReport:
    """The frames of one suite rating (column tuples above) and how it was computed."""

    rating: pd.DataFrame
    pairs: pd.DataFrame
    prd_scores: pd.DataFrame
    left_out: pd.DataFrame
    separability: float | None
    judge: dict[str, str | None]
    n_samples: int
    seed: int
    level: float


def _bootstrap(
    prds: list[_Prd], n_frameworks: int, n_samples: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """B × F × F win matrices and B × F sums / denominators of mean Final and effective."""
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, len(prds), size=(n_samples, len(prds)))
    wins = np.zeros((n_samples, n_frameworks, n_frameworks))
    final_sum = np.zeros((n_samples, n_frameworks))
    effective_sum = np.zeros((n_samples, n_frameworks))
    present = np.zeros((n_samples, n_frameworks))
    for p, prd in enumerate(prds):
        sample_of_slot = np.nonzero(drawn == p)[0]
        n_slots, n_runs = len(sample_of_slot), len(prd.framework)
        if n_slots == 0:
            continue
        # Each run position draws one of its framework's runs (with replacement), per slot.
        pick = prd.group_start + np.floor(rng.random((n_slots, n_runs)) * prd.group_size)
        flat = (pick.astype(np.int64) + np.arange(n_slots)[:, None] * n_runs).ravel()
        counts = np.bincount(flat, minlength=n_slots * n_runs).reshape(n_slots, n_runs)
        f, e = _framework_sums(prd, counts / prd.group_size, n_frameworks)
        groups, slot_wins = _slot_wins(prd, counts)
        target = sample_of_slot[:, None, None] * n_frameworks + groups[None, :, None]
        target = target * n_frameworks + groups[None, None, :]
        wins += np.bincount(target.ravel(), weights=slot_wins.ravel(), minlength=wins.size).reshape(
            wins.shape
        )
        _add_rows(final_sum, sample_of_slot, prd.weight * f)
        _add_rows(effective_sum, sample_of_slot, prd.weight * e)
        ran = np.bincount(prd.framework, minlength=n_frameworks) > 0
        _add_rows(present, sample_of_slot, np.broadcast_to(prd.weight * ran, f.shape))
    return wins, final_sum, effective_sum, present


def rate_suite(
    runs: pd.DataFrame,
    ac_scores: pd.DataFrame,
    weights: Mapping[str, float],
    *,
    judge_var: pd.Series | None = None,
    baselines: Mapping[str, str | None] | None = None,
    pins: Mapping[str, str | None] | None = None,
    n_samples: int = SUITE_SAMPLES,
    seed: int = 0,
    level: float = CI_LEVEL,
) -> SuiteReport:
    """Rate the suite's frameworks (module doc). `judge_var`: run_key → variance of its
    Final under the vote split (`judge_variance`); a run without one has judge SD NULL."""
    if n_samples < 1:
        raise InputError("n_samples must be at least 1", fix=f"use the default {SUITE_SAMPLES}")
    if not 0.0 < level < 1.0:
        raise InputError(f"CI level {level} is not in (0, 1)", fix="use 0.95")
    kept, left_out = select_runs(runs, weights, baselines=baselines, pins=pins)
    _require(ac_scores, AC_COLUMNS, "suite AC-score table")
    kept = kept.sort_values(["benchmark", "framework", "run_key"], ignore_index=True)
    frameworks = pd.Index(sorted(kept["framework"].astype(str).unique()))
    if len(frameworks) < 2:
        raise InputError(
            f"a suite rating needs at least 2 frameworks with ranked runs, found {len(frameworks)}",
            where="suite",
            fix="score runs of at least two frameworks on the suite's benchmarks",
        )
    ac = ac_scores.loc[:, list(AC_COLUMNS)].assign(
        ac_score=pd.to_numeric(ac_scores["ac_score"], errors="coerce").astype(float)
    )
    ac = ac.assign(benchmark=ac["run_key"].map(kept.set_index("run_key")["benchmark"]))
    ac_by_prd = dict(tuple(ac.dropna(subset=["benchmark"]).groupby("benchmark", sort=True)))
    empty = ac.iloc[:0]
    prds = [
        _prd_arrays(runs_b, ac_by_prd.get(b, empty), frameworks, float(weights[b]))
        for b, runs_b in kept.groupby("benchmark", sort=True)
    ]
    n_fw = len(frameworks)
    point_wins = sum(_point_wins(prd, n_fw) for prd in prds)
    point_fit = fit_or_raise(point_wins[None])
    boot_wins, final_sum, effective_sum, present = _bootstrap(prds, n_fw, n_samples, seed)
    boot_fit = fit_or_raise(boot_wins, theta0=point_fit.theta[0])
    tail = 100.0 * (1.0 - level) / 2.0
    ratings = boot_fit.ratings
    low, high = np.percentile(ratings, [tail, 100.0 - tail], axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot_final = final_sum / present
        boot_effective = effective_sum / present
    final_ci = np.nanpercentile(boot_final, [tail, 100.0 - tail], axis=0)
    effective_ci = np.nanpercentile(boot_effective, [tail, 100.0 - tail], axis=0)

    prd_scores = _prd_scores(kept, weights, judge_var)
    per_fw = _framework_stats(kept, prd_scores, frameworks)
    n_matches = sum(
        np.bincount(
            (prd.framework[:, None] * n_fw + prd.framework[None, :]).ravel(),
            weights=prd.matches.ravel(),
            minlength=n_fw * n_fw,
        ).reshape(n_fw, n_fw)
        for prd in prds
    )
    rating = per_fw.assign(
        rating=point_fit.ratings[0],
        rating_ci_low=low,
        rating_ci_high=high,
        mean_final_ci_low=final_ci[0],
        mean_final_ci_high=final_ci[1],
        mean_effective_ci_low=effective_ci[0],
        mean_effective_ci_high=effective_ci[1],
        n_matches=n_matches.sum(axis=1).astype(np.int64),
    )
    pairs = _pairs(rating, ratings)
    rating = rating.sort_values(["rating", "framework"], ascending=[False, True], ignore_index=True)
    rating["rank"] = np.arange(1, len(rating) + 1)
    noisy = {(r.a, r.b): r.within_run_noise for r in pairs.itertuples(index=False)}
    following = rating["framework"].shift(-1)
    rating["gap_to_next_within_run_noise"] = [
        None if not isinstance(nxt, str) else noisy[tuple(sorted((fw, nxt)))]
        for fw, nxt in zip(rating["framework"], following, strict=True)
    ]
    judge = {c: kept[c].iloc[0] for c in JUDGE_FIELDS}
    return SuiteReport(
        rating=rating.loc[:, list(RATING_COLUMNS)],
        pairs=pairs,
        prd_scores=prd_scores.loc[:, list(PRD_COLUMNS)],
        left_out=left_out,
        separability=separability(low, high),
        judge=judge,
        n_samples=n_samples,
        seed=seed,
        level=level,
    )


def _prd_scores(
    kept: pd.DataFrame, weights: Mapping[str, float], judge_var: pd.Series | None
) -> pd.DataFrame:
    frame = kept.assign(
        effective=kept["adjusted_final"].astype(float).fillna(kept["final"]).astype(float),
        final=kept["final"].astype(float),
        judge_var=kept["run_key"].map(judge_var) if judge_var is not None else np.nan,
    )
    frame["judge_missing"] = frame["judge_var"].isna()
    cells = frame.groupby(["framework", "benchmark"], sort=True).agg(
        n_runs=("run_key", "size"),
        mean_final=("final", "mean"),
        mean_effective_final=("effective", "mean"),
        run_var=("final", "var"),
        judge_var=("judge_var", "mean"),
        judge_unknown=("judge_missing", "sum"),
    )
    cells = cells.reset_index()
    # A cell with a run whose judge variance is unknown has an unknown judge variance.
    cells["judge_var"] = cells["judge_var"].where(cells.pop("judge_unknown") == 0)
    cells["weight"] = cells["benchmark"].map(weights).astype(float)
    cells["run_to_run_sd"] = np.sqrt(cells["run_var"])
    cells["judge_sd"] = np.sqrt(cells["judge_var"])
    return cells


def _weighted(values: pd.Series, weights: pd.Series) -> float:
    known = values.notna()
    if not known.any():
        return float("nan")
    return float(np.average(values[known], weights=weights[known]))


def _framework_stats(kept: pd.DataFrame, cells: pd.DataFrame, frameworks: pd.Index) -> pd.DataFrame:
    rows = []
    for fw in frameworks:
        c = cells[cells["framework"] == fw]
        runs = kept[kept["framework"] == fw]
        cost = runs["framework_cost_usd"].astype(float) + runs["judge_cost_usd"].astype(float)
        cost_per_run = float(cost.mean()) if cost.notna().all() else float("nan")
        mean_final = _weighted(c["mean_final"], c["weight"])
        rows.append(
            {
                "framework": fw,
                "mean_final": mean_final,
                "mean_effective_final": _weighted(c["mean_effective_final"], c["weight"]),
                "n_adjusted": int(runs["adjusted_final"].notna().sum()),
                "n_prds": len(c),
                "n_runs": len(runs),
                "run_var": _weighted(c["run_var"], c["weight"]),
                "run_to_run_sd": np.sqrt(_weighted(c["run_var"], c["weight"])),
                "judge_sd": np.sqrt(_weighted(c["judge_var"], c["weight"])),
                "prd_sd": float(c["mean_final"].std(ddof=1)) if len(c) > 1 else float("nan"),
                "cost_per_run_usd": cost_per_run,
                "cost_per_final_point_usd": (
                    cost_per_run / (100.0 * mean_final) if mean_final > 0 else float("nan")
                ),
            }
        )
    return pd.DataFrame(rows)


def _pairs(rating: pd.DataFrame, samples: np.ndarray) -> pd.DataFrame:
    """One row per framework pair a < b (rating frame in framework order, samples B × F)."""
    i, j = np.triu_indices(len(rating), k=1)
    diff = samples[:, i] - samples[:, j]
    p_a = (diff > 0).mean(axis=0) + 0.5 * (diff == 0).mean(axis=0)
    low, high = rating["rating_ci_low"].to_numpy(), rating["rating_ci_high"].to_numpy()
    gap = rating["mean_final"].to_numpy()[i] - rating["mean_final"].to_numpy()[j]
    run_var = rating["run_var"].to_numpy()
    noise = np.sqrt(run_var[i] + run_var[j])
    within = pd.Series(np.abs(gap) < noise, dtype="object").where(~np.isnan(noise), None)
    names = rating["framework"].to_numpy()
    return pd.DataFrame(
        {
            "a": names[i],
            "b": names[j],
            "p_a_better": p_a,
            "rating_gap": rating["rating"].to_numpy()[i] - rating["rating"].to_numpy()[j],
            "mean_final_gap": gap,
            "ci_overlap": (low[i] <= high[j]) & (low[j] <= high[i]),
            "within_run_noise": within,
        }
    ).loc[:, list(PAIR_COLUMNS)]
