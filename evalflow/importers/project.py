"""Guesses for a run manifest from the repository's files and history (pure functions).

`guess_base`: the commit before the implementation — the last commit, after the spec folder
first appeared, that touched only the spec folder and framework files (`.specify/`, `.kiro/`,
`.claude/`, `.github/`, `docs/`, Markdown); when the spec arrived together with code, that
commit's parent. `guess_root`: the run's own folder when the repository holds one spec folder
per framework side by side (a bake-off layout). `guess_gates`: setup/build/lint/unit/e2e
commands read from project files,
each with the reason it was guessed (written as a comment into the manifest): the project's own
declarations (package.json scripts, pytest testpaths, tox.ini, Makefile) before the layout.
"""

from __future__ import annotations

import configparser
import json
import re
import tomllib
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


# Where a framework keeps its spec: the folder holding it is that run's home. Lazy, so the
# shallowest match names the home (`bmad/.kiro/specs/` is kiro's home `bmad`, not `.kiro`).
_SPEC_HOME = re.compile(
    r"^(?:(.+?)/)?(?:\.specify|\.kiro|_bmad-output|openspec|specs)/|^(?:(.+?)/)?docs/prd\.md$"
)


def guess_root(paths: Sequence[str], spec_dir: str) -> tuple[str, str] | None:
    """(root, why) when the spec folder lies in a subfolder that holds its own framework's
    spec beside another folder holding another spec (`speckit/specs/…` next to
    `bmad/_bmad-output/…`): the run is confined to that subfolder. None otherwise."""
    homes: set[str] = set()
    for path in paths:
        if "node_modules/" in path:
            continue
        if match := _SPEC_HOME.match(path):
            homes.add(match.group(1) or match.group(2) or "")
    spec = spec_dir.strip("/")
    mine = [h for h in homes if h and (spec == h or spec.startswith(f"{h}/"))]
    if not mine:
        return None
    home = max(mine, key=len)
    others = sorted(
        h
        for h in homes
        if h and h != home and not home.startswith(f"{h}/") and not h.startswith(f"{home}/")
    )
    if not others:
        return None
    beside = ", ".join(f"{o}/" for o in others)
    return home, f"one spec folder per framework: {home}/ holds this run's spec, {beside} another"


def in_root(files: Mapping[str, str], root: str | None) -> dict[str, str]:
    """The files of the run's folder, relative to it (what its gates see as their top)."""
    if root is None:
        return dict(files)
    prefix = f"{root}/"
    return {p[len(prefix) :]: t for p, t in files.items() if p.startswith(prefix)}


_NODE_SOURCES = (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".vue", ".svelte")
_PY_MANIFESTS = ("pyproject.toml", "setup.py", "setup.cfg", "uv.lock")
_NODE_MANIFESTS = ("package.json", "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml",
                   "yarn.lock")  # fmt: skip
_MAKE_TARGET = re.compile(r"^([A-Za-z][\w-]*)\s*:(?!=)", re.MULTILINE)


def _pytest_testpaths(files: Mapping[str, str]) -> tuple[str, str] | None:
    """(testpaths, where) when the project declares where its tests are for pytest."""
    pyproject = files.get("pyproject.toml", "")
    if pyproject:
        try:
            table = tomllib.loads(pyproject).get("tool", {}).get("pytest", {})
        except tomllib.TOMLDecodeError:
            table = {}
        paths = table.get("ini_options", {}).get("testpaths")
        if paths:
            paths = [paths] if isinstance(paths, str) else paths
            return " ".join(map(str, paths)), "pyproject.toml [tool.pytest.ini_options] testpaths"
    for name, section in (("pytest.ini", "pytest"), ("tox.ini", "pytest"),
                          ("setup.cfg", "tool:pytest")):  # fmt: skip
        if name not in files:
            continue
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(files[name])
        except configparser.Error:
            continue
        if parser.has_option(section, "testpaths"):
            paths = " ".join(parser.get(section, "testpaths").split())
            return paths, f"{name} [{section}] testpaths"
    return None


def _tox_command(files: Mapping[str, str]) -> str | None:
    """The pytest command tox.ini's [testenv] runs ({posargs} dropped), if it runs pytest."""
    if "tox.ini" not in files:
        return None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(files["tox.ini"])
    except configparser.Error:
        return None
    if not parser.has_option("testenv", "commands"):
        return None
    for line in parser.get("testenv", "commands").splitlines():
        command = line.replace("{posargs}", "").strip()
        if re.match(r"(?:python -m )?pytest\b", command):
            return command if command.startswith("python") else f"python -m {command}"
    return None


def _setup(files: Mapping[str, str], top: list[str]) -> tuple[str | tuple[str, ...], str] | None:
    """The dependency setup: evalflow's standard install for each language the repository
    has sources of — a stray requirements.txt in a TypeScript repository installs nothing."""
    has_py = any(p.endswith(".py") for p in files)
    has_node = "package.json" in files or any(p.endswith(_NODE_SOURCES) for p in files)
    ignored = [p for p in top
               if (not has_py and (p in _PY_MANIFESTS or p.startswith("requirements")))
               or (not has_node and p in _NODE_MANIFESTS)]  # fmt: skip
    kept = [p for p in top if p not in ignored]
    commands = auto_setup(kept, files.get("pyproject.toml"))
    if not commands:
        return None
    found = " + ".join(project_manifests(kept)) or "lockfile"
    if not ignored:
        return "auto", f"{found}: evalflow's standard install inside the clone"
    return commands, (f"{found}: evalflow's standard install; {', '.join(ignored)} ignored "
                      "(no sources of that language)")  # fmt: skip


