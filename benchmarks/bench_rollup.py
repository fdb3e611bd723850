"""Benchmark vote + roll-up: 1,000 runs × 100 checks × k = 3 synthetic verdicts.

1. Vectorised: `majority_vote` then `rollup` (numpy/pyarrow codes, exact integer numerators
   over common denominators, no `Fraction`), the code the pipeline runs. Target < 1 s on a
   2-core machine, and ≥ 20× the loop below in CPU seconds.
2. Baseline: a plain per-row Python loop computing the same numbers with `Fraction`
   (majority per check, I/T per AC, story means, Σw-weighted Final, half-up rounding).
   The loop counts an UNSCORED majority as not met, which is the roll-up's lower bound, so
   it is compared with `final_lower` (3 % of the synthetic verdicts are UNSCORED, so most
   runs are incomplete and their `final` is NULL; where a run is complete `final` must equal
   it). The two must agree exactly on every reported AC_score, Story_score and Final bound;
   the script exits 1 if they do not.

Medians over repeats of wall and CPU seconds (this process); the machine is shared, so
quote the CPU figures and the ratio. Run from the repository root:
`.venv/bin/python benchmarks/bench_rollup.py [--quick | --smoke]`.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections import Counter, defaultdict
from fractions import Fraction

import numpy as np
import pandas as pd

from evalflow.domain.rollup import PRIORITY_WEIGHTS, rollup
from evalflow.domain.vote import majority_vote

K = 3
SEED = 20261130
PRIORITIES = ("P0", "P0", "P1", "P1", "P2")


def synthetic(n_runs: int, n_checks: int, seed: int = SEED):
    """Verdicts, checks and stories: 10 checks per AC (6 I, 4 T), 2 ACs per story."""
    rng = np.random.default_rng(seed)
    check_ids = [f"C{i:03d}" for i in range(n_checks)]
    checks = pd.DataFrame(
        {
            "check_id": check_ids,
            "ac_id": [f"AC{i // 10:02d}" for i in range(n_checks)],
            "kind": ["I" if i % 10 < 6 else "T" for i in range(n_checks)],
        }
    )
    ac_ids = sorted(set(checks["ac_id"]))
    stories = pd.DataFrame(
        {
            "ac_id": ac_ids,
            "story_id": [f"S{i // 2:02d}" for i in range(len(ac_ids))],
            "priority": [PRIORITIES[(i // 2) % len(PRIORITIES)] for i in range(len(ac_ids))],
            "assumed": False,
        }
    )
    p_met = rng.uniform(0.2, 0.95, size=(n_runs, 1, 1))
    draws = rng.random((n_runs, n_checks, K))
    status = np.where(draws < p_met, "MET", np.where(draws < p_met + 0.03, "UNSCORED", "UNMET"))
    verdicts = pd.DataFrame(
        {
            "run_key": np.repeat([f"b.fw{r:04d}.r1" for r in range(n_runs)], n_checks * K),
            "check_id": np.tile(np.repeat(check_ids, K), n_runs),
            "run": np.tile(np.arange(1, K + 1), n_runs * n_checks),
            "status": status.reshape(-1),
        }
    )
    return verdicts, checks, stories


def vectorised(verdicts, checks, stories):
    return rollup(majority_vote(verdicts, K), checks, stories)


def half_up(value: Fraction) -> float:
    return math.floor(value * 100 + Fraction(1, 2)) / 100


def per_row_loop(verdicts, checks, stories):
    """The same numbers, one row at a time, with exact fractions."""
    kind = dict(zip(checks["check_id"], checks["kind"], strict=True))
    ac_of = dict(zip(checks["check_id"], checks["ac_id"], strict=True))
    story_of = dict(zip(stories["ac_id"], stories["story_id"], strict=True))
    priority = dict(zip(stories["story_id"], stories["priority"], strict=True))
    votes: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for run_key, check_id, status in zip(
        verdicts["run_key"], verdicts["check_id"], verdicts["status"], strict=True
    ):
        votes[(run_key, check_id)][status] += 1
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for (run_key, check_id), tally in votes.items():
        status, n = tally.most_common(1)[0]
        met = status == "MET" and n * 2 > K
        slot = counts[(run_key, ac_of[check_id])]
        offset = 0 if kind[check_id] == "I" else 2
        slot[offset] += int(met)
        slot[offset + 1] += 1
    ac_scores: dict[tuple[str, str], Fraction] = {}
    for key, (i_met, i_total, t_met, t_total) in counts.items():
        ac_scores[key] = Fraction(3, 5) * Fraction(i_met, i_total) + Fraction(2, 5) * Fraction(
            t_met, t_total
        )
    by_story: dict[tuple[str, str], list[Fraction]] = defaultdict(list)
    for (run_key, ac_id), score in ac_scores.items():
        by_story[(run_key, story_of[ac_id])].append(score)
    story_scores = {key: sum(v, Fraction(0)) / len(v) for key, v in by_story.items()}
    totals: dict[str, list] = defaultdict(lambda: [Fraction(0), 0])
    for (run_key, story_id), score in story_scores.items():
        weight = PRIORITY_WEIGHTS[priority[story_id]]
        if weight:
            totals[run_key][0] += weight * score
            totals[run_key][1] += weight
    finals = {run_key: num / den for run_key, (num, den) in totals.items()}
    return (
        {k: half_up(v) for k, v in ac_scores.items()},
        {k: half_up(v) for k, v in story_scores.items()},
        {k: half_up(v) for k, v in finals.items()},
    )


def median_time(fn, repeats: int):
    """(median wall seconds, median CPU seconds of this process, last result)."""
    walls, cpus, result = [], [], None
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 runs, 3 repeats")
    parser.add_argument("--smoke", action="store_true", help="20 runs, 1 repeat (CI)")
    args = parser.parse_args()
    n_runs, repeats = (20, 1) if args.smoke else (100, 3) if args.quick else (1000, 7)
    data = synthetic(n_runs, 100)
    print(f"vote + roll-up: {n_runs} runs × 100 checks × k = {K} = {len(data[0]):,} verdicts")
    fast_s, fast_cpu, tables = median_time(lambda: vectorised(*data), repeats)
    loop_s, loop_cpu, (ac, story, final) = median_time(
        lambda: per_row_loop(*data), max(1, repeats // 2)
    )
    lower = dict(zip(tables.final["run_key"], tables.final["final_lower"], strict=True))
    complete = tables.final[tables.final["complete"]]
    agree = (
        {(r.run_key, r.ac_id): r.ac_score for r in tables.ac.itertuples()} == ac
        and {(r.run_key, r.story_id): r.story_score for r in tables.story.itertuples()} == story
        and lower == final
        and all(final[k] == v for k, v in zip(complete["run_key"], complete["final"], strict=True))
    )
    print(f"  {len(complete)} of {n_runs} runs complete (the others have a NULL Final and bounds)")
    print(
        f"  vectorised (pipeline code): median {fast_s * 1000:8.1f} ms wall, "
        f"{fast_cpu * 1000:8.1f} ms CPU  (target < 1000 ms)"
    )
    print(
        f"  per-row Python loop:        median {loop_s * 1000:8.1f} ms wall, "
        f"{loop_cpu * 1000:8.1f} ms CPU"
    )
    print(f"  ratio loop / vectorised:    {loop_cpu / fast_cpu:8.1f}× CPU (target ≥ 20×)")
    print(f"  reported numbers agree exactly: {agree}")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
