"""Benchmark incremental re-evaluation: an unchanged demo run against a forced one.

One demo run (`data/benchmarks/trialist/runs/`, the offline heuristic judge) is evaluated
once into a temporary warehouse; then, alternately, `materialize` re-materialises it
unchanged (what `evalflow materialize` does by default) and with `force=True`
(`--force`), each timed end to end, ranking and catalog refresh included. Printed: the
median wall time of each, the ratio forced ÷ unchanged, and the Dagster steps each
executed — the scoring, gate and side-metric steps of the unchanged re-materialisation must
be 0 (the script exits 1 otherwise).

`--executor multiprocess` times the forced runs on Dagster's multiprocess executor
(`evalflow materialize --executor multiprocess --force`), `--executor both` on each executor
in turn (interleaved, so a change in the machine's load hits both alike) and prints the ratio
multiprocess ÷ in-process; the first, unmeasured evaluation is always in-process.

Run from the repository root:
`.venv/bin/python benchmarks/bench_incremental.py [--repeat N] [--executor EXECUTOR]`
(EXECUTOR: in_process, the default; multiprocess; both).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import dagster as dg

from evalflow.pipeline import orchestrate

MANIFEST = Path("data/benchmarks/trialist/runs")
EXPENSIVE = ("scoring_run_", "gates", "side_metrics")


def steps_since(inst: dg.DagsterInstance, known: set[str]) -> list[str]:
    """The steps started by Dagster runs not in `known`."""
    steps = []
    for run in inst.get_runs():
        if run.run_id not in known:
            for record in inst.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_START):
                steps.append(record.step_key)
    return steps


def timed(
    root: str, key: str, force: bool, executor: str = "in_process"
) -> tuple[float, list[str]]:
    inst = orchestrate.instance(root)
    known = {run.run_id for run in inst.get_runs()}
    start = time.perf_counter()
    outcomes = orchestrate.materialize(root, [key], force=force, executor=executor)
    seconds = time.perf_counter() - start
    if not all(o.success for o in outcomes):
        sys.exit(f"evaluation failed: {outcomes}")
    return seconds, steps_since(inst, known)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="one repeat (CI)")
    parser.add_argument(
        "--executor", choices=[*orchestrate.EXECUTORS, "both"], default="in_process"
    )
    args = parser.parse_args()
    repeat = 1 if args.smoke else args.repeat
    executors = orchestrate.EXECUTORS if args.executor == "both" else (args.executor,)
    os.environ.pop("DAGSTER_HOME", None)
    manifest = sorted(MANIFEST.glob("*.yaml"))[0]
    with tempfile.TemporaryDirectory() as tmp:
        root = str(Path(tmp) / "warehouse")
        (key,) = orchestrate.register(root, [manifest])
        timed(root, key, force=True)  # the first evaluation (not measured)
        unchanged: list[tuple[float, list[str]]] = []
        forced: dict[str, list[tuple[float, list[str]]]] = {e: [] for e in executors}
        loads = [os.getloadavg()[0]]
        for _ in range(repeat):
            unchanged.append(timed(root, key, force=False))
            for executor in executors:
                forced[executor].append(timed(root, key, force=True, executor=executor))
            loads.append(os.getloadavg()[0])
    u = statistics.median(s for s, _ in unchanged)
    f = {e: statistics.median(s for s, _ in samples) for e, samples in forced.items()}
    print(
        f"{key}: median of {repeat}, {os.cpu_count()} cores, 1-min load average "
        f"{min(loads):.1f}–{max(loads):.1f} (sampled before and after each round)"
    )
    print(f"{'':32} {'median':>8} {'steps':>6} {'scoring/gate/side-metric steps':>31}")
    rows = [("unchanged (default)", u, unchanged)]
    rows += [(f"--force --executor {e}", f[e], forced[e]) for e in executors]
    for name, seconds, samples in rows:
        steps = samples[-1][1]
        heavy = [s for s in steps if s.startswith(EXPENSIVE)]
        print(f"{name:32} {seconds:7.2f}s {len(steps):6d} {len(heavy):31d}")
    for executor in executors:
        print(f"ratio forced ({executor}) ÷ unchanged: {f[executor] / u:.1f}×")
    if len(executors) == 2:
        print(
            f"ratio multiprocess ÷ in_process (forced): {f['multiprocess'] / f['in_process']:.1f}×"
        )
    redone = [s for _, steps in unchanged for s in steps if s.startswith(EXPENSIVE)]
    if redone:
        sys.exit(f"an unchanged run re-executed {len(redone)} expensive step(s): {redone}")


if __name__ == "__main__":
    main()
