"""Benchmark incremental re-evaluation: the first evaluation, an unchanged re-evaluation and
a forced one, in CPU seconds.

`--runs N` demo runs (the demo suite's benchmarks, `data/benchmarks/{trialist,shortlink}`,
the offline heuristic judge; default 1) are evaluated once into a temporary warehouse (the
first evaluation: repositories built, mirrored, every step run, ranked); then, alternately,
`materialize` re-materialises them unchanged (what `evalflow materialize` does by default)
and with `force=True` (`--force`), each timed end to end, ranking and catalog refresh
included. CPU is this process's and its children's (git), so the machine's load does not
distort it; wall time is printed too. Printed: CPU and wall of each, the ratios first ÷
unchanged (target ≥ 20×) and forced ÷ unchanged, and the Dagster steps each executed — the
scoring, gate and side-metric steps of the unchanged re-materialisation must be 0 (the
script exits 1 otherwise).

`--executor multiprocess` times the forced runs on Dagster's multiprocess executor
(`evalflow materialize --executor multiprocess --force`), `--executor both` on each executor
in turn (interleaved, so a change in the machine's load hits both alike) and prints the ratio
multiprocess ÷ in-process; the first evaluation is always in-process.

Run from the repository root:
`.venv/bin/python benchmarks/bench_incremental.py [--runs N] [--repeat N] [--executor EXECUTOR]`
(EXECUTOR: in_process, the default; multiprocess; both).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from evalflow.pipeline import orchestrate

DEMO = Path("data/benchmarks")
DEMO_BENCHMARKS = ("trialist", "shortlink")
EXPENSIVE = ("scoring_run_", "gates", "side_metrics")


def steps_since(inst: dg.DagsterInstance, known: set[str]) -> list[str]:
    """The steps started by Dagster runs not in `known`."""
    steps = []
    for run in inst.get_runs():
        if run.run_id not in known:
            for record in inst.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_START):
                steps.append(record.step_key)
    return steps


def cpu() -> float:
    """CPU seconds of this process and its waited-for children (git, gate commands)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass(frozen=True)
class Sample:
    wall: float
    cpu: float
    steps: list[str]


def timed(root: str, keys: list[str], force: bool, executor: str = "in_process") -> Sample:
    inst = orchestrate.instance(root)
    known = {run.run_id for run in inst.get_runs()}
    start, start_cpu = time.perf_counter(), cpu()
    outcomes = orchestrate.materialize(root, keys, force=force, executor=executor)
    seconds, cpu_seconds = time.perf_counter() - start, cpu() - start_cpu
    if not all(o.success for o in outcomes):
        sys.exit(f"evaluation failed: {outcomes}")
    return Sample(seconds, cpu_seconds, steps_since(inst, known))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="demo runs evaluated (max 12)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="one run, one repeat (CI)")
    parser.add_argument(
        "--executor", choices=[*orchestrate.EXECUTORS, "both"], default="in_process"
    )
    args = parser.parse_args()
    repeat = 1 if args.smoke else args.repeat
    executors = orchestrate.EXECUTORS if args.executor == "both" else (args.executor,)
    os.environ.pop("DAGSTER_HOME", None)
    manifests = sorted(m for b in DEMO_BENCHMARKS for m in (DEMO / b / "runs").glob("*.yaml"))
    manifests = manifests[: 1 if args.smoke else args.runs]
    with tempfile.TemporaryDirectory() as tmp:
        root = str(Path(tmp) / "warehouse")
        keys = orchestrate.register(root, manifests)
        first = timed(root, keys, force=True)
        unchanged: list[Sample] = []
        forced: dict[str, list[Sample]] = {e: [] for e in executors}
        loads = [os.getloadavg()[0]]
        for _ in range(repeat):
            unchanged.append(timed(root, keys, force=False))
            for executor in executors:
                forced[executor].append(timed(root, keys, force=True, executor=executor))
            loads.append(os.getloadavg()[0])

    def med(samples: list[Sample], field: str) -> float:
        return statistics.median(getattr(s, field) for s in samples)

    print(
        f"{len(keys)} demo run(s) ({', '.join(keys[:3])}{', …' if len(keys) > 3 else ''}): "
        f"median of {repeat}, {os.cpu_count()} cores, 1-min load average "
        f"{min(loads):.1f}–{max(loads):.1f} (sampled before and after each round)"
    )
    print(f"{'':32} {'CPU':>8} {'wall':>8} {'steps':>6} {'scoring/gate/side-metric steps':>31}")
    rows = [("first evaluation", [first]), ("unchanged (default)", unchanged)]
    rows += [(f"--force --executor {e}", forced[e]) for e in executors]
    for name, samples in rows:
        steps = samples[-1].steps
        heavy = [s for s in steps if s.startswith(EXPENSIVE)]
        print(
            f"{name:32} {med(samples, 'cpu'):7.2f}s {med(samples, 'wall'):7.2f}s "
            f"{len(steps):6d} {len(heavy):31d}"
        )
    u = med(unchanged, "cpu")
    print(f"ratio first ÷ unchanged (CPU): {first.cpu / u:.1f}× (target ≥ 20×)")
    for executor in executors:
        print(
            f"ratio forced ({executor}) ÷ unchanged (CPU): {med(forced[executor], 'cpu') / u:.1f}×"
        )
    if len(executors) == 2:
        ratio = med(forced["multiprocess"], "wall") / med(forced["in_process"], "wall")
        print(f"ratio multiprocess ÷ in_process (forced, wall): {ratio:.1f}×")
    redone = [s for sample in unchanged for s in sample.steps if s.startswith(EXPENSIVE)]
    if redone:
        sys.exit(f"an unchanged run re-executed {len(redone)} expensive step(s): {redone}")


if __name__ == "__main__":
    main()
