"""Which production files a run's application can execute: a static import graph, for
Python (`python_reach`) and for JavaScript/TypeScript (`script_reach`, its own rules there).

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

JavaScript/TypeScript (`script_reach`) follows the same principle with its own roots (pages'
`<script>` tags, `package.json` entries, bundler conventions, Next.js routes) and one more
fact: an ES module evaluates only when its whole static import graph resolves, so an entry
whose static imports reach a relative JavaScript import of a file the run provably lacks
loads nothing (`UNLOADED`).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

# Every reason a match is no evidence the application runs it starts so (`NOT_RUN`).
NOT_RUN = "evidence only in code "
UNREACHED = NOT_RUN + "no application entry point imports"
UNLOADED = NOT_RUN + "whose entry point fails to load"

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
    """The production files graphed (Python, or JS/TS), those an application root reaches, and the
    roots. `off` says why the rule does not apply (then no file is unreached)."""

    graphed: frozenset[str]
    reached: frozenset[str]
    roots: tuple[str, ...]
    off: str | None = None
    # Files reached only through entry points that fail to load → why the first one fails.
    unloaded: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def unreached(self, path: str) -> bool:
        """Whether `path` is production code that no application root runs."""
        return self.off is None and path in self.graphed and path not in self.reached

    def why(self, path: str) -> str | None:
        """Why a match in `path` is no evidence the application runs it, or None."""
        if not self.unreached(path):
            return None
        if path in self.unloaded:
            return f"{UNLOADED} ({self.unloaded[path]})"
        return UNREACHED


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


# -- JavaScript / TypeScript ------------------------------------------------------------------

SCRIPT_EXTENSIONS = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
# Files that hold scripts evalflow has no grammar for: their import specifiers are read from
# the text (an over-approximation: an edge too many only keeps more code reached).
EMBEDDING_EXTENSIONS = (".vue", ".svelte", ".astro", ".mdx", ".html", ".htm")
# Frameworks that load modules by convention evalflow does not model (Next.js is modelled:
# its `pages/` and `app/` files are roots).
_CONVENTION_FRAMEWORKS = re.compile(
    r"^(?:nuxt|nuxt3|gatsby|astro|vitepress|expo-router|@sveltejs/kit|@angular/core"
    r"|@remix-run/.+|@react-router/dev|@docusaurus/core|@tanstack/router-plugin|@nuxt/.+)$"
)
_SPEC_TEXT = re.compile(
    r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*|\bsrc\s*=\s*)["'`]([^"'`\s]+)["'`]"""
)
_PATH_TOKEN = re.compile(r"[\w./@-]*\w\.(?:[cm]?[jt]sx?)\b")
# Entries by convention: a bundler's `src/main.*`/`src/index.*`, tool configs and stories (run
# by their tools) anywhere; `_PACKAGE_ENTRY` beside a package.json or at the run's root.
_CONVENTIONAL_ENTRY = re.compile(
    r"(?:^|/)src/(?:main|index)\.(?:[cm]?[jt]sx?)$"
    r"|(?:^|/)[^/]*\.config\.(?:[cm]?[jt]s)$|(?:^|/)\.eslintrc\.[cm]?js$"
    r"|(?:^|/)[^/]*\.stories\.[jt]sx?$"
)
_PACKAGE_ENTRY = re.compile(r"^(?:src/)?(?:main|index|server|app)\.(?:[cm]?[jt]sx?)$")
_NEXT_ROUTE = re.compile(r"(?:^|/)(?:src/)?(?:pages|app)/|(?:^|/)(?:middleware|instrumentation)\.")
# Text of a file run directly: a shebang, or the CommonJS/Deno main-module guards.
_RUN_DIRECTLY = re.compile(r"\A#!|require\.main\s*===?\s*module|import\.meta\.main\b")


@dataclass(frozen=True)
class ScriptFile:
    """The module references of one JS/TS file (`evalflow.repo.scopes.script_file` reads them).

    `static`: specifiers of `import … from`, `export … from` and `import 'x'`; `loads`: other
    literal references (`require('x')`, `import('x')`, a string naming a script file);
    `dynamic`: the first load whose target is not a literal, or a module glob; `strict`:
    whether a missing static import stops the module loading — JavaScript, where every
    import is kept (a TypeScript compiler drops imports used only as types)."""

    static: tuple[str, ...] = ()
    loads: tuple[str, ...] = ()
    dynamic: str | None = None
    strict: bool = False
    runs_directly: bool = False


def runs_directly(text: str) -> bool:
    """Whether a script is run as a program itself: a shebang, or a main-module guard."""
    return bool(_RUN_DIRECTLY.search(text))


def embedded_script_file(text: str) -> ScriptFile:
    """The references of a file that embeds scripts (HTML, Vue, Svelte…), read from its text."""
    return ScriptFile(loads=tuple(m.group(1) for m in _SPEC_TEXT.finditer(text[:1_000_000])))


