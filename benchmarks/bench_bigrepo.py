"""Benchmark big repositories: `score` on a ≥ 300k-line public repository and the cost growth of
the repository work with repository size and with diff size.

Two parts, each measured in a child process of its own (wall seconds; CPU seconds of the child
and its git children; peak RSS of the largest process of the tree, from `os.wait4`):

1. **Synthetic (always runs).** Deterministic repositories made with `git fast-import`
   (Python modules of 60 lines, a tenth of them pytest files; three commits): one series
   growing the repository with a fixed 2-file diff, one growing the diff in a fixed
   repository. Timed is the repository work of one run — `prepare_run` (commits, tree check,
   diff surface), `open_snapshot`, the unified diff and its parse, the feature test
   inventory — with the host mirror already fetched (the steady state). Printed: medians per
   size and the cost growth exponent, the slope of log CPU against log lines (repository)
   and log changed lines (diff), fitted over every size. The old path in the same run: the
   largest repository with `EVALFLOW_MIRROR_DIR=off` (a mirror per process, fetched by every
   process, what evalflow did before) against the warm host mirror.
2. **A real repository (only when its mirror exists).** `python/mypy` from
   `$EVALFLOW_REAL_REPOS_MIRRORS/python+mypy/repo` (no GitHub access needed), cloned
   without a work tree (hard links), scored with `evalflow score --judge heuristic` into a
   fresh warehouse with `gates: {}` (no toolchain runs, so git and evalflow's own work are
   what is measured; the baseline's `run` probes still run), against the Trialist demo
   baseline: the last commit (small diff) and the whole history (base = the root commit).
   The small diff is scored three ways: the old path (`EVALFLOW_MIRROR_DIR=off`), a cold
   host mirror (first fetch), a warm one (a fresh warehouse of a host that mirrored it
   before); then an unchanged rerun into the same warehouse (the fingerprint check only).
   Without the mirror this part prints one line and is skipped (CI has no GitHub access).

Run from the repository root:
`.venv/bin/python benchmarks/bench_bigrepo.py [--smoke] [--repeat N] [--no-real]`
(`--smoke`: tiny synthetic sizes, seconds, no real repository; exit 0).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "benchmarks" / "trialist"
REAL = "python+mypy"
LINES_PER_FILE = 60
EPOCH = 1_767_225_600
TARGET_WALL_S, TARGET_RSS_MB = 60.0, 500.0


@dataclass(frozen=True)
class Cost:
    wall: float
    cpu: float
    rss_mb: float


def _child_cost(argv: list[str], env: dict[str, str]) -> tuple[Cost, str]:
    """Run `argv`; its wall, CPU (it and its waited-for children) and peak RSS (the largest
    process of its tree: Linux's wait4 reports the maximum over the tree)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(argv[-6:])}\n{text[-3000:]}")
    return Cost(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024), text


def _module(path: int, lines: int) -> str:
    body = [f'"""Module {path}."""', "", "import math", ""]
    while len(body) < lines - 3:
        n = len(body)
        body += [f"def f_{n}(x):", f"    return math.sqrt(x * {n} + {path})", ""]
    return "\n".join(body[: lines - 1]) + "\n"


def _test(path: int, lines: int) -> str:
    body = ["import pytest", ""]
    while len(body) < lines - 3:
        n = len(body)
        body += [f"def test_{n}():", f"    assert {n} + {path} == {n + path}", ""]
    return "\n".join(body[: lines - 1]) + "\n"


def _name(i: int) -> str:
    return f"tests/test_m{i}.py" if i % 10 == 0 else f"pkg/d{i % 50}/m{i}.py"


def make_repo(dest: Path, files: int, changed: int) -> tuple[str, str, int]:
    """A repository of `files` files in three commits, the last changing `changed` of them
    (10 lines appended to each); returns (base, head, lines added by head)."""
    blobs = {i: (_test if i % 10 == 0 else _module)(i, LINES_PER_FILE) for i in range(files)}
    stream: list[bytes] = []

    def data(text: str) -> None:
        raw = text.encode()
        stream.append(b"data %d\n" % len(raw) + raw + b"\n")

    def commit(n: int, message: str, entries: dict[int, str]) -> None:
        stream.append(f"commit refs/heads/main\nmark :{n}\n".encode())
        stream.append(f"committer bench <bench@evalflow.invalid> {EPOCH + n} +0000\n".encode())
        data(message)
        for i, text in sorted(entries.items()):
            stream.append(f"M 100644 inline {_name(i)}\n".encode())
            data(text)

    commit(1, "import", blobs)
    commit(2, "touch one", {1: blobs[1] + "# touched\n"})
    extra = "".join(f"def added_{k}(x):\n    return x + {k}\n\n" for k in range(3)) + "# end\n"
    step = max(1, files // max(changed, 1))
    commit(3, "the change", {i: blobs[i] + extra for i in range(0, files, step)[:changed]})
    dest.mkdir(parents=True)
    git = ["git", "-c", "init.defaultBranch=main", "-C", str(dest)]
    subprocess.run([*git, "init", "-q"], check=True, timeout=60)
    subprocess.run(
        [*git, "fast-import", "--quiet"], input=b"".join(stream), check=True, timeout=600
    )
    revs = subprocess.run(
        [*git, "rev-parse", "main~1", "main"], capture_output=True, check=True, timeout=60
    )
    base, head = revs.stdout.decode().split()
    return base, head, changed * extra.count("\n")


def benchmark_dir(work: Path) -> Path:
    """The Trialist demo's PRD and frozen baseline, without its runs and sources."""
    bench = work / "bench"
    bench.mkdir()
    for name in ("prd.md", "_ac-baseline.yaml", "_ac-baseline.lock", "_ac-baseline.md"):
        shutil.copy(DEMO / name, bench / name)
    shutil.copytree(DEMO / "elicitation", bench / "elicitation")
    (bench / "runs").mkdir()
    return bench


def manifest(bench: Path, run: str, repo: Path, base: str, head: str) -> Path:
    path = bench / "runs" / f"{run}.yaml"
    path.write_text(
        json.dumps(
            {
                "benchmark": "trialist",
                "framework": "bmad",
                "run": run,
                "repo": str(repo),
                "base": base,
                "head": head,
                "baseline": "../_ac-baseline.yaml",
                "gates": {},
            }
        )
    )
    return path


_REPO_WORK = """
import json, resource, sys, time
from pathlib import Path
from evalflow.io.evaluation import open_snapshot, prepare_run
from evalflow.io.side_metrics import conventions_for, feature_inventory
from evalflow.repo.diff_lines import parse_unified_diff
from evalflow.repo.diff_surface import unified_diff
from evalflow.repo.git import throwaway_workspace

def cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

manifest, work, repeat = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
samples = []
for n in range(repeat + 1):  # the first fetches into the host mirror: not timed
    with throwaway_workspace():  # what a new process starts from, and another warehouse
        start, start_cpu = time.perf_counter(), cpu()
        prepared = prepare_run(manifest, work / f"wh{n}")
        snapshot = open_snapshot(prepared)
        text = unified_diff(prepared.repo, prepared.base_sha, prepared.head_sha)
        levels = conventions_for(prepared.benchmark.baseline.test_levels)
        cases = feature_inventory(snapshot, parse_unified_diff(text), levels)
        samples.append((time.perf_counter() - start, cpu() - start_cpu))
print(json.dumps({"samples": samples[1:] if repeat else samples, "files": len(snapshot.files),
                  "surface": len(prepared.diff), "cases": len(cases)}))
"""


def repo_work(path: Path, work: Path, env: dict[str, str], repeat: int) -> tuple[Cost, dict]:
    """Median wall and CPU of the repository work (imports excluded), peak RSS of the child."""
    work.mkdir()
    cost, out = _child_cost(
        [sys.executable, "-c", _REPO_WORK, str(path), str(work), str(repeat)], env
    )
    info = json.loads(out.strip().splitlines()[-1])
    walls, cpus = zip(*info["samples"], strict=True)
    return Cost(statistics.median(walls), statistics.median(cpus), cost.rss_mb), info


def score(path: Path, warehouse: Path, env: dict[str, str]) -> Cost:
    argv = [sys.executable, "-c", "from evalflow.cli import main; main()", "score", str(path)]
    return _child_cost([*argv, "--warehouse", str(warehouse), "--judge", "heuristic"], env)[0]


def exponent(sizes: list[float], costs: list[float]) -> float:
    slope, _ = np.polyfit(np.log(sizes), np.log(costs), 1)
    return float(slope)


def _median(samples: list[Cost]) -> Cost:
    return Cost(
        *(statistics.median(getattr(s, f) for s in samples) for f in ("wall", "cpu", "rss_mb"))
    )


def _row(label: str, cost: Cost, extra: str = "") -> None:
    print(
        f"  {label:<44} {cost.wall:8.2f} s wall {cost.cpu:8.2f} s CPU {cost.rss_mb:7.0f} MB {extra}"
    )


def synthetic(work: Path, bench: Path, env: dict[str, str], smoke: bool, repeat: int) -> None:
    repo_files = [20, 40, 80] if smoke else [500, 1000, 2000, 4000]
    diff_files = [2, 5, 10] if smoke else [10, 100, 1000]
    fixed_repo = 40 if smoke else 2000
    series = [("repository", n, 2) for n in repo_files] + [
        ("diff", fixed_repo, c) for c in diff_files
    ]
    print(f"Synthetic repositories ({LINES_PER_FILE} lines per file), repository work of one run "
          f"(imports excluded), warm host mirror, median of {repeat}:")  # fmt: skip
    results: dict[str, list[tuple[int, Cost]]] = {"repository": [], "diff": []}
    largest: tuple[Path, Cost] | None = None
    for kind, files, changed in series:
        name = f"syn-{kind}-{files}-{changed}"
        base, head, added = make_repo(work / name, files, changed)
        path = manifest(bench, name, work / name, base, head)
        cost, info = repo_work(path, work / f"wh-{name}", env, repeat)
        size = files * LINES_PER_FILE if kind == "repository" else added
        results[kind].append((size, cost))
        _row(f"{kind}: {files} files, {changed} changed ({size} lines)", cost,
             f"[{info['surface']} in diff, {info['cases']} test cases]")  # fmt: skip
        if kind == "repository" and files == repo_files[-1]:
            largest = (path, cost)
    for kind, label in (("repository", "repository lines"), ("diff", "changed lines")):
        sizes = [s for s, _ in results[kind]]
        for metric in ("cpu", "wall"):
            k = exponent(sizes, [getattr(c, metric) for _, c in results[kind]])
            print(f"  cost growth exponent, {metric} vs {label}: {k:.2f}")
    assert largest is not None
    path, new = largest
    # With `off` every workspace (a new process) makes and fetches its own mirror.
    old, _ = repo_work(path, work / "wh-off", {**env, "EVALFLOW_MIRROR_DIR": "off"}, repeat)
    _row("old path: EVALFLOW_MIRROR_DIR=off, largest", old)
    print(f"  ratio old / new (largest repository): {old.wall / new.wall:.2f}× wall, "
          f"{old.cpu / new.cpu:.2f}× CPU")  # fmt: skip


def real(work: Path, bench: Path, env: dict[str, str]) -> None:
    mirrors = os.environ.get("EVALFLOW_REAL_REPOS_MIRRORS", "")
    source = Path(mirrors) / REAL / "repo"
    if not mirrors or not source.is_dir():
        print(f"real repository: skipped, no mirror at $EVALFLOW_REAL_REPOS_MIRRORS/{REAL}/repo")
        return
    repo = work / "mypy"
    repo.mkdir()
    subprocess.run(["git", "clone", "-q", "--bare", str(source), str(repo / ".git")],
                   check=True, timeout=600)  # fmt: skip
    git = ["git", f"--git-dir={repo / '.git'}"]
    subprocess.run([*git, "config", "core.bare", "false"], check=True, timeout=60)

    def out(*args: str) -> str:
        return subprocess.run(
            [*git, *args], capture_output=True, check=True, timeout=600
        ).stdout.decode()

    head = out("rev-parse", "HEAD").strip()
    parent = out("rev-parse", "HEAD~1").strip()
    root = out("rev-list", "--max-parents=0", "--reverse", "HEAD").split()[0]
    blobs = [
        line.split()[2] for line in out("ls-tree", "-r", head).splitlines() if " blob " in line
    ]
    batch = subprocess.run(
        [*git, "cat-file", "--batch"], input="\n".join(blobs).encode(), capture_output=True,
        check=True, timeout=600,
    )  # fmt: skip
    lines = batch.stdout.count(b"\n")
    commits = int(out("rev-list", "--count", "HEAD"))
    print(f"Real repository python/mypy at {head[:12]}: {len(blobs)} files, ~{lines - len(blobs)} "
          f"lines, {commits} commits; evalflow score --judge heuristic, gates: {{}}:")  # fmt: skip
    small = manifest(bench, "mypy-small", repo, parent, head)
    whole = manifest(bench, "mypy-whole", repo, root, head)
    off = {**env, "EVALFLOW_MIRROR_DIR": "off"}
    _row("small diff, old path (EVALFLOW_MIRROR_DIR=off)", score(small, work / "wh-r0", off))
    _row("small diff, cold host mirror (first fetch)", score(small, work / "wh-r1", env))
    warm = score(small, work / "wh-r2", env)
    verdict = "met" if warm.wall < TARGET_WALL_S and warm.rss_mb < TARGET_RSS_MB else "NOT met"
    _row("small diff, warm host mirror", warm, f"(targets < 60 s, < 500 MB: {verdict})")
    _row("small diff, unchanged rerun", score(small, work / "wh-r2", env))
    _row("whole history (base = root commit), warm", score(whole, work / "wh-r3", env))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, no real repository")
    parser.add_argument("--repeat", type=int, default=None, help="samples per size (median)")
    parser.add_argument("--no-real", action="store_true", help="skip the real repository")
    args = parser.parse_args()
    repeat = args.repeat or (1 if args.smoke else 3)
    with tempfile.TemporaryDirectory(prefix="bench-bigrepo-") as tmp:
        work = Path(tmp)
        env = {
            **os.environ,
            "EVALFLOW_MIRROR_DIR": str(work / "mirrors"),
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        }
        for name in ("EVALFLOW_WAREHOUSE", "DAGSTER_HOME"):
            env.pop(name, None)
        bench = benchmark_dir(work)
        synthetic(work, bench, env, args.smoke, repeat)
        if args.smoke or args.no_real:
            print("real repository: skipped (--smoke/--no-real)")
        else:
            real(work, bench, env)


if __name__ == "__main__":
    main()
