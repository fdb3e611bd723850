"""Which production Python files a run's application can execute: a static import graph.

An agent may leave real-looking code where nothing runs it (on papertrail, a nested copy of the
services beside stub routers the application mounts); a probe matching there proves nothing
(SPEC core rule 3). This module answers, from file texts only (the repository's code is
parsed with `ast`, never imported or run), which production Python files are *reached*: an
application root imports them, directly or not.

Roots: a file building an application (`FastAPI(`, `Flask(`, `Starlette(`, `Quart(`, `Sanic(`,
`Litestar(`, `Typer(`, `Celery(`), one importing `streamlit` (run as a script), a module-level
`if __name__ == "__main__":` guard, a package `__main__.py`, and every module or file an entry
declaration names — `pkg.mod:attr` (`[project.scripts]`, `console_scripts`, uvicorn/gunicorn
commands), `python -m pkg.mod`, `path/to/file.py` — in the run's build and deployment files
(`is_entry_config`). Test files are not roots: code only tests import is not wired into the
product.

Edges, each an over-approximation (a wrong edge can only keep a file reached): a module's
enclosing packages (their `__init__.py`), `import a.b` and `from a.b import c` (relative
imports resolved exactly from the importing file's package; absolute ones by dotted-name
suffix, so `src/` and any other source root resolve, with the packages on the way), and every
string constant that names a module (`"pkg.app:app"` for `uvicorn.run`, a string router
include, an `importlib.import_module` argument) or a `.py` path.

The rule is *off* (`Reach.off` says why; nothing is unreached) whenever the answer could be
wrong the other way: no root at all (a library), a file `ast` cannot parse that is reached or
looks like a root (its imports are unknown), Django (it discovers models, admin and commands
by convention), or in reached code a dynamic import whose target is not a constant
(`importlib.import_module(name)`, `__import__`, `runpy`, `spec_from_file_location`,
`exec`/`eval`) or a module discovery (`pkgutil.iter_modules`, `walk_packages`,
`autodiscover`, entry points).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

UNREACHED = "evidence only in code no application entry point imports"

_APP_BUILDERS = frozenset(
    {"FastAPI", "Flask", "Starlette", "Quart", "Sanic", "Litestar", "Typer", "Celery"}
)
_SCRIPT_FRAMEWORKS = frozenset({"streamlit"})
# Calls that load a module named at run time: an edge only when the name is a constant.
_LOADERS = frozenset(
    {
        "import_module",
        "__import__",
        "run_module",
        "run_path",
        "spec_from_file_location",
        "import_string",
        "load_source",
        "exec",
        "eval",
    }
)
# Calls that discover modules by listing packages or entry points: nothing static follows them.
_DISCOVERY = frozenset(
    {
        "iter_modules",
        "walk_packages",
        "autodiscover",
        "autodiscover_tasks",
        "entry_points",
        "iter_entry_points",
        "load_entry_point",
    }
)
# Candidates looked at while building the graph: far above an honest run (the largest real
# repository evalflow scores has 1,594 files), reached only by a tree built to be slow.
_MAX_WORK = 5_000_000
# A root in a file `ast` cannot parse, found in its text.
_LOOKS_LIKE_ROOT = re.compile(
    r"\b(?:" + "|".join(sorted(_APP_BUILDERS)) + r")\(|__name__\s*==\s*['\"]__main__['\"]"
    r"|^\s*(?:import|from)\s+streamlit\b",
    re.M,
)
_NAME = r"[A-Za-z_]\w*"
_DOTTED = rf"{_NAME}(?:\.{_NAME})*"
# A string constant naming a module: dotted (`pkg.mod`) or an entry (`mod:attr`, `pkg.mod:a.b`).
_MODULE_STRING = re.compile(rf"({_NAME}(?:\.{_NAME})+)(?::[\w.]+)?|({_NAME}):{_NAME}(?:\.\w+)*")
_PATH_STRING = re.compile(r"\.?/?([\w.-]+(?:/[\w.-]+)*\.py)")
# Entry declarations in build and deployment files (over-approximations: a root too many only
# keeps more code reached).
_CONFIG_ENTRY = re.compile(rf"(?<![\w.:/])({_DOTTED}):{_NAME}")
_CONFIG_MODULE = re.compile(rf"-m\s+({_DOTTED})")
_CONFIG_PATH = re.compile(r"([\w./-]*\w\.py)\b")
_CONFIG_NAMES = frozenset({"Procfile", "Makefile", "package.json", "setup.py"})
_CONFIG_SUFFIXES = (".toml", ".cfg", ".ini", ".yml", ".yaml", ".sh")


def is_entry_config(path: str) -> bool:
    """Whether `path` is a build or deployment file that may declare an entry point."""
    name = path.rsplit("/", 1)[-1]
    return name in _CONFIG_NAMES or name.startswith("Dockerfile") or name.endswith(_CONFIG_SUFFIXES)


@dataclass(frozen=True)
class Reach:
    """The production Python files graphed, those an application root reaches, and the roots.
    `off` says why the rule does not apply (then no file is unreached)."""

    python: frozenset[str]
    reached: frozenset[str]
    roots: tuple[str, ...]
    off: str | None = None

    def unreached(self, path: str) -> bool:
        """Whether `path` is production Python that no application root imports."""
        return self.off is None and path in self.python and path not in self.reached


def module_name(path: str) -> str:
    """The dotted name of a Python file from the repository root (`a/b/__init__.py` → `a.b`)."""
    parts = path.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


class _Modules:
    """Name lookups: exact dotted names, and dotted-name or path suffixes (candidates found by
    their last segment, so memory stays linear in the files). `work` counts candidates looked
    at: a hostile tree that makes it exceed `_MAX_WORK` turns the rule off, never hangs."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.exact: dict[str, set[str]] = {}
        self.by_last: dict[str, list[tuple[str, str]]] = {}
        self.by_base: dict[str, list[str]] = {}
        self.paths = sorted(paths)
        self.work = 0
        for path in self.paths:
            name = module_name(path)
            self.exact.setdefault(name, set()).add(path)
            self.by_last.setdefault(name.rsplit(".", 1)[-1], []).append((name, path))
            self.by_base.setdefault(path.rsplit("/", 1)[-1], []).append(path)

    def absolute(self, name: str) -> set[str]:
        """Files an absolute import of `name` executes: every module whose dotted name ends in
        `name` and, for each, the packages on the way (the `__init__` of each segment)."""
        found: set[str] = set()
        candidates = self.by_last.get(name.rsplit(".", 1)[-1], ())
        self.work += len(candidates) + 1
        for full_name, path in candidates:
            if full_name != name and not full_name.endswith("." + name):
                continue
            found.add(path)
            full = full_name.split(".")
            for up in range(1, name.count(".") + 1):
                found |= self.exact.get(".".join(full[:-up]), set())
        return found

    @staticmethod
    def relative(package: list[str], level: int, module: str | None) -> str:
        """The exact name `from <level dots><module> import` means in `package`."""
        anchor = package[: len(package) - (level - 1)] if level - 1 <= len(package) else []
        return ".".join(anchor + ([module] if module else []))

    def by_path(self, tail: str) -> set[str]:
        """Files whose repository path ends in the path `tail` names."""
        tail = tail.lstrip("./")
        candidates = self.by_base.get(tail.rsplit("/", 1)[-1], ())
        self.work += len(candidates) + 1
        return {p for p in candidates if p == tail or p.endswith("/" + tail)}


