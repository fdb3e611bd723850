"""Benchmark the suite rating: 20 frameworks × 50 PRDs × 3 runs × 40 ACs with a 1,000-sample
cluster bootstrap (≈ 3.4 M run-vs-run AC matches), target < 5 s.

1. `rate_suite` end to end from the run and AC-score frames (selection, per-PRD match
   matrices, full-data fit, 1,000 cluster-bootstrap samples — PRDs, then runs within each
   PRD — one batched Bradley–Terry solve, mean-Final CIs, pairs, variance decomposition).
   Median over repeats.
2. Baseline in the same run: a straightforward per-sample pandas implementation — for each
   sample, draw PRDs and runs, self-merge each drawn PRD's AC rows on the AC to form the
   run-vs-run matches, group-by the framework pair for the win matrix, then the same
   Bradley–Terry fit. It is timed on a few samples and extrapolated linearly to 1,000 (said
   so in the output); its full-data win matrix is checked against the vectorised one.

3. The same with 10 runs per framework per PRD (target < 10 s CPU, < 1 GB): the cost of a
   drawn PRD grows with runs², not with the number of distinct draws.

Wall time depends on how busy the machine is; CPU time of this process is printed beside
it (numpy may use more than one thread, so CPU can exceed wall on an idle machine).

Run from the repository root: `.venv/bin/python benchmarks/bench_suite.py [--quick | --smoke]`.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

import numpy as np
import pandas as pd

from evalflow.domain.ranking import suite
from evalflow.domain.ranking.bradley_terry import fit_or_raise

N_FRAMEWORKS, N_PRDS, N_RUNS, N_ACS = 20, 50, 3, 40
N_SAMPLES = 1000
TARGET_S = 5.0
TARGET_10_RUNS_S = 10.0
SEED = 20261201


def synthetic(n_fw: int, n_prd: int, n_run: int, n_ac: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs and AC scores: framework skill + PRD difficulty + run noise, scores in 0.05 steps
    (so draws happen), 2 % of AC scores unmeasured (NULL)."""
    rng = np.random.default_rng(SEED)
    skill = rng.normal(0.6, 0.12, n_fw)
    runs, acs = [], []
    for p in range(n_prd):
        difficulty = rng.normal(0.0, 0.08)
        for f in range(n_fw):
            for r in range(n_run):
                key = f"prd{p:02d}.fw{f:02d}.r{r}"
                base = skill[f] - difficulty + rng.normal(0.0, 0.05)
                scores = np.clip(base + rng.normal(0.0, 0.2, n_ac), 0.0, 1.0)
                scores = np.round(scores * 20) / 20
                scores[rng.random(n_ac) < 0.02] = np.nan
                runs.append(
                    {
                        "run_key": key,
                        "benchmark": f"prd{p:02d}",
                        "framework": f"fw{f:02d}",
                        "baseline_sha256": f"sha{p:02d}",
                        "judge_id": "heuristic",
                        "judge_model": None,
                        "judge_prompt_version": "heuristic-4",
                        "final": float(np.nanmean(scores)),
                        "adjusted_final": None,
                        "not_ranked_reason": None,
                        "framework_cost_usd": 1.0 + f / 10,
                        "judge_cost_usd": 0.0,
                    }
                )
                acs += [
                    {"run_key": key, "ac_id": f"AC-{a:02d}", "ac_score": s}
                    for a, s in enumerate(scores)
                ]
    return pd.DataFrame(runs), pd.DataFrame(acs)


def pandas_wins(
    ac: pd.DataFrame, drawn: list[tuple[str, pd.DataFrame]], frameworks: list[str]
) -> np.ndarray:
    """One sample's F × F win matrix, the straightforward way: per drawn PRD, the drawn runs
    (with their multiplicity / n as weight), a self-merge on the AC, a group-by."""
    wins = pd.Series(0.0, index=pd.MultiIndex.from_product([frameworks, frameworks]))
    for _, runs in drawn:
        rows = ac.merge(runs, on="run_key").dropna(subset=["ac_score"])
        pairs = rows.merge(rows, on="ac_id", suffixes=("_a", "_b"))
        pairs = pairs[pairs["framework_a"] != pairs["framework_b"]]
        diff = pairs["ac_score_a"] - pairs["ac_score_b"]
        outcome = np.where(diff > 1e-12, 1.0, np.where(diff < -1e-12, 0.0, 0.5))
        weighted = pd.Series(outcome * pairs["w_a"] * pairs["w_b"])
        summed = weighted.groupby([pairs["framework_a"].values, pairs["framework_b"].values]).sum()
        wins = wins.add(summed, fill_value=0.0)
    return wins.to_numpy().reshape(len(frameworks), len(frameworks))