class _Paths:
    """Resolution of specifiers against every path the run holds."""

    def __init__(self, present: Iterable[str], nodes: Iterable[str], root: str | None) -> None:
        self.present = frozenset(present)
        self.root = root
        self.dirs = {p[:i] for p in self.present for i, c in enumerate(p) if c == "/"}
        self.work = 0  # candidates looked at, bounded as for Python (`_MAX_WORK`)
        # A node by its path without extension and, for an index file, by its folder.
        self.by_stem: dict[str, set[str]] = {}
        self.by_last: dict[str, set[str]] = {}
        for path in nodes:
            for key in _keys(path):
                self.by_stem.setdefault(key, set()).add(path)
                self.by_last.setdefault(key.rsplit("/", 1)[-1], set()).add(key)
        # Every prefix a file extends with an extension: `x` for `x.module.css` too (a
        # bundler may resolve any extension; only a name nothing extends is missing).
        self.stems = {
            p[: len(p) - len(last) + i]
            for p in self.present
            for last in [p.rsplit("/", 1)[-1]]
            for i, c in enumerate(last)
            if c == "." and i
        }

    def relative(self, spec: str, importer: str) -> set[str] | None:
        """The files a relative specifier may mean; None when the run provably lacks it."""
        base = _normalise(f"{importer.rsplit('/', 1)[0] if '/' in importer else ''}/{spec}")
        if base is None or (self.root is not None and not _under(base, self.root)):
            return set()  # outside what the run shows: unknown, never missing
        found = set(self.by_stem.get(base, ())) | set(self.by_stem.get(_stem(base), ()))
        if found or base in self.present or base in self.stems or _stem(base) in self.stems:
            return found
        # A folder without an index file (a package.json `main` inside it…): unknown.
        return set() if base in self.dirs else None

    def suffix(self, spec: str) -> set[str]:
        """Over-approximation for a bare or root-relative specifier (`@/lib/x`, `/src/main.js`,
        a `baseUrl` import): every node whose path ends in it, or in it without its first
        segment (an alias)."""
        spec = spec.strip("/")
        tails = {_stem(spec), spec} | ({spec.split("/", 1)[1]} if "/" in spec else set())
        found: set[str] = set()
        for tail in tails:
            candidates = self.by_last.get(tail.rsplit("/", 1)[-1], ())
            self.work += len(candidates) + 1
            for key in candidates:
                if key == tail or key.endswith("/" + tail):
                    found |= self.by_stem[key]
        return found


def _stem(path: str) -> str:
    """The path without its extension (`a/App.jsx` → `a/App`, `a/x.service.ts` → `a/x.service`)."""
    last = path.rsplit("/", 1)[-1]
    return path[: len(path) - len(last)] + last.rsplit(".", 1)[0] if "." in last[1:] else path


def _keys(path: str) -> tuple[str, ...]:
    stem = _stem(path)
    if stem.rsplit("/", 1)[-1] == "index" and "/" in stem:
        return (stem, path, stem.rsplit("/", 1)[0])
    return (stem, path)


def _under(path: str, folder: str) -> bool:
    return not folder or path == folder or path.startswith(folder.rstrip("/") + "/")


def _inside(path: str, folder: str) -> str:
    """`path` relative to `folder` (which holds it)."""
    return path[len(folder) :].lstrip("/") if folder else path


def _normalise(path: str) -> str | None:
    parts: list[str] = []
    for part in path.split("?", 1)[0].split("/"):
        if part in {"", "."}:
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)


def _resolve(spec: str, importer: str, paths: _Paths) -> set[str] | None:
    if spec.startswith(("./", "../")) or spec in {".", ".."}:
        return paths.relative(spec, importer)
    if spec.startswith(("http:", "https:", "//", "data:", "node:", "virtual:")):
        return set()
    if spec.startswith("/"):  # a page's `/src/main.js`: from the page's folder (the web root)
        return paths.relative("." + spec, importer) or paths.suffix(spec)
    return paths.suffix(spec)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _package_entries(path: str, text: str, paths: _Paths) -> tuple[set[str], str | None]:
    """Roots a package.json declares (`main`, `module`, `browser`, `bin`, `exports`, files its
    `scripts` run; built paths map to sources of the same name), and a framework it uses that
    loads modules by convention (then the rule is off)."""
    data = _json(text)
    if not isinstance(data, dict):
        return set(), None
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    deps = {
        name
        for key in ("dependencies", "devDependencies", "peerDependencies")
        if isinstance(data.get(key), dict)
        for name in data[key]
    }
    convention = next((d for d in sorted(deps) if _CONVENTION_FRAMEWORKS.match(d)), None)
    if convention is not None:
        return set(), f"{convention} loads modules by convention ({path})"
    declared = [
        s for k in ("main", "module", "browser", "bin", "exports") for s in _strings(data.get(k))
    ]
    declared += [t for s in _strings(data.get("scripts")) for t in _PATH_TOKEN.findall(s)]
    roots: set[str] = set()
    for spec in declared:
        local = paths.relative("./" + spec.removeprefix("./"), f"{folder}/package.json".lstrip("/"))
        roots |= (local or set()) | paths.suffix(_stem(spec).rsplit("/", 1)[-1])
    if "next" in deps:
        roots |= {
            p
            for ps in paths.by_stem.values()
            for p in ps
            if _under(p, folder) and _NEXT_ROUTE.search(p[len(folder) :])
        }
    return roots, None


