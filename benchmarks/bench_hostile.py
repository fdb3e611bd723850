"""Benchmark a hostile repository against the resource bounds: time to a clean answer.

Issue 30: a repository of 200,000 small files ran `evalflow score` past 10 minutes with no
answer. This builds one (a base commit, then a head commit adding N one-line Python files, made
with `git fast-import`), points a run manifest of the mini benchmark at it and runs
`evalflow score` in a child process with `TMPDIR` set to an empty directory. It checks the
answer is the clean one — exit 2, one `error:` line naming `EVALFLOW_MAX_FILES`, nothing left
in `$TMPDIR` or in the warehouse's `tmp/` — and prints wall seconds and the CPU seconds of
evalflow and its git children. Default bounds at full size (200,000 files); `--smoke` builds
3,000 files and lowers the bound to 1,000. Run from the repository root:
`.venv/bin/python benchmarks/bench_hostile.py [--smoke]`.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalflow_tests.mini_benchmark import make_mini  # noqa: E402

GIT_S = 600
SCORE_S = 1_800


def _git(repo: Path, *args: str, data: bytes | None = None) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "gc.auto=0", *args],
        input=data, check=True, capture_output=True, timeout=GIT_S,
    )  # fmt: skip


def hostile_repo(repo: Path, n_files: int) -> None:
    """Tags base (empty) and head (n one-line files in 200 folders), in one fast-import (the
    second commit of a branch follows the first)."""
    _git(repo.parent, "init", "-q", "-b", "main", repo.name)
    stream = [b"commit refs/heads/main\ncommitter x <x@x> 1700000000 +0000\ndata 4\nbase\n"]
    stream.append(b"commit refs/heads/main\ncommitter x <x@x> 1700000001 +0000\ndata 4\nhead\n")
    for i in range(n_files):
        data = f"x = {i}\n".encode()
        stream.append(b"M 100644 inline d%d/f%d.py\ndata %d\n%s\n" % (i % 200, i, len(data), data))
    _git(repo, "fast-import", "--quiet", data=b"".join(stream))
    _git(repo, "tag", "base", "main~1")
    _git(repo, "tag", "head", "main")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="3,000 files, bound lowered")
    args = parser.parse_args()
    n_files = 3_000 if args.smoke else 200_000
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALFLOW_")}
    if args.smoke:
        env["EVALFLOW_MAX_FILES"] = "1000"
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        hostile_repo(work / "repo", n_files)
        built = time.perf_counter() - started
        bench = make_mini(work)
        manifest = bench / "runs" / "hostile.yaml"
        manifest.write_text(
            yaml.safe_dump(
                {"benchmark": "mini", "framework": "hostile", "run": "r1", "repo": "../../../repo"}
                | {"base": "base", "head": "head"}
            )
        )
        (work / "temp").mkdir()
        env |= {"TMPDIR": str(work / "temp"), "PYTHONPATH": str(ROOT)}
        env.pop("DAGSTER_HOME", None)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", "from evalflow.cli import main; main()", "score", str(manifest),
             "--warehouse", str(work / "wh")],
            env=env, capture_output=True, text=True, timeout=SCORE_S, check=False,
        )  # fmt: skip
        wall = time.perf_counter() - started
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        left = [*(work / "temp").iterdir(), *(work / "wh" / "tmp").glob("*")]
    print(f"hostile repository: {n_files} files (built in {built:.1f} s)")
    print(f"   evalflow score: exit {done.returncode} after {wall:.1f} s wall")
    print(f"   CPU (evalflow and its git children): {cpu:.1f} s")
    print(f"   answer: {errors[0] if errors else done.stderr.strip()[-300:]}")
    clean = done.returncode == 2 and len(errors) == 1 and "EVALFLOW_MAX_FILES" in errors[0]
    if not clean or left:
        print(f"NOT a clean answer (left behind: {left})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
