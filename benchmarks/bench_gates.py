"""Benchmark the cost of the gate sandbox against running the same commands in place.

Running a gate in place (``sh -c <command>`` in the evaluated checkout) is the cheapest way
and the one evalflow must never use (SPEC core rule 5); it is the baseline here. Measured
(median of repeats, each on the bundled demo's speckit run, built with the deterministic
builder into a temporary directory):

- `execute` of a no-op (``true``) with no isolation and with this machine's best isolation:
  the per-command price of environment, limits, launcher and namespaces;
- one gate end to end through `run_gates` (clone, tooling probe, run, guard) for the no-op;
- the demo's four real gates (compileall, ruff, pytest unit, pytest e2e) through `run_gates`
  against the same four commands run in place.

Run from the repository root: `.venv/bin/python benchmarks/bench_gates.py [--quick]`
(`--quick`: 3 repeats instead of 7).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from evalflow.domain.gates import GATES
from evalflow.domain.models import GateCommands
from evalflow.gates import GateLimits, probe_isolation, run_gates
from evalflow.gates.sandbox import NO_ISOLATION, Isolation, execute, gate_env, new_sandbox
from evalflow.repo.builder import build_repo

DEMO = Path(__file__).resolve().parents[1] / "data" / "benchmarks" / "trialist"


def _median(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _in_place(repo: Path, command: str) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["sh", "-c", command], cwd=repo, env=env, capture_output=True, check=False)


def _sandboxed(root: Path, repo: Path, isolation: Isolation) -> None:
    sandbox = new_sandbox(root)
    execute(
        "true",
        cwd=sandbox,
        env=gate_env(sandbox),
        log=sandbox / "out.log",
        isolation=isolation,
        read_only_paths=(repo,),
        timeout_s=30,
        limits=GateLimits(),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 7")
    repeats = 3 if parser.parse_args().quick else 7
    isolation = probe_isolation()
    manifest = yaml.safe_load((DEMO / "runs" / "speckit-r1.yaml").read_text())
    commands = GateCommands(**manifest["gates"])
    with tempfile.TemporaryDirectory(prefix="evalflow-bench-gates-") as tmp:
        root = Path(tmp)
        repo = build_repo(DEMO / "sources" / "speckit", root / "speckit")
        sandboxes = root / "sandboxes"
        sandboxes.mkdir()
        noop = GateCommands(unit="true")
        rows = [
            ("no-op in place (baseline)", _median(lambda: _in_place(repo, "true"), repeats)),
            (
                "no-op, execute, no isolation",
                _median(lambda: _sandboxed(sandboxes, repo, NO_ISOLATION), repeats),
            ),
            (
                "no-op, execute, best isolation",
                _median(lambda: _sandboxed(sandboxes, repo, isolation), repeats),
            ),
            (
                "no-op, run_gates, one gate",
                _median(lambda: run_gates(repo, "head", "base", noop, []), repeats),
            ),
        ]
        scratch = root / "in-place"
        build_repo(DEMO / "sources" / "speckit", scratch)
        demo_base = _median(
            lambda: [_in_place(scratch, getattr(commands, g)) for g in GATES], repeats
        )
        demo_gates = _median(lambda: run_gates(repo, "head", "base", commands, []), repeats)
    baseline = rows[0][1]
    print(f"isolation: network={isolation.network} read_only={isolation.read_only}")
    print(f"repeats: {repeats}")
    for label, seconds in rows:
        print(f"{label:34s} {seconds * 1000:8.1f} ms   ×{seconds / baseline:6.1f}")
    print(f"{'demo 4 gates in place (baseline)':34s} {demo_base * 1000:8.1f} ms")
    print(
        f"{'demo 4 gates, run_gates':34s} {demo_gates * 1000:8.1f} ms   "
        f"×{demo_gates / demo_base:6.2f}"
    )


if __name__ == "__main__":
    main()