# Builtins that load code only when called bare (`model.eval()` is no code loader).
_BUILTIN_LOADERS = frozenset({"exec", "eval", "__import__"})


def _callee(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and func.attr not in _BUILTIN_LOADERS:
        return func.attr
    return None


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    sides = [node.test.left, *node.test.comparators]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )


@dataclass
class _File:
    edges: set[str]
    root: bool
    dynamic: str | None  # the first dynamic import or discovery it makes, for `Reach.off`
    django: bool


def _read(path: str, tree: ast.Module, modules: _Modules) -> _File:
    package = module_name(path).split(".")
    if not path.endswith("/__init__.py") and path != "__init__.py":
        package = package[:-1]
    # Importing a module runs the `__init__` of every package it lies in.
    edges = {
        p for i in range(1, len(package) + 1) for p in modules.exact.get(".".join(package[:i]), ())
    }
    root = path == "__main__.py" or path.endswith("/__main__.py")
    root = root or any(_is_main_guard(node) for node in tree.body)
    dynamic: str | None = None
    django = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                edges |= modules.absolute(alias.name)
                django = django or alias.name.split(".")[0] == "django"
                root = root or alias.name.split(".")[0] in _SCRIPT_FRAMEWORKS
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = modules.relative(package, node.level, node.module)
                lookup = modules.exact.get
            else:
                base = node.module or ""
                lookup = modules.absolute
                django = django or base.split(".")[0] == "django"
                root = root or base.split(".")[0] in _SCRIPT_FRAMEWORKS
            for candidate in (base, *(f"{base}.{a.name}" for a in node.names if a.name != "*")):
                edges |= set(lookup(candidate) or ())
        elif isinstance(node, ast.Call):
            callee = _callee(node)
            if callee in _APP_BUILDERS:
                root = True
            elif callee in _DISCOVERY and dynamic is None:
                dynamic = f"{callee}() discovers modules at run time ({path}:{node.lineno})"
            elif callee in _LOADERS:
                first = node.args[0] if node.args else None
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    target = first.value.strip(".").split(":")[0]
                    edges |= modules.absolute(target) | modules.by_path(target)
                elif dynamic is None:
                    dynamic = f"{callee}() loads code named at run time ({path}:{node.lineno})"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            edges |= _named_by_string(node.value, modules)
    edges.discard(path)
    return _File(edges, root, dynamic, django)


