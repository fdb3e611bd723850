"""Benchmark the ranking bootstrap and the Final Monte Carlo.

1. Bradley–Terry bootstrap: 500 seeded samples over 100,000 synthetic matches among 50
   frameworks (true log-strengths ~ N(0, 1), 10 % draws), target < 2 s. Timed from the match
   table: encoding + full-data fit + bincount win matrices for all samples + one batched
   Newton solve. Median over repeats.
2. Baseline: the same computation written as plain sequential Python (loop over samples;
   per sample, count the drawn matches into a win matrix, then Newton iterations with a
   Gaussian-elimination solve and the same line search, prior and stopping rule), on the
   *same* drawn indices and the same warm start. It is measured on a few samples and
   extrapolated linearly to 500 (said so in the output); its ratings are checked against the
   vectorised ones for those samples.
3. 500 runs of one PRD (issue 33): `rate`, as the `elo_bootstrap` asset calls it, on the
   AC matches of 500 runs × 10 ACs (1,247,500 matches, every run its own player), target
   < 60 s CPU with bounded memory. Before, in the same run: the same call also replayed
   sequential Elo on every bootstrap sample (one vectorised step per match, the drawn
   sequences held at once); that replay is measured on a few samples and extrapolated
   linearly to 500 (said so in the output).
4. Final uncertainty: 100 runs × 100 checks (k = 3 votes, random), N = 2000 simulations,
   including all 4,950 pairwise P(A > B).

Run from the repository root: `.venv/bin/python benchmarks/bench_ranking.py [--quick]`.
"""

from __future__ import annotations

import argparse
import math
import resource
import statistics
import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import pandas as pd

from evalflow.domain.ranking.bootstrap import (
    BootstrapSamples,
    _draw_blocks,
    bootstrap_bradley_terry,
    bootstrap_elo,
    prepare,
    rate,
)
from evalflow.domain.ranking.bradley_terry import (
    BT_MAX_ITER,
    BT_PRIOR,
    BT_TOLERANCE,
    ELO_SCALE,
    fit_or_raise,
    win_matrix,
)
from evalflow.domain.ranking.final_uncertainty import CHECK_VOTE_COLUMNS, final_uncertainty
from evalflow.domain.ranking.matches import AC_SCORE_COLUMNS, form_matches, to_elo_matches

N_PLAYERS = 50
N_MATCHES = 100_000
N_SAMPLES = 500
BT_TARGET_S = 2.0
SEED = 20240917
T = TypeVar("T")


