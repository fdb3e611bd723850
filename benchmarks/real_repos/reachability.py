"""Measurement only (no judge uses it): would "evidence must be importable from the run's
application" have kept the gold and dropped papertrail's false METs?

For each papertrail run (its checkout made by `validate.py`), the Python files under the run's
`root:` are parsed (never imported or run); an import graph is built (relative imports resolved
exactly from the importing file's package, absolute ones by dotted name), and a file is
*reachable* when an application root imports it, directly or not — a root being a file that
builds a FastAPI/Flask/Starlette application or has a `__main__` guard. It prints, per run, the
gold MET I-check evidence that is not reachable (must be none for the rule to be safe), and per
I-check of the baseline which files its first probe's pattern matches (line by line, its
`within:` scope ignored) and which of those are reachable.

Run from the repository root, after validate.py made the checkouts:

    .venv/bin/python benchmarks/real_repos/reachability.py
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tarfile
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent / "papertrail"
RUNS = ("gpt51codex", "opus45", "sonnet45", "kimik2")
_ROOT = re.compile(r"\b(FastAPI|Flask|Starlette)\(|if __name__ == ['\"]__main__['\"]")
_SOURCE = (".py", ".js", ".jsx", ".ts", ".tsx")


def _module(path: Path, tree: Path) -> str:
    parts = list(path.relative_to(tree).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def reachable(tree: Path, root: str) -> tuple[list[Path], set[Path]]:
    """The run's production Python files and those an application root reaches by imports."""
    base = tree / root
    files = [
        p
        for p in base.rglob("*.py")
        if "node_modules" not in p.parts and not {"tests", "test"} & set(p.relative_to(base).parts)
    ]
    exact: dict[str, set[Path]] = {}
    for p in files:
        exact.setdefault(_module(p, tree), set()).add(p)
    # An absolute import names a module by its dotted path from some source root: match suffixes.
    suffix: dict[str, set[Path]] = {}
    for name, paths in exact.items():
        segments = name.split(".")
        for i in range(len(segments)):
            suffix.setdefault(".".join(segments[i:]), set()).update(paths)
    edges: dict[Path, set[Path]] = {}
    for p in files:
        try:
            syntax = ast.parse(p.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            edges[p] = set()
            continue
        package = list(p.relative_to(tree).parent.parts)
        found: set[Path] = set()
        for node in ast.walk(syntax):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found |= suffix.get(alias.name, set())
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = package[: len(package) - (node.level - 1)]
                    name = ".".join(anchor + ([node.module] if node.module else []))
                    table = exact
                else:
                    name, table = node.module or "", suffix
                for candidate in (name, *(f"{name}.{a.name}" for a in node.names)):
                    found |= table.get(candidate, set())
        edges[p] = found
    roots = [p for p in files if _ROOT.search(p.read_text(encoding="utf-8", errors="replace"))]
    seen, stack = set(roots), list(roots)
    while stack:
        for nxt in edges.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return files, seen


def _head_tree(checkout: Path, head: str, dest: Path) -> None:
    archive = subprocess.run(
        ["git", "--git-dir", str(checkout / ".git"), "archive", "--format=tar", head],
        capture_output=True,
        check=True,
        timeout=120,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")


def main() -> None:
    baseline = yaml.safe_load((HERE / "_ac-baseline.yaml").read_text(encoding="utf-8"))
    for short in RUNS:
        manifest = yaml.safe_load((HERE / short / "runs" / f"{short}.yaml").read_text())
        gold = yaml.safe_load((HERE / short / "gold" / f"{short}.labels.yaml").read_text())
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp)
            _head_tree(HERE / short / "checkout", manifest["head"], tree)
            files, seen = reachable(tree, manifest["root"])
            lost = [
                f"{v['check_id']} {e['path']}"
                for v in gold["verdicts"]
                if v["status"] == "MET" and v["check_id"].split("-")[-1].startswith("I")
                for e in v["evidence"]
                if e["path"].endswith(".py") and tree / e["path"] not in seen
            ]
            print(
                f"{short}: {len(seen)} of {len(files)} Python files reachable; "
                f"gold MET I-evidence unreachable: {lost or 'none'}"
            )
            sources = [
                p
                for p in (tree / manifest["root"]).rglob("*")
                if p.is_file()
                and p.suffix in _SOURCE
                and "node_modules" not in p.parts
                and "tests" not in p.parts
            ]
            for ac in baseline["acs"]:
                for check in ac["checks"]:
                    if check["kind"] != "I" or not check.get("probes"):
                        continue
                    pattern = check["probes"][0]["pattern"]
                    flags = re.I if pattern.startswith("(?i)") else 0
                    probe = re.compile(pattern.removeprefix("(?i)"), flags)
                    hits = [
                        p
                        for p in sources
                        if any(
                            probe.search(line)
                            for line in p.read_text(encoding="utf-8", errors="replace").splitlines()
                            if not line.lstrip().startswith("#")
                        )
                    ]
                    live = [str(p.relative_to(tree / manifest["root"])) for p in hits if p in seen]
                    print(f"  {check['id']}: {len(hits)} file(s) match, reachable: {live or '-'}")


if __name__ == "__main__":
    main()