def _named_by_string(text: str, modules: _Modules) -> set[str]:
    """Modules a string constant names (`"pkg.app:app"`, `"pkg.routers.users"`, `"a/b.py"`)."""
    if len(text) > 300:  # no module name is that long; keeps the regexes cheap
        return set()
    entry = _MODULE_STRING.fullmatch(text)
    if entry:
        return modules.absolute(entry.group(1) or entry.group(2))
    path = _PATH_STRING.fullmatch(text)
    return modules.by_path(path.group(1)) if path else set()


def _config_roots(config: Mapping[str, str], modules: _Modules) -> set[str]:
    roots: set[str] = set()
    for text in config.values():
        for match in _CONFIG_ENTRY.finditer(text):
            roots |= modules.absolute(match.group(1))
        for match in _CONFIG_MODULE.finditer(text):
            roots |= modules.absolute(match.group(1))
        for match in _CONFIG_PATH.finditer(text):
            roots |= modules.by_path(match.group(1))
    return roots


def python_reach(python: Mapping[str, str], config: Mapping[str, str] | None = None) -> Reach:
    """The reach of a run: `python` maps its production Python files (repository paths, no
    tests) to their texts, `config` its build and deployment files (`is_entry_config`)."""
    files = frozenset(python)
    modules = _Modules(files)
    config = config or {}

    def off(why: str) -> Reach:
        return Reach(files, frozenset(), (), off=why)

    read: dict[str, _File] = {}
    unparsed: set[str] = set()
    for path in sorted(files):
        try:
            tree = ast.parse(python[path])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            # Python newer than ours, or broken: what it imports is unknown.
            if _LOOKS_LIKE_ROOT.search(python[path]):
                return off(f"{path} does not parse and may be an entry point")
            unparsed.add(path)
            read[path] = _File(set(), False, None, False)
            continue
        read[path] = _read(path, tree, modules)
        if modules.work > _MAX_WORK:
            return off(f"the import graph is too large to follow ({len(files)} Python files)")
    django = next((p for p in sorted(read) if read[p].django), None)
    if django is not None:
        return off(f"Django discovers modules by convention ({django} imports django)")
    roots = sorted({p for p, f in read.items() if f.root} | _config_roots(config, modules))
    if modules.work > _MAX_WORK:
        return off(f"the import graph is too large to follow ({len(files)} Python files)")
    if not roots:
        return off("no application entry point (a library: nothing to reach from)")
    seen, stack = set(roots), list(roots)
    while stack:
        path = stack.pop()
        if path in unparsed:
            return off(f"{path} is imported but does not parse: what it imports is unknown")
        current = read[path]
        if current.dynamic is not None:
            return off(current.dynamic)
        for nxt in current.edges - seen:
            seen.add(nxt)
            stack.append(nxt)
    return Reach(files, frozenset(seen), tuple(roots))
