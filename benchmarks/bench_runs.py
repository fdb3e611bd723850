"""CPU seconds per framework run when `materialize` evaluates N runs: this tree against a
baseline revision, in the same benchmark run.

For each N (default 1, 12 and 50) a fresh interpreter (as `evalflow materialize` starts)
builds N copies of the mini benchmark's `good` run (`evalflow_tests/mini_benchmark.py`, the
offline heuristic judge: a demo-like run whose judging is a small part of its cost),
registers them, and materialises them sequentially (one worker) — the first evaluation, then
the unchanged re-evaluation. CPU is the child's own and its children's (git), so the
machine's load does not distort it; wall time, which it does, is printed in parentheses.
The baseline is the same child run from `git archive` of `--baseline` (default: main before
the issue 28/33 work on per-run overhead), so old and new are measured side by side; the
ratio old ÷ new is printed per N. Targets (issue 28): ≤ 2 s CPU
per run for a first evaluation, an unchanged re-evaluation ≥ 20× cheaper.

Run from the repository root:
`.venv/bin/python benchmarks/bench_runs.py [--runs 1,12,50] [--baseline REV | --no-baseline]`;
`--smoke` (CI): one run, this tree only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# main before the issue 28/33 work on per-run overhead (2026-12-02).
BASELINE = "af28c6d"

CHILD = r"""
import json, os, resource, sys, tempfile, time
from pathlib import Path

from evalflow.pipeline import orchestrate
from evalflow_tests.mini_benchmark import make_mini


def cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


n = int(sys.argv[1])
os.environ.pop("DAGSTER_HOME", None)
with tempfile.TemporaryDirectory() as tmp:
    bench = make_mini(Path(tmp))
    # No suite files: both trees rank the same tables, whatever their data/ folders hold.
    os.environ["EVALFLOW_BENCHMARKS"] = str(bench.parent)
    runs = bench / "runs"
    template = (runs / "good.yaml").read_text()
    for name in ("good", "partial"):
        (runs / f"{name}.yaml").unlink()
    for i in range(n):
        (runs / f"fw{i:03d}.yaml").write_text(
            template.replace("framework: good", f"framework: fw{i:03d}")
        )
    root = str(Path(tmp) / "wh")
    keys = orchestrate.register(root, sorted(runs.glob("*.yaml")))
    figures = {}
    for name in ("first", "unchanged"):
        start, since = cpu(), time.perf_counter()
        outcomes = orchestrate.materialize(root, keys, workers=1)
        figures[name] = cpu() - start
        figures[f"{name}_wall"] = time.perf_counter() - since
        assert all(o.success for o in outcomes), outcomes
    print(json.dumps(figures))
"""


def measure(tree: Path, n: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(n)],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"{tree}: {n} run(s) failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def baseline_tree(rev: str, into: Path) -> Path | None:
    """The baseline revision's `evalflow` and test helpers, or None without its history."""
    archive = into / "baseline.tar"
    made = subprocess.run(
        [
            "git",
            "-C",
            str(ROOT),
            "archive",
            "-o",
            str(archive),
            rev,
            "evalflow",
            "evalflow_tests",
            "docs",
            "schemas",
        ],
        capture_output=True,
        check=False,
    )
    if made.returncode != 0:
        return None
    tree = into / "baseline"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    return tree


def per_run(figures: dict[str, float], n: int) -> str:
    """First / unchanged, CPU (wall) seconds per run."""
    return " / ".join(
        f"{figures[name] / n:6.2f} ({figures[f'{name}_wall'] / n:6.2f})"
        for name in ("first", "unchanged")
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="1,12,50", help="comma-separated N (default 1,12,50)")
    parser.add_argument("--baseline", default=BASELINE, help=f"git revision (default {BASELINE})")
    parser.add_argument("--no-baseline", action="store_true", help="this tree only")
    parser.add_argument("--smoke", action="store_true", help="one run, this tree only (CI)")
    args = parser.parse_args()
    counts = [1] if args.smoke else [int(n) for n in args.runs.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = None
        if not (args.smoke or args.no_baseline):
            old_tree = baseline_tree(args.baseline, Path(tmp))
            if old_tree is None:
                print(f"baseline {args.baseline} not in this clone's history: this tree only")
        print(
            "s per run, first evaluation / unchanged re-evaluation, CPU (wall), "
            f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
        )
        for n in counts:
            new = measure(ROOT, n)
            line = (
                f"N = {n:3d}  new: {per_run(new, n)}"
                f"  (first ÷ unchanged {new['first'] / new['unchanged']:5.1f}×)"
            )
            if old_tree is not None:
                old = measure(old_tree, n)
                line += (
                    f"  old: {per_run(old, n)}"
                    f"  CPU ratio old ÷ new {old['first'] / new['first']:4.2f}× / "
                    f"{old['unchanged'] / new['unchanged']:4.2f}×"
                )
            print(f"{line}  load {os.getloadavg()[0]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