def pandas_sample(
    runs: pd.DataFrame, ac: pd.DataFrame, frameworks: list[str], rng: np.random.Generator | None
) -> np.ndarray:
    """Draw one sample (rng None: the full data, every run once) and return its wins."""
    prds = sorted(runs["benchmark"].unique())
    chosen = prds if rng is None else [prds[i] for i in rng.integers(0, len(prds), len(prds))]
    drawn = []
    for prd in chosen:
        parts = []
        for _, group in runs[runs["benchmark"] == prd].groupby("framework"):
            picked = (
                group if rng is None else group.sample(len(group), replace=True, random_state=rng)
            )
            counts = picked["run_key"].value_counts()
            parts.append(
                pd.DataFrame(
                    {
                        "run_key": counts.index,
                        "framework": group["framework"].iloc[0],
                        "w": counts.to_numpy() / len(group),
                    }
                )
            )
        drawn.append((prd, pd.concat(parts, ignore_index=True)))
    return pandas_wins(ac, drawn, frameworks)


def bench(n_fw: int, n_prd: int, n_run: int, n_ac: int, n_samples: int, args) -> None:
    repeats, baseline_samples = (1, 1) if args.quick or args.smoke else (3, 2)
    target = TARGET_S if n_run <= 3 else TARGET_10_RUNS_S
    runs, ac = synthetic(n_fw, n_prd, n_run, n_ac)
    weights = {b: 1.0 for b in runs["benchmark"].unique()}

    times, cpu_times = [], []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        report = suite.rate_suite(runs, ac, weights, n_samples=n_samples, seed=0)
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu)
    median, cpu_median = statistics.median(times), statistics.median(cpu_times)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    n_matches = int(report.rating["n_matches"].sum() // 2)

    frameworks = sorted(runs["framework"].unique())
    kept = runs.sort_values(["benchmark", "framework", "run_key"], ignore_index=True)
    prds = [
        suite._prd_arrays(
            group, ac[ac["run_key"].isin(group["run_key"])], pd.Index(frameworks), 1.0
        )
        for _, group in kept.groupby("benchmark", sort=True)
    ]
    vectorised_point = sum(suite._point_wins(prd, len(frameworks)) for prd in prds)
    pandas_point = pandas_sample(runs, ac, frameworks, None)
    agreement = float(np.abs(vectorised_point - pandas_point).max())

    rng = np.random.default_rng(0)
    start, cpu = time.perf_counter(), time.process_time()
    baseline_wins = [pandas_sample(runs, ac, frameworks, rng) for _ in range(baseline_samples)]
    fit_or_raise(np.stack(baseline_wins))
    per_sample = (time.perf_counter() - start) / baseline_samples
    cpu_per_sample = (time.process_time() - cpu) / baseline_samples
    baseline_total, baseline_cpu = per_sample * n_samples, cpu_per_sample * n_samples

    print(
        f"suite rating: {n_fw} frameworks × {n_prd} PRDs × {n_run} runs × {n_ac} ACs "
        f"= {n_matches:,} run-vs-run AC matches, {n_samples} cluster-bootstrap samples"
    )
    each = ", ".join(f"{t:.2f}" for t in times)
    verdict = "met" if cpu_median < target else "MISSED"
    print(f"  rate_suite wall, median of {repeats}: {median:.2f} s ({each})")
    print(
        f"  rate_suite CPU time (this process), median: {cpu_median:.2f} s; "
        f"< {target:.0f} s {verdict}; peak RSS of the process so far {peak_mb:.0f} MB"
    )
    print(
        f"  per-sample pandas baseline: {per_sample:.2f} s ({cpu_per_sample:.2f} s CPU) per "
        f"sample, measured on {baseline_samples}, extrapolated to {n_samples}: "
        f"{baseline_total:.0f} s ({baseline_cpu:.0f} s CPU)"
    )
    print(
        f"  ratio baseline / vectorised: {baseline_total / median:.0f}× wall, "
        f"{baseline_cpu / cpu_median:.0f}× CPU"
    )
    print(f"  full-data win matrices agree to {agreement:.1e}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="1 repeat, 1 baseline sample")
    parser.add_argument("--smoke", action="store_true", help="a tiny suite, 100 samples (CI)")
    args = parser.parse_args()
    if args.smoke:
        bench(5, 5, 3, 10, 100, args)
        bench(5, 5, 10, 10, 100, args)
        return
    bench(N_FRAMEWORKS, N_PRDS, N_RUNS, N_ACS, N_SAMPLES, args)
    # 10 runs per framework per PRD: the pattern tables this replaced took 379 CPU-s and
    # 7.2 GB here (issue 33); target < 10 s and < 1 GB.
    bench(N_FRAMEWORKS, N_PRDS, 10, N_ACS, N_SAMPLES, args)


if __name__ == "__main__":
    main()
