"""Benchmark the light CLI commands against the cost of importing Dagster.

Each command runs in a fresh interpreter (as a user types it) five times, without
DAGSTER_HOME; printed: the median wall time of each, its target, and its ratio to
`python -c "import dagster"` measured the same way in the same run (so a loaded machine shows
up in both). Targets: `evalflow --help` < 0.5 s, `evalflow query` < 1 s. The start-up cases
run on an empty temporary warehouse; with `--warehouse` (a scored one, e.g. after
`evalflow demo --warehouse /tmp/demo_wh`) the leaderboard cases read real tables too.

Run from the repository root:
`.venv/bin/python benchmarks/bench_cli.py [--repeat N] [--warehouse DIR]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The console script's own code path (`evalflow.cli:main`), without depending on where the
# script was installed.
EVALFLOW = [sys.executable, "-c", "import sys; from evalflow.cli import main; main(sys.argv[1:])"]
CASES: list[tuple[str, list[str], float | None]] = [
    ('python -c "import dagster"', [sys.executable, "-c", "import dagster"], None),
    ("evalflow --help", [*EVALFLOW, "--help"], 0.5),
    ("evalflow --version", [*EVALFLOW, "--version"], 0.5),
    ('evalflow query "SELECT 1"', [*EVALFLOW, "query", "SELECT 1"], 1.0),
    (
        "evalflow baseline check",
        [*EVALFLOW, "baseline", "check", "data/benchmarks/trialist/_ac-baseline.yaml"],
        1.0,
    ),
]
# Read a scored warehouse (--warehouse): skipped without one, where they would only time
# the "no ranked runs yet" error.
SCORED_CASES: list[tuple[str, list[str], float | None]] = [
    ('query "SELECT * FROM leaderboard"', [*EVALFLOW, "query", "SELECT * FROM leaderboard"], 1.0),
    ("evalflow leaderboard", [*EVALFLOW, "leaderboard"], 1.0),
]


def median_seconds(command: list[str], env: dict[str, str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="one repeat (CI)")
    parser.add_argument("--warehouse", type=Path, help="a scored warehouse for the read cases")
    args = parser.parse_args()
    repeat = 1 if args.smoke else args.repeat
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "EVALFLOW_WAREHOUSE": str(Path(tmp) / "warehouse")}
        env.pop("DAGSTER_HOME", None)
        medians = {name: median_seconds(cmd, env, repeat) for name, cmd, _ in CASES}
    cases = CASES
    if args.warehouse:
        env["EVALFLOW_WAREHOUSE"] = str(args.warehouse.resolve())
        medians |= {name: median_seconds(cmd, env, repeat) for name, cmd, _ in SCORED_CASES}
        cases = CASES + SCORED_CASES
    dagster = medians[CASES[0][0]]
    print(f"median of {repeat} runs, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(f"{'command':34} {'median':>8} {'target':>8} {'÷ dagster':>10}")
    for name, _, target in cases:
        goal = f"< {target:.1f} s" if target else ""
        mark = "" if target is None else (" ok" if medians[name] < target else " MISSED")
        ratio = medians[name] / dagster
        print(f"{name:34} {medians[name]:7.2f}s {goal:>8} {ratio:9.2f}×{mark}")


if __name__ == "__main__":
    main()
