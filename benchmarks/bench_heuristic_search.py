"""The heuristic judge's repository search: whole-file RE2 search before line-by-line work,
and definitions parsed only in files that spell the name (issue 33).

A deterministic synthetic repository (Python modules of 60 lines; a few names and probe
words planted in a tenth of the files) is searched with probe-like patterns by the judge's
own index (`_Index._matches`), and a handful of names is looked up by `RepoScopes`
(`definitions_of`). Each side runs in a fresh child process, so CPU seconds and peak RSS
are its own:

- **search**: now (one RE2 search of the whole file, lines only where it matched) against
  the old path (one Python-level RE2 call per line of every candidate file), the same hits;
- **definitions**: now (parse only files whose text holds the name) against the old path
  (parse every code file once any definition is asked for).

Run from the repository root: `.venv/bin/python benchmarks/bench_heuristic_search.py
[--files 2000] [--repeats 3]`; `--smoke` (CI): 200 files, one repeat.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PATTERNS = [
    r"^\s*def\s+export_csv\b",
    r"raise\s+ValueError\(.*title",
    r"(?i)invalid input",
    r"@app\.(get|post)\(['\"]/todos",
    r"status_code\s*==\s*404",
    r"\bsqlite3\.connect\(",
    r"json\.dumps\(.*indent",
    r"^class\s+\w*Repository\b",
    r"timeout\s*=\s*\d+",
    r"logger\.warning\(",
    r"\.sort\(key=",
    r"return\s+None$",
]
NAMES = ["export_csv", "TodoRepository", "parse_due_date", "render_table", "missing_name"]

CHILD = r"""
import json, resource, sys, time
from evalflow.judges import heuristic
from evalflow.repo.scopes import RepoScopes
from evalflow.repo.snapshot import RepoSnapshot, SourceFile
from evalflow.repo.test_inventory import LevelConventions
from evalflow.domain.patterns import compile_untrusted

files_n, mode, what = int(sys.argv[1]), sys.argv[2], sys.argv[3]
patterns, names = json.loads(sys.argv[4]), json.loads(sys.argv[5])

def module(i):
    lines = [f"# module {i}", "import json", "", f"def helper_{i}(x):"]
    lines += [f"    value_{k} = x + {k}  # step {k}" for k in range(50)]
    if i % 10 == 3:
        lines += ["def export_csv(rows):", "    return json.dumps(rows, indent=2)"]
    if i % 10 == 7:
        lines += ["class TodoRepository:", "    def parse_due_date(self, s):",
                  "        raise ValueError(f'invalid input: {s} has no title')"]
    lines += [f"    return value_{i % 50}", ""]
    return "\n".join(lines)

files = {f"pkg/mod_{i}.py": SourceFile(f"pkg/mod_{i}.py", module(i)) for i in range(files_n)}
snapshot = RepoSnapshot("0" * 40, files)
if mode == "old":
    heuristic._whole_text = lambda pattern: None  # the per-line path of every file

start = time.process_time()
found = 0
if what == "search":
    index = heuristic._Index(snapshot, (), LevelConventions())
    for p in patterns:
        regex = compile_untrusted(p)
        found += sum(len(index._matches(regex, path)) for path in sorted(files))
else:
    scopes = RepoScopes({p: f.text for p, f in files.items()})
    if mode == "old":  # every code file parsed on the first question, as before
        everything = [d for p in scopes._code_paths for d in scopes._file_definitions(p)]
        found = sum(1 for d in everything if d.name in names)
    else:
        found = sum(len(scopes.definitions_of(n)) for n in names)
cpu = time.process_time() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"cpu": cpu, "rss_mb": rss, "found": found}))
"""


_ARGS = (json.dumps(PATTERNS), json.dumps(NAMES))


def _child(files: int, mode: str, what: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(files), mode, what, *_ARGS],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=1800,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="200 files, one repeat (CI)")
    args = parser.parse_args()
    files, repeats = (200, 1) if args.smoke else (args.files, args.repeats)
    print(f"{files} files, {files * 56:,} lines; median of {repeats}, CPU of each child")
    status = 0
    for what in ("search", "definitions"):
        runs = {m: [_child(files, m, what) for _ in range(repeats)] for m in ("old", "new")}
        found = {m: {r["found"] for r in rs} for m, rs in runs.items()}
        if found["old"] != found["new"] or len(found["new"]) != 1:
            print(f"{what}: results differ: {found}")
            status = 1
        cpu = {m: statistics.median(r["cpu"] for r in rs) for m, rs in runs.items()}
        rss = {m: statistics.median(r["rss_mb"] for r in rs) for m, rs in runs.items()}
        print(
            f"{what:11s} now {cpu['new']:.3f} s CPU, {rss['new']:.0f} MB peak | old path "
            f"{cpu['old']:.3f} s CPU, {rss['old']:.0f} MB | {cpu['old'] / cpu['new']:.1f}× "
            f"less CPU, {rss['old'] - rss['new']:+.0f} MB | same results: "
            f"{found['new'] == found['old']}"
        )
    return status


if __name__ == "__main__":
    raise SystemExit(main())