def guess_gates(files: Mapping[str, str]) -> dict[str, tuple[str | tuple[str, ...], str]]:
    """{key: (command, why)} for setup, build, lint, unit and e2e; a key with no guess is absent.

    The project's own declarations first: package.json scripts (test/typecheck/lint/build),
    pytest's declared testpaths (then `pytest` runs as the project runs it, never split by
    folder), tox.ini's pytest command, Makefile targets; only then guesses from the layout.
    A typecheck the project declares (a `typecheck` script, `[tool.mypy]`/`mypy.ini`) joins
    the lint gate: both are its static checks.
    """
    top = sorted(p for p in files if "/" not in p)
    return _gates_at_root(files, top) or _node_subfolders(files)


def _node_subfolders(files: Mapping[str, str]) -> dict[str, tuple[str | tuple[str, ...], str]]:
    """Nothing to guess at the root: each first-level folder with a package.json and a
    lockfile (`web/`, `frontend/`) gets its own install and scripts, run inside it."""
    out: dict[str, tuple[str | tuple[str, ...], str]] = {}
    setups: list[str] = []
    for folder in sorted({p.split("/", 1)[0] for p in files if p.count("/") == 1
                          and p.endswith("/package.json")}):  # fmt: skip
        inner = {p[len(folder) + 1 :]: t for p, t in files.items() if p.startswith(f"{folder}/")}
        inner_top = sorted(p for p in inner if "/" not in p)
        install = auto_setup(inner_top)
        if not install:
            continue  # no lockfile: which installer, the folder does not say
        setups += [f"cd {folder} && {c}" for c in install]  # each setup step starts at the root
        for key, (inside, reason) in _gates_at_root(inner, inner_top).items():
            if key == "setup" or not isinstance(inside, str):
                continue
            step = (f"(cd {folder} && {inside})", f"{folder}/: {reason}")
            if key in out:
                step = (f"{out[key][0]} && {step[0]}", f"{out[key][1]}; {step[1]}")
            out[key] = step
    if setups:
        out["setup"] = (tuple(setups), "nothing to install at the root: each folder's lockfile")
    return out


def _gates_at_root(
    files: Mapping[str, str], top: list[str]
) -> dict[str, tuple[str | tuple[str, ...], str]]:
    out: dict[str, tuple[str | tuple[str, ...], str]] = {}
    setup = _setup(files, top)
    if setup:
        out["setup"] = setup
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
        typecheck = next((n for n in ("typecheck", "type-check", "check-types", "tsc")
                          if n in scripts), None)  # fmt: skip
        if typecheck:
            _join_lint(out, f"npm run {typecheck}", f"package.json scripts.{typecheck}")
    python = [p for p in ("pyproject.toml", "requirements.txt", "setup.py", "setup.cfg",
                          "pytest.ini", "tox.ini") if p in files]  # fmt: skip
    py_tests = [p for p in files if p.endswith(".py") and p.rsplit("/", 1)[-1].startswith("test_")]
    if python or py_tests:
        packages = sorted({p.split("/", 1)[0] for p in files if p.endswith(".py") and "/" in p
                           and not p.startswith(("tests/", "test/", "."))})  # fmt: skip
        if packages:
            out.setdefault("build", (f"python -m compileall -q {' '.join(packages)}",
                                     "Python sources: compileall is the build"))  # fmt: skip
        pyproject = files.get("pyproject.toml", "")
        if "[tool.ruff" in pyproject or "ruff.toml" in files:
            out.setdefault("lint", ("python -m ruff check .", "ruff is configured"))
        if "[tool.mypy" in pyproject or "mypy.ini" in files:
            _join_lint(out, "python -m mypy .", "mypy is configured")
        declared = _pytest_testpaths(files)
        tox = _tox_command(files)
        if declared:
            out.setdefault("unit", ("python -m pytest -q", f"{declared[1]} = {declared[0]}"))
        elif tox:
            out.setdefault("unit", (tox, "tox.ini [testenv] commands"))
        else:
            _layout_tests(files, out)
    targets = set(_MAKE_TARGET.findall(files.get("Makefile", "")))
    for key, names in (("build", ("build",)), ("lint", ("lint", "check")),
                       ("unit", ("test", "unit")), ("e2e", ("e2e", "integration"))):  # fmt: skip
        name = next((n for n in names if n in targets), None)
        if name and key not in out:
            out[key] = (f"make {name}", f"Makefile target {name}")
    return out


def _join_lint(out: dict, command: str, why: str) -> None:
    if "lint" in out:
        lint, reason = out["lint"]
        out["lint"] = (f"{lint} && {command}", f"{reason}; {why}")
    else:
        out["lint"] = (command, why)


def _layout_tests(files: Mapping[str, str], out: dict) -> None:
    """pytest commands guessed from where test_*.py files lie (no declaration to follow)."""
    tests = sorted({p.split("/")[1] for p in files if p.startswith("tests/") and p.count("/") >= 2})
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
            out.setdefault("e2e", (f"python -m pytest -q {paths}", f"{paths} hold pytest files"))
    elif any("/" not in p and p.startswith("test_") and p.endswith(".py") for p in files):
        out.setdefault("unit", ("python -m pytest -q", "test_*.py files at the top level"))
