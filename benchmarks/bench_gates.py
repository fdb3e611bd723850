"""Benchmark the gate-result cache: a first evaluation against an unchanged re-evaluation.

The TypeScript fixture of the gate tests (`evalflow_tests/gates/fixtures/ts_project`:
package-lock.json, tsc, eslint, vitest) is built into a git repository (base = a template
commit, head = the project) and its gates run through `run_gates` exactly as the `gates`
asset runs them: `setup: auto` (``npm ci``) and the four gates, with the warehouse caches
(`GateCaches`) in a fresh temporary work dir. Then the same run is evaluated again, unchanged.

Printed: both wall times, their ratio (target ≥ 20×) and the number of commands the sandbox
executed during the second evaluation (target 0). By default the npm download cache is kept
between benchmark runs (``~/.cache/evalflow-tests/gate-deps``; the fixture repository is
rebuilt at one fixed path beside it, since the download cache is per repository), so "first"
measures install and gates, not the registry; ``--cold`` uses an empty download cache and a
temporary repository (needs the registry).

Run from the repository root: `.venv/bin/python benchmarks/bench_gates.py [--cold]`.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

from evalflow.domain.gates import GateResult
from evalflow.domain.models import GateCommands, GateSettings
from evalflow.gates import GateCaches, run_gates
from evalflow.gates import runner as runner_module
from evalflow.repo.builder import build_repo

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "evalflow_tests" / "gates" / "fixtures" / "ts_project"
WARM_DEPS = Path.home() / ".cache" / "evalflow-tests" / "gate-deps"
COMMANDS = GateCommands(
    build="npm run build", lint="npm run lint", unit="npm run test:unit", e2e="npm run test:e2e"
)


def _fixture_repo(work: Path) -> Path:
    source = work / "source"
    (source / "base").mkdir(parents=True)
    (source / "base" / "README.md").write_text("# template\n")
    head = source / "head"
    for path in sorted(FIXTURE.rglob("*")):
        if path.is_file():
            target = head / path.relative_to(FIXTURE)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    commits = [
        {"tree": "base", "message": "template", "tag": "base"},
        {"tree": "head", "message": "project", "tag": "head"},
    ]
    (source / "build.yaml").write_text(yaml.safe_dump({"commits": commits}))
    return build_repo(source, work / "repo")


def _evaluate(repo: Path, caches: GateCaches) -> tuple[float, list[GateResult], int]:
    executed: list[str] = []
    real = runner_module.execute

    def counting(command: str, **kwargs: object):
        executed.append(command)
        return real(command, **kwargs)

    runner_module.execute = counting  # type: ignore[assignment]
    try:
        start = time.perf_counter()
        results = run_gates(
            repo,
            "head",
            "base",
            COMMANDS,
            ["src/cart.ts"],
            settings=GateSettings(setup="auto"),
            caches=caches,
        )
        return time.perf_counter() - start, results, len(executed)
    finally:
        runner_module.execute = real  # type: ignore[assignment]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true", help="empty npm download cache")
    # One fixture and one pass each already: the smoke run (CI) is the full measurement.
    parser.add_argument("--smoke", action="store_true", help="same as the default (CI)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="evalflow-bench-gates-") as tmp:
        work = Path(tmp)
        home = work if args.cold else WARM_DEPS.parent / "bench-gates"
        if not args.cold:
            shutil.rmtree(home, ignore_errors=True)
        repo = _fixture_repo(home)
        deps = work / "gate-deps" if args.cold else WARM_DEPS
        caches = GateCaches(results=work / "gate-results", dependencies=deps)
        first_s, first, first_n = _evaluate(repo, caches)
        second_s, second, second_n = _evaluate(repo, caches)
    statuses = ", ".join(f"{r.gate} {r.status}" for r in first)
    print(f"TypeScript fixture: setup + 4 gates ({statuses})")
    print(f"first evaluation:  {first_s:8.2f} s  ({first_n} commands executed)")
    print(
        f"second evaluation: {second_s:8.3f} s  ({second_n} commands executed, "
        f"{sum(r.cached for r in second)}/{len(second)} results cached)"
    )
    ratio = first_s / second_s if second_s > 0 else float("inf")
    print(f"speed-up: {ratio:,.0f}× (target ≥ 20×); commands on the second: {second_n} (target 0)")
    ok = all(r.status == "pass" for r in first) and second_n == 0 and ratio >= 20
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