def _median_seconds(fn: Callable[[], T], repeats: int) -> tuple[float, T]:
    times: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def synthetic_matches(n_players: int, n_matches: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    strength = rng.normal(0.0, 1.0, n_players)
    a = rng.integers(0, n_players, n_matches)
    b = (a + rng.integers(1, n_players, n_matches)) % n_players
    p_a = 1.0 / (1.0 + np.exp(-(strength[a] - strength[b])))
    u = rng.random(n_matches)
    score = np.where(u < 0.9 * p_a, 1.0, np.where(u < 0.9 * p_a + 0.1, 0.5, 0.0))
    names = np.array([f"framework-{i:02d}" for i in range(n_players)], dtype=object)
    return pd.DataFrame({"a": names[a], "b": names[b], "score_a": score})


# ---- the plain-Python baseline ------------------------------------------------------------


def _py_objective(theta: list[float], wins: list[list[float]], prior: float) -> float:
    n = len(theta)
    total = 0.5 * prior * sum(t * t for t in theta)
    for i in range(n):
        for j in range(n):
            if wins[i][j]:
                d = theta[i] - theta[j]
                total += wins[i][j] * (max(-d, 0.0) + math.log1p(math.exp(-abs(d))))
    return total


def _py_solve(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    n = len(rhs)
    m = [[*row, rhs[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            if f:
                row_r, row_c = m[r], m[col]
                for c in range(col, n + 1):
                    row_r[c] -= f * row_c[c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


def _py_fit(wins: list[list[float]], theta0: list[float], prior: float) -> list[float]:
    n = len(theta0)
    eps = 2.220446049250313e-16
    games = [[wins[i][j] + wins[j][i] for j in range(n)] for i in range(n)]
    won = [sum(row) for row in wins]
    theta = list(theta0)
    loss = _py_objective(theta, wins, prior)
    for _ in range(BT_MAX_ITER):
        p = [[1.0 / (1.0 + math.exp(-(theta[i] - theta[j]))) for j in range(n)] for i in range(n)]
        grad = [
            sum(games[i][j] * p[i][j] for j in range(n)) - won[i] + prior * theta[i]
            for i in range(n)
        ]
        hess = [[1.0 / n] * n for _ in range(n)]
        for i in range(n):
            for j in range(n):
                c = games[i][j] * p[i][j] * p[j][i]
                hess[i][j] -= c
                hess[i][i] += c
            hess[i][i] += prior
        step = [-s for s in _py_solve(hess, grad)]
        slope = sum(g * s for g, s in zip(grad, step, strict=True))
        slack = 8.0 * eps * (abs(loss) + 1.0)
        size = 1.0
        for _ in range(60):
            candidate = [t + size * s for t, s in zip(theta, step, strict=True)]
            candidate_loss = _py_objective(candidate, wins, prior)
            if candidate_loss <= loss + 1e-4 * size * slope + slack:
                break
            size /= 2.0
        mean = sum(candidate) / n
        theta = [t - mean for t in candidate]
        moving = max(abs(size * s) for s in step) > BT_TOLERANCE
        gaining = -slope > eps * (abs(loss) + 1.0)
        loss = candidate_loss
        if not (moving and gaining):
            break
    return theta


def python_bootstrap(
    a: list[int], b: list[int], s: list[float], n: int, draws: list[list[int]], theta0: list[float]
) -> list[list[float]]:
    out = []
    for row in draws:
        wins = [[0.0] * n for _ in range(n)]
        for index in row:
            wins[a[index]][b[index]] += s[index]
            wins[b[index]][a[index]] += 1.0 - s[index]
        theta = _py_fit(wins, theta0, BT_PRIOR)
        out.append([1500.0 + ELO_SCALE * t for t in theta])
    return out


# ---- benchmarks ---------------------------------------------------------------------------


def bench_bradley_terry(
    repeats: int, baseline_samples: int, n_matches: int = N_MATCHES, n_samples: int = N_SAMPLES
) -> None:
    print(
        f"== Bradley–Terry bootstrap: {n_samples} samples × {n_matches:,} matches × "
        f"{N_PLAYERS} frameworks (median of {repeats}) =="
    )
    matches = synthetic_matches(N_PLAYERS, n_matches, SEED)

    def run() -> BootstrapSamples:
        return bootstrap_bradley_terry(prepare(matches), n_samples=n_samples, seed=SEED)

    seconds, boot = _median_seconds(run, repeats)
    verdict = "ok" if seconds < BT_TARGET_S else "OVER TARGET"
    print(f"  vectorised (numpy)      {seconds:8.3f} s   (target < {BT_TARGET_S:.0f} s: {verdict})")
    res = prepare(matches)
    prep_s, _ = _median_seconds(lambda: prepare(matches), repeats)
    print(f"    of which encoding the match table {prep_s:.3f} s")

    enc = res.encoded
    full = fit_or_raise(win_matrix(enc.a, enc.b, enc.score_a, enc.n_players)[None])
    first_block = next(_draw_blocks(SEED, n_samples, res.n_draw))
    draws = first_block[:baseline_samples].tolist()
    args = (enc.a.tolist(), enc.b.tolist(), enc.score_a.tolist(), enc.n_players)
    start = time.perf_counter()
    py = python_bootstrap(*args, draws, full.theta[0].tolist())
    per_sample = (time.perf_counter() - start) / baseline_samples
    extrapolated = per_sample * n_samples
    vec = boot.samples[:baseline_samples]
    gap = float(np.abs(np.array(py) - vec).max())
    print(
        f"  plain Python (baseline) {extrapolated:8.1f} s   extrapolated linearly from "
        f"{baseline_samples} sample(s) at {per_sample:.3f} s each"
    )
    print(f"  speed-up                {extrapolated / seconds:8.1f} ×")
    print(f"  baseline vs vectorised ratings: max |Δ| = {gap:.2e} Elo points")


def synthetic_ac_scores(n_runs: int, n_acs: int, seed: int) -> pd.DataFrame:
    """One PRD, 20 frameworks, `n_runs` runs (several per framework, so each run is its own
    player), AC scores in tenths from a per-run skill."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, 0.2, n_runs)
    score = np.clip(skill[:, None] + rng.random((n_runs, n_acs)), 0.0, 1.0).round(1)
    framework = [f"fw{r % 20:02d}" for r in range(n_runs)]
    return pd.DataFrame(
        [
            ("bench", "base", "prd", f"bench.{framework[r]}.r{r:04d}", framework[r],
             f"S{a // 4}", f"S{a // 4}-AC{a}", float(score[r, a]))
            for r in range(n_runs)
            for a in range(n_acs)
        ],
        columns=list(AC_SCORE_COLUMNS),
    )  # fmt: skip


def bench_runs_per_prd(n_runs: int, n_samples: int, elo_samples: int) -> None:
    matches = form_matches(synthetic_ac_scores(n_runs, 10, SEED))
    print(
        f"== {n_runs} runs of one PRD: {len(matches):,} AC matches, {n_samples} bootstrap "
        f"samples (`rate`, as the elo_bootstrap asset) =="
    )
    cpu, wall = time.process_time(), time.perf_counter()
    report = rate(matches, n_samples=n_samples, seed=SEED)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    verdict = "ok" if cpu < 60.0 else "OVER TARGET"
    print(
        f"  now                     {cpu:8.1f} s CPU ({wall:.1f} s wall), peak RSS of the "
        f"process {peak_mb:,.0f} MB (target < 60 s: {verdict})"
    )
    if report.elo_left_out is None:
        print("  Elo within its replay budget: included, as before")
        return
    print(f"    {report.elo_left_out}")
    res, elo_matches = prepare(matches), to_elo_matches(matches)
    seconds = []
    for samples in (elo_samples, 2 * elo_samples):
        start = time.process_time()
        bootstrap_elo(res, elo_matches, n_samples=samples, seed=SEED)
        seconds.append(time.process_time() - start)
    # The replay is vectorised across samples, so its cost is a + b·samples: a line through
    # the two measurements, not a multiple of one.
    slope = max(seconds[1] - seconds[0], 0.0) / elo_samples
    elo = seconds[1] + slope * (n_samples - 2 * elo_samples)
    sequences_gb = n_samples * len(matches) * 4 / 1e9
    print(
        f"  before (+ Elo replay)   {cpu + elo:8.1f} s CPU: the replay extrapolated linearly "
        f"from {elo_samples} and {2 * elo_samples} samples ({seconds[0]:.1f} s, "
        f"{seconds[1]:.1f} s) to {n_samples}, holding {sequences_gb:.1f} GB of drawn sequences"
    )
    print(f"  ratio                   {(cpu + elo) / cpu:8.1f} × CPU")


def synthetic_votes(n_runs: int, checks_per_run: int, seed: int) -> pd.DataFrame:
    """Per run: 5 stories (weights 3, 3, 2, 2, 0) × 4 ACs × 5 checks (3 I + 2 T)."""
    rng = np.random.default_rng(seed)
    weights = (3, 3, 2, 2, 0)
    layout = [
        (f"S{s}", weights[s], f"S{s}-AC{a}", f"S{s}-AC{a}-{kind}{c}", kind)
        for s in range(5)
        for a in range(4)
        for kind, count in (("I", 3), ("T", 2))
        for c in range(count)
    ]
    assert len(layout) == checks_per_run
    rows = [
        (f"run-{r:03d}", story, w, ac, check, kind, int(rng.integers(0, 4)), 3)
        for r in range(n_runs)
        for story, w, ac, check, kind in layout
    ]
    return pd.DataFrame(rows, columns=list(CHECK_VOTE_COLUMNS))


def bench_final_uncertainty(repeats: int, n_runs: int = 100) -> None:
    n_checks, n_sims = 100, 2000
    votes = synthetic_votes(n_runs, n_checks, SEED)
    print(
        f"== Final uncertainty: {n_runs} runs × {n_checks} checks × N = {n_sims} "
        f"(median of {repeats}) =="
    )
    seconds, result = _median_seconds(
        lambda: final_uncertainty(votes, n_simulations=n_sims, seed=SEED), repeats
    )
    borderline = int(result.runs["n_borderline"].sum())
    pairs = len(result.pairs)
    print(
        f"  vectorised              {seconds:8.3f} s   ({borderline:,} borderline checks "
        f"redrawn; {pairs:,} pairs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and baseline samples")
    parser.add_argument("--smoke", action="store_true", help="small sizes, 1 repeat (CI)")
    args = parser.parse_args()
    repeats = 2 if args.quick else 5
    if args.smoke:
        bench_bradley_terry(1, baseline_samples=1, n_matches=10_000, n_samples=50)
        bench_runs_per_prd(150, n_samples=500, elo_samples=1)
        bench_final_uncertainty(1, n_runs=20)
        return
    bench_bradley_terry(repeats, baseline_samples=1 if args.quick else 3)
    bench_runs_per_prd(500, n_samples=500, elo_samples=8)
    bench_final_uncertainty(repeats)


if __name__ == "__main__":
    main()
