"""Guesses for a run manifest from the repository's files and history (pure functions).

`guess_base`: the commit before the implementation — the last commit, after the spec folder
first appeared, that touched only the spec folder and framework files (`.specify/`, `.kiro/`,
`.claude/`, `.github/`, `docs/`, Markdown); when the spec arrived together with code, that
commit's parent. `guess_gates`: setup/build/lint/unit/e2e commands read from project files,
each with the reason it was guessed (written as a comment into the manifest).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evalflow.domain.gates import auto_setup, project_manifests

_FRAMEWORK = re.compile(
    r"^(?:\.specify|\.kiro|\.claude|\.github|\.cursor|\.bmad[^/]*|bmad[^/]*|openspec|docs)/"
    r"|\.md$|^(?:LICENSE|\.gitignore)$"
)


@dataclass(frozen=True)
class Commit:
    sha: str
    parent: str | None
    paths: tuple[str, ...]


def guess_base(commits: Sequence[Commit], spec_dir: str) -> tuple[str | None, str]:
    """(base sha, why) from commits oldest first; None when the spec folder never appears."""
    prefix = spec_dir.rstrip("/") + "/"
    first = next(
        (i for i, c in enumerate(commits) if any(p.startswith(prefix) for p in c.paths)), None
    )
    if first is None:
        return None, f"no commit touches {spec_dir}"

    def spec_only(c: Commit) -> bool:
        return all(p.startswith(prefix) or _FRAMEWORK.search(p) for p in c.paths)

    if not spec_only(commits[first]):
        parent = commits[first].parent
        why = f"the spec arrived with code in {commits[first].sha[:12]}: its parent"
        return parent, why
    last = first
    for i in range(first + 1, len(commits)):
        if not commits[i].paths:
            continue  # a merge commit lists no paths of its own
        if not spec_only(commits[i]):
            break
        last = i
    return commits[last].sha, (
        f"the last commit touching only the spec/framework files before the first code change "
        f"(spec first committed in {commits[first].sha[:12]})"
    )


def guess_gates(files: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """{key: (command, why)} for setup, build, lint, unit and e2e; a key with no guess is absent."""
    out: dict[str, tuple[str, str]] = {}
    top = sorted(p for p in files if "/" not in p)
    if auto_setup(top):
        # The gate runner's own install (a .venv / node_modules inside the sandboxed clone):
        # a bare `pip install` would write outside the sandbox and fail there.
        found = " + ".join(project_manifests(top))
        out["setup"] = ("auto", f"{found}: evalflow's standard install inside the clone")
    elif "package.json" in files:
        out["setup"] = ("npm install", "package.json without a lockfile")
    if "package.json" in files:
        try:
            scripts = json.loads(files["package.json"]).get("scripts", {}) or {}
        except (ValueError, AttributeError):
            scripts = {}
        for key, names in (
            ("build", ("build",)),
            ("lint", ("lint",)),
            ("unit", ("test:unit", "test")),
            ("e2e", ("test:e2e", "e2e")),
        ):
            name = next((n for n in names if n in scripts), None)
            if name:
                out[key] = (f"npm run {name}", f"package.json scripts.{name}")
    python = [p for p in ("pyproject.toml", "requirements.txt", "setup.py") if p in files]
    if python:
        packages = sorted({p.split("/", 1)[0] for p in files if p.endswith(".py") and "/" in p
                           and not p.startswith(("tests/", "test/", "."))})  # fmt: skip
        if packages:
            out.setdefault("build", (f"python -m compileall -q {' '.join(packages)}",
                                     "Python sources: compileall is the build"))  # fmt: skip
        pyproject = files.get("pyproject.toml", "")
        if "[tool.ruff" in pyproject or "ruff.toml" in files:
            out.setdefault("lint", ("python -m ruff check .", "ruff is configured"))
        tests = sorted(
            {p.split("/")[1] for p in files if p.startswith("tests/") and p.count("/") >= 2}
        )
        if any(p.startswith("tests/") and p.rsplit("/", 1)[-1].startswith("test_") for p in files):
            e2e = [d for d in tests if d in ("e2e", "integration", "contract")]
            unit = [d for d in tests if d == "unit"]
            if unit:
                out.setdefault(
                    "unit", ("python -m pytest -q tests/unit", "tests/unit/ holds pytest files")
                )
            elif not e2e:
                out.setdefault("unit", ("python -m pytest -q tests", "tests/ holds pytest files"))
            if e2e:
                paths = " ".join(f"tests/{d}" for d in e2e)
                out.setdefault(
                    "e2e", (f"python -m pytest -q {paths}", f"{paths} hold pytest files")
                )
    return out