def script_reach(
    scripts: Mapping[str, ScriptFile],
    embedding: Mapping[str, str],
    config: Mapping[str, str],
    present: Iterable[str],
    root: str | None = None,
) -> Reach:
    """The reach of a run's JavaScript and TypeScript: `scripts` maps its production JS/TS files
    to their references, `embedding` the files that embed scripts (HTML, Vue…) to their texts,
    `config` its build and deployment files (`package.json` among them), `present` every path
    the run holds (skipped binaries included), `root` the folder it is confined to.

    Roots: the scripts an HTML file loads, what a `package.json` declares, conventional
    entries (`src/main.*`, `index.*`, `server.*`, `app.*`, tool configs, stories), files run
    directly, Next.js routes, and script paths the build and deployment files name. A root
    whose static imports (followed through every file they reach) include a relative import
    the run provably does not hold, in JavaScript, fails to load: nothing it reaches counts
    (ES modules evaluate only when their whole static graph resolves). Off, as for Python,
    when no root is found, a framework loads modules by convention, or reached code loads a
    module named at run time."""
    files = frozenset(scripts)
    nodes = files | frozenset(embedding)
    paths = _Paths(present, nodes, root)

    def off(why: str) -> Reach:
        return Reach(files, frozenset(), (), off=why)

    read = dict(scripts) | {p: embedded_script_file(t) for p, t in embedding.items()}
    roots: set[str] = set()
    for path, text in sorted(config.items()):
        if path.rsplit("/", 1)[-1] == "package.json":
            declared, convention = _package_entries(path, text, paths)
            if convention is not None:
                return off(convention)
            roots |= declared
        else:
            roots |= {p for t in _PATH_TOKEN.findall(text) for p in paths.suffix(t)}
    roots |= {p for p in embedding if p.endswith((".html", ".htm"))}
    packages = {root or ""} | {
        p.rsplit("/", 1)[0] if "/" in p else "" for p in config if p.endswith("package.json")
    }
    for path in files:
        if (
            _CONVENTIONAL_ENTRY.search(path)
            or scripts[path].runs_directly
            or any(_PACKAGE_ENTRY.match(_inside(path, d)) for d in packages if _under(path, d))
        ):
            roots.add(path)
    roots &= nodes
    edges: dict[str, set[str]] = {}
    static: dict[str, set[str]] = {}
    missing: dict[str, str] = {}  # a JavaScript file → its first static import the run lacks
    for path in sorted(nodes):
        ref = read[path]
        edges[path], static[path] = set(), set()
        for spec in ref.static:
            target = _resolve(spec, path, paths)
            if target is None and ref.strict and path not in missing:
                missing[path] = f"{path} imports {spec!r}, which the run does not hold"
            static[path] |= target or set()
        for spec in ref.loads:
            edges[path] |= _resolve(spec, path, paths) or set()
        edges[path] |= static[path]
        edges[path].discard(path)
    if paths.work > _MAX_WORK:
        return off(f"the import graph is too large to follow ({len(files)} script files)")
    if not roots & files and not any(edges[r] & files for r in roots):
        return off("no JavaScript/TypeScript entry point (nothing to reach from)")
    # A module fails to load when its static imports, followed, reach a missing one.
    fails = set(missing)
    importers: dict[str, set[str]] = {}
    for path, targets in static.items():
        for target in targets:
            importers.setdefault(target, set()).add(path)
    stack = list(missing)
    while stack:
        for importer in importers.get(stack.pop(), set()) - fails:
            fails.add(importer)
            stack.append(importer)
    live = sorted(roots - fails)
    seen, stack = set(live), list(live)
    while stack:
        current = stack.pop()
        if read[current].dynamic is not None:
            return off(read[current].dynamic or "")
        for nxt in edges[current] - seen - fails:
            seen.add(nxt)
            stack.append(nxt)
    # What each failing entry would reach: unloaded (with the entry's first missing import),
    # not never imported.
    unloaded: dict[str, str] = {}
    work = 0
    for entry in sorted(roots & fails):
        closure = _closure(entry, static)
        cause = missing[min(closure & set(missing))]
        for path in sorted(_closure(entry, edges) - seen):
            unloaded.setdefault(path, cause)
        work += len(closure) + len(unloaded)
        if work > _MAX_WORK:
            return off(f"the import graph is too large to follow ({len(files)} script files)")
    return Reach(
        files, frozenset(seen & files), tuple(sorted(roots)), None, MappingProxyType(unloaded)
    )


def _closure(start: str, edges: Mapping[str, set[str]]) -> set[str]:
    seen, stack = {start}, [start]
    while stack:
        for nxt in edges[stack.pop()] - seen:
            seen.add(nxt)
            stack.append(nxt)
    return seen
