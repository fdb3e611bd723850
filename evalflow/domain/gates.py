"""Engineering gates G (SPEC §1, §5): the gate result model and the rules that decide a gate.

Pure: running commands lives in `evalflow.gates`; this module only judges what a run
produced. The rules, in one place:

- A gate is ``pass`` (exit 0 within its timeout) only from an actual run of its exact
  command. A non-zero exit (or a timeout) is classified (`classify_failure`):
  ``infra`` — evalflow's environment failed, not the project: exit 126/127, a command not
  found, a module the project declares (or the command's own tool) not found, a network
  error, a resource limit hit, out of memory, a full disk, a timeout with no output, a sandbox
  that could not be set up — becomes ``not-run`` with the attempt (command, output, exit code)
  as its probe and the matched output line as ``evidence``; ``failed`` — the project's own
  code ran and failed — becomes ``fail`` (✗).
- The dependency ``setup`` step has its own row (✓ ``pass`` / ✗ ``fail`` / ``not-run``), never
  a confirmed ✗: when it did not pass, every gate is ``not-run`` with category ``setup`` and
  the setup's attempt as probe.
- A gate with no command is ``unscored`` ("no gate command configured"): nothing was tried,
  so there is no probe, and it never adjusts Final.
- ``pre-existing``: the gate fails on head, the *same* setup and command also fail on a
  *comparable* base commit with the same exit code and timed-out flag, and the head's failing
  output names no file of the diff surface — an out-of-scope note, not ✗. Base is not
  comparable (`base_incomparable`) when it lacks a project manifest head has, its setup did
  not pass, or the command hit an environment failure there; the head failure is then ✗ on
  its own merits. Mentions are matched generously (`mention_pattern`): doubt resolves to ✗.
- Only ``fail`` on a gate (never on ``setup``) is a confirmed ✗ and triggers Adjusted Final
  (`confirmed_failure`); ``not-run`` is a blind spot, ``pre-existing`` a note, ``unscored``
  nothing at all.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import tomllib
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from evalflow.domain.models import Frozen, GateName

if TYPE_CHECKING:
    import pandas as pd

GateStatus = Literal["pass", "fail", "not-run", "pre-existing", "unscored"]
StepName = Literal["setup", "build", "lint", "unit", "e2e"]
Category = Literal["infra", "setup", "failed", "unconfigured"]

GATES: tuple[GateName, ...] = ("build", "lint", "unit", "e2e")
SETUP: StepName = "setup"
STATUSES: tuple[GateStatus, ...] = ("pass", "fail", "not-run", "pre-existing", "unscored")
NO_COMMAND_REASON = "no gate command configured"
EVIDENCE_CHARS = 300

# Files whose presence says which toolchain a project uses; base lacking one head has is not
# comparable. Lockfiles and dependency declarations also key the caches (`LOCKFILE_GLOBS`).
PROJECT_MANIFESTS = (
    "package.json",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements*.txt",
    "Cargo.toml",
    "go.mod",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
)
LOCKFILE_GLOBS = (
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "yarn.lock",
    "pyproject.toml",
    "uv.lock",
    "requirements*.txt",
)

GATE_RESULT_COLUMNS = [
    "run_key",
    "gate",
    "command",
    "status",
    "confirmed",
    "category",
    "evidence",
    "exit_code",
    "duration_s",
    "timed_out",
    "network_isolated",
    "target_read_only",
    "isolation_missing",
    "setup_command",
    "cached",
    "ran_at",
    "reason",
    "probe_command",
    "probe_output",
    "probe_exit_code",
    "base_exit_code",
    "base_timed_out",
    "notes",
    "output_tail",
]


class ProbeAttempt(Frozen):
    """What was tried (the command, or the setup behind it) and what came back."""

    command: str = Field(min_length=1)
    output: str
    exit_code: int | None = Field(
        default=None, description="the attempt's exit code; None when it ran no process"
    )


class GateResult(Frozen):
    """One engineering gate (or the dependency setup step) of one framework run."""

    gate: StepName
    command: str | None = Field(description="the exact command run; None when none is set")
    status: GateStatus
    category: Category | None = Field(
        default=None, description="why it did not pass: infra, setup, failed or unconfigured"
    )
    evidence: str | None = Field(
        default=None, description="the output line (or fact) the category was decided on"
    )
    exit_code: int | None = Field(
        default=None, description="the head run's exit code (negative: killed by that signal)"
    )
    duration_s: float = Field(default=0.0, ge=0)
    timed_out: bool = False
    network_isolated: bool = Field(
        default=False, description="the command ran without network access"
    )
    target_read_only: bool = Field(
        default=False, description="the evaluated checkout was hidden or read-only for it"
    )
    isolation_missing: tuple[str, ...] = Field(
        default=(), description="sandbox features this machine could not provide"
    )
    setup_command: str | None = Field(
        default=None, description="the dependency setup that ran before it (exact commands)"
    )
    cached: bool = Field(default=False, description="reused from the gate-result cache")
    ran_at: str | None = Field(
        default=None, description="UTC time of the execution this result comes from"
    )
    output_tail: str = ""
    reason: str | None = None
    probe: ProbeAttempt | None = None
    base_exit_code: int | None = Field(
        default=None, description="exit code of the same command on the base commit, if re-run"
    )
    base_timed_out: bool | None = None
    notes: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _status_is_earned(self) -> GateResult:
        ran = self.exit_code is not None
        if self.status == "unscored":
            if self.command is not None or ran or self.probe is not None:
                raise ValueError("an unscored gate has no command, run or probe")
            if self.category != "unconfigured" or not self.reason:
                raise ValueError("an unscored gate is 'unconfigured' and says why")
            return self
        if self.status == "not-run":
            if not (self.reason and self.reason.strip()):
                raise ValueError("a not-run gate needs a reason")
            if self.probe is None:
                raise ValueError("a not-run gate needs the recorded attempt (SPEC G)")
            if ran or self.timed_out:
                raise ValueError("a not-run gate has no exit code and cannot have timed out")
            if self.category not in ("infra", "setup") or not self.evidence:
                raise ValueError("a not-run gate is infra or setup, with evidence")
            return self
        if self.probe is not None:
            raise ValueError("only a not-run gate carries a probe")
        if self.command is None or not ran:
            raise ValueError(f"status {self.status!r} needs the command and its exit code")
        failed = self.timed_out or self.exit_code != 0
        if self.status == "pass":
            if failed:
                raise ValueError("a passing gate exits 0 within its timeout")
            if self.category is not None:
                raise ValueError("a passing gate has no failure category")
            return self
        if not failed:
            raise ValueError(f"status {self.status!r} needs a non-zero exit or a timeout")
        if self.category != "failed":
            raise ValueError(f"status {self.status!r} is the project's own failure ('failed')")
        if self.status == "pre-existing":
            if self.gate == SETUP:
                raise ValueError("the setup step is never judged against base")
            if not (
                self.base_exit_code is not None
                and (self.base_timed_out or self.base_exit_code != 0)
            ):
                raise ValueError("pre-existing needs the failing run on the base commit")
        return self

    @property
    def confirmed(self) -> bool:
        """A confirmed ✗: the only status that triggers Adjusted Final (never the setup)."""
        return self.status == "fail" and self.gate != SETUP


def unscored_result(gate: GateName) -> GateResult:
    """A gate nothing was configured for: no attempt, so no probe and no verdict."""
    return GateResult(
        gate=gate,
        command=None,
        status="unscored",
        category="unconfigured",
        reason=NO_COMMAND_REASON,
    )


# --- classifying a failed execution -------------------------------------------------------

Verdict = tuple[Literal["infra", "failed"], str]

_NOT_FOUND = re.compile(
    r"(?:command not found|: not found$|No such file or directory$|Permission denied$"
    r"|is not recognized as an internal or external command)"
)
# Name resolution and unreachable networks are never the project's doing. A refused or reset
# connection can be the project's own test server failing, so it counts only on the way to a
# package registry.
_NETWORK = re.compile(
    r"\b(?:EAI_AGAIN|ENOTFOUND|ENETUNREACH|EHOSTUNREACH|ENOTCACHED|getaddrinfo"
    r"|Temporary failure in name resolution|Name or service not known|Network is unreachable"
    r"|Could not resolve host)\b"
)
_REGISTRY_CONNECTION = re.compile(
    r"(?:ECONNREFUSED|ECONNRESET|ETIMEDOUT|Connection refused|NewConnectionError"
    r"|Failed to establish a new connection).*(?:registry|pypi\.org|pythonhosted\.org|yarnpkg)"
    r"|(?:registry|pypi\.org|pythonhosted\.org|yarnpkg).*(?:ECONNREFUSED|ECONNRESET|ETIMEDOUT"
    r"|Connection refused|NewConnectionError|Failed to establish a new connection)"
)
_MEMORY = re.compile(
    r"(?:JavaScript heap out of memory|WebAssembly\.\w+\(\): Out of memory"
    r"|Cannot allocate memory|std::bad_alloc|\bMemoryError\b|\bENOMEM\b)"
)
_DISK = re.compile(r"(?:No space left on device|\bENOSPC\b|Disk quota exceeded|\bEDQUOT\b)")
# The project declares an interpreter or engine version the sandbox does not have (pip's
# Requires-Python check, uv's project requirement, npm/yarn/pnpm `engines`): evalflow cannot
# run it here, which says nothing about the project's code.
_TOOLCHAIN_VERSION = re.compile(
    r"(?:requires a different Python: \S+ not in"
    r"|incompatible with the project's Python requirement"
    r"|No interpreter found for Python"
    r"|the current Python version \([^)]*\) does not satisfy Python"
    r"|\bEBADENGINE\b|The engine \"[\w-]+\" is incompatible with this module"
    r"|ERR_PNPM_UNSUPPORTED_ENGINE)"
)
_PY_MODULE = re.compile(r"No module named '?([A-Za-z_][\w.]*)'?")
_JS_MODULE = re.compile(
    r"(?:Cannot find (?:module|package) ['\"]([^'\"]+)['\"]"
    r"|Failed to (?:resolve import|load url) ['\"]?([^'\" ]+)['\"]?)"
)
_FAILURE_LINE = re.compile(
    r"(?:\bFAIL(?:ED)?\b|\b\d+ failed\b|\bError\b|\berror\b|\bAssertionError\b|✗|×)"
)
# Import names that differ from the distribution a project declares.
_IMPORT_ALIASES = {
    "yaml": "pyyaml",
    "pil": "pillow",
    "cv2": "opencv_python",
    "sklearn": "scikit_learn",
    "bs4": "beautifulsoup4",
    "dateutil": "python_dateutil",
    "dotenv": "python_dotenv",
    "jwt": "pyjwt",
    "attr": "attrs",
    "git": "gitpython",
    "magic": "python_magic",
    "serial": "pyserial",
    "usb": "pyusb",
    "jose": "python_jose",
    "multipart": "python_multipart",
}


def _shorten(line: str) -> str:
    line = line.strip()
    return line if len(line) <= EVIDENCE_CHARS else line[: EVIDENCE_CHARS - 1] + "…"


def normalize_name(name: str) -> str:
    """A dependency name as compared here: lower case, '-' and '.' as '_' (PEP 503-like)."""
    return re.sub(r"[-_.]+", "_", name.strip().lower())


def _js_package(spec: str) -> str | None:
    """The package a JS import names ('@s/p/x' → '@s/p', 'p/x' → 'p'); None for local paths."""
    if spec.startswith((".", "/", "~")) or spec.startswith("node:") or "://" in spec:
        return None
    parts = spec.split("/")
    name = "/".join(parts[:2]) if spec.startswith("@") and len(parts) > 1 else parts[0]
    return name.lower()


def _python_package(module: str) -> str:
    top = normalize_name(module.split(".", maxsplit=1)[0])
    return _IMPORT_ALIASES.get(top, top)


def _missing_dependency(line: str, known: frozenset[str]) -> str | None:
    """The declared dependency or tool a 'module not found' line names, if any."""
    for match in _PY_MODULE.finditer(line):
        # 'pkg.sub' missing means pkg itself was found: the project's own import is wrong.
        if "." not in match.group(1) and _python_package(match.group(1)) in known:
            return match.group(1)
    for match in _JS_MODULE.finditer(line):
        spec = match.group(1) or match.group(2)
        package = _js_package(spec)
        if package is not None and (package in known or normalize_name(package) in known):
            return spec
    return None


def classify_failure(
    *,
    exit_code: int,
    timed_out: bool,
    limit_hit: str | None,
    lines: Iterable[str],
    declared: Collection[str] = (),
    tools: Collection[str] = (),
) -> Verdict:
    """Decide a non-zero exit (or timeout): ``("infra", evidence)`` or ``("failed", evidence)``.

    `lines` is the command's whole output; `declared` the project's declared dependencies and
    `tools` the command's own entry points (normalized with `normalize_name`). The first
    environment signature found decides infra; without one the project's code failed.
    """
    # The wall-time limit is the timeout, judged below by whether the command got anywhere.
    if limit_hit and limit_hit != "wall time":
        return "infra", f"the sandbox's {limit_hit} limit was hit"
    known = frozenset(normalize_name(n) for n in (*declared, *tools)) | frozenset(
        n.lower() for n in (*declared, *tools)
    )
    not_found: str | None = None
    first_failure: str | None = None
    last_line: str | None = None
    for raw in lines:
        line = raw.rstrip()
        if not line.strip():
            continue
        last_line = line
        if _NETWORK.search(line) or _REGISTRY_CONNECTION.search(line):
            return "infra", f"network unavailable: {_shorten(line)}"
        if _MEMORY.search(line):
            return "infra", f"out of memory: {_shorten(line)}"
        if _DISK.search(line):
            return "infra", f"disk full: {_shorten(line)}"
        if _TOOLCHAIN_VERSION.search(line):
            return (
                "infra",
                f"the project requires a toolchain version the sandbox lacks: {_shorten(line)}",
            )
        if _NOT_FOUND.search(line) and not_found is None:
            not_found = line
        missing = _missing_dependency(line, known)
        if missing is not None:
            return "infra", f"dependency `{missing}` is not installed: {_shorten(line)}"
        if first_failure is None and _FAILURE_LINE.search(line):
            first_failure = line
    if exit_code in (126, 127):
        shown = _shorten(not_found) if not_found else "no error output"
        return "infra", f"exit {exit_code} (command not found or not executable): {shown}"
    if not_found is not None and (
        "command not found" in not_found or not_found.endswith(": not found")
    ):
        return "infra", f"command not found: {_shorten(not_found)}"
    if timed_out:
        if last_line is None:
            return "infra", "timed out without any output"
        return "failed", f"killed at its timeout; last output: {_shorten(last_line)}"
    if first_failure is not None:
        return "failed", _shorten(first_failure)
    return "failed", _shorten(last_line) if last_line else f"exit {exit_code}, no output"


# --- what a project declares -----------------------------------------------------------

_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _requirement_names(lines: Iterable[str]) -> set[str]:
    names = set()
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        match = _REQUIREMENT_NAME.match(line)
        if match:
            names.add(normalize_name(match.group(1)))
    return names


def _toml_names(data: object) -> set[str]:
    """Requirement names in a pyproject table: PEP 621 lists, PEP 735 groups, Poetry maps."""
    names: set[str] = set()
    if isinstance(data, str):
        names |= _requirement_names([data])
    elif isinstance(data, list):
        for item in data:
            names |= _toml_names(item)
    elif isinstance(data, dict):
        for key, value in data.items():
            if key == "include-group":
                continue
            names |= _toml_names(value) if isinstance(value, list | dict) else set()
    return names


def _pyproject_names(text: str) -> set[str]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return set()
    project = data.get("project", {})
    names = {normalize_name(project["name"])} if isinstance(project.get("name"), str) else set()
    names |= _toml_names(project.get("dependencies", []))
    names |= _toml_names(project.get("optional-dependencies", {}))
    names |= _toml_names(data.get("dependency-groups", {}))
    tool = data.get("tool", {})
    poetry = tool.get("poetry", {}) if isinstance(tool, dict) else {}
    for table in ("dependencies", "dev-dependencies"):
        names |= {normalize_name(k) for k in poetry.get(table, {})}
    for group in poetry.get("group", {}).values():
        names |= {normalize_name(k) for k in group.get("dependencies", {})}
    uv = tool.get("uv", {}) if isinstance(tool, dict) else {}
    names |= _toml_names(uv.get("dev-dependencies", []))
    return names


def _package_json_names(text: str) -> set[str]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return set()
    if not isinstance(data, dict):
        return set()
    names = set()
    for table in (
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
    ):
        value = data.get(table)
        if isinstance(value, dict):
            names |= {str(k).lower() for k in value}
    return names


def declared_dependencies(files: Mapping[str, str]) -> frozenset[str]:
    """Every dependency the project declares, from its manifests (file name → text)."""
    names: set[str] = set()
    for name, text in files.items():
        base = PurePosixPath(name).name
        if base == "package.json":
            names |= _package_json_names(text)
        elif base == "pyproject.toml":
            names |= _pyproject_names(text)
        elif fnmatch.fnmatch(base, "requirements*.txt"):
            names |= _requirement_names(text.splitlines())
    return frozenset(names)


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = re.compile(r"python[0-9.]*")
_MODULE = re.compile(r"[A-Za-z_][\w.]*")
_RUNNERS = frozenset({"npx", "bunx", "pnpx"})
_SHELL_META = frozenset(";&|<>()$`\\\"'*?[]{}~!#")


def command_tools(command: str) -> frozenset[str]:
    """The tools a command itself starts: its executable, a ``python -m`` module, an npx
    package. Their absence is the environment's, whatever the project declares."""
    try:
        words = shlex.split(command)
    except ValueError:
        return frozenset()
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)
    if not words or _SHELL_META.intersection(words[0]):
        return frozenset()
    exe = PurePosixPath(words[0]).name
    tools = {exe}
    rest = [w for w in words[1:] if not w.startswith("-")]
    if _PYTHON.fullmatch(exe) and len(words) > 2 and words[1] == "-m":
        if _MODULE.fullmatch(words[2]):
            tools.add(_python_package(words[2]))
    elif exe in _RUNNERS and rest:
        tools.add(rest[0].lower())
    return frozenset(tools)


# --- setup presets and comparability ------------------------------------------------------

AUTO = "auto"
NPM_CI = "npm ci --no-audit --no-fund"
PNPM_INSTALL = "pnpm install --frozen-lockfile"
YARN_INSTALL = "yarn install --frozen-lockfile"
# uv where the host has it; else installed from PyPI into the sandbox's own home (through
# set-up's registry proxy), never into the clone the gates read. uv may not fetch an
# interpreter (that is no registry download): the project's Python must be on the host. It
# trusts the system's certificates as pip and npm do (its own bundle refuses a TLS-inspecting
# proxy's CA); UV_NATIVE_TLS is the older uv's name for UV_SYSTEM_CERTS.
UV_SYNC = (
    '{ command -v uv >/dev/null || { python -m venv "$HOME/.evalflow-uv" && '
    '"$HOME/.evalflow-uv/bin/python" -m pip install --quiet --disable-pip-version-check uv '
    '&& PATH="$HOME/.evalflow-uv/bin:$PATH"; }; } && UV_PYTHON_DOWNLOADS=never '
    "UV_SYSTEM_CERTS=true UV_NATIVE_TLS=true uv sync --frozen"
)
VENV = "python -m venv .venv"


def _matching(paths: Collection[str], pattern: str) -> list[str]:
    return sorted(p for p in paths if fnmatch.fnmatch(p, pattern))


def dev_groups(pyproject: str | None) -> tuple[str, ...]:
    """The PEP 735 dependency groups a test run needs (``dev``/``test``/``tests``) that the
    project declares: where uv projects keep pytest when no uv.lock is committed."""
    if not pyproject:
        return ()
    try:
        groups = tomllib.loads(pyproject).get("dependency-groups", {})
    except tomllib.TOMLDecodeError:
        return ()
    if not isinstance(groups, dict):
        return ()
    return tuple(g for g in ("dev", "test", "tests") if isinstance(groups.get(g), list))


def auto_setup(paths: Collection[str], pyproject: str | None = None) -> tuple[str, ...]:
    """The standard install commands for the project files at the repository's top level.

    Node: package-lock.json ⇒ ``npm ci``, else pnpm-lock.yaml ⇒ pnpm, else yarn.lock ⇒ yarn.
    Python: uv.lock ⇒ ``uv sync --frozen`` (uv installed first where the host has none);
    else pyproject.toml and/or requirements*.txt ⇒ a
    venv in the clone (``.venv``) with the project installed editable (its ``dev``/``test``
    extras when it has them, and its dev/test dependency groups when `pyproject`, the
    file's text, declares them: pip reads groups from 25.1 on, so it is upgraded first) and
    every requirements file.
    """
    commands: list[str] = []
    if "package-lock.json" in paths or "npm-shrinkwrap.json" in paths:
        commands.append(NPM_CI)
    elif "pnpm-lock.yaml" in paths:
        commands.append(PNPM_INSTALL)
    elif "yarn.lock" in paths:
        commands.append(YARN_INSTALL)
    requirements = _matching(paths, "requirements*.txt")
    if "uv.lock" in paths:
        commands.append(UV_SYNC)
    elif "pyproject.toml" in paths or requirements:
        targets = ["-e '.[dev,test]'"] if "pyproject.toml" in paths else []
        groups = dev_groups(pyproject) if "pyproject.toml" in paths else ()
        targets += [f"--group {g}" for g in groups]
        targets += [f"-r {shlex.quote(r)}" for r in requirements]
        pip = ".venv/bin/python -m pip install --quiet --disable-pip-version-check"
        upgrade = f" && {pip} 'pip>=25.1'" if groups else ""
        commands.append(f"{VENV}{upgrade} && {pip} {' '.join(targets)}")
    return tuple(commands)


def project_manifests(paths: Collection[str]) -> tuple[str, ...]:
    """The toolchain manifests among a commit's top-level files."""
    return tuple(p for pattern in PROJECT_MANIFESTS for p in _matching(paths, pattern))


def base_incomparable(
    head_paths: Collection[str], base_paths: Collection[str], setup_commands: Sequence[str]
) -> str | None:
    """Why base cannot be compared with head before running anything there (None: it can).

    Base lacks a toolchain manifest head has (the spec-kit template commit without
    package.json): head's setup and command have nothing to act on there.
    """
    missing = [m for m in project_manifests(head_paths) if m not in base_paths]
    if missing:
        return f"base has no {', '.join(missing)}"
    if setup_commands and not project_manifests(base_paths):
        return "base has no project manifest for the setup to install"
    return None


def lockfiles(paths: Collection[str]) -> tuple[str, ...]:
    """The top-level files whose contents key the dependency and gate-result caches."""
    return tuple(sorted({p for pattern in LOCKFILE_GLOBS for p in _matching(paths, pattern)}))


# --- base comparison ----------------------------------------------------------------------


def _aliases(path: str) -> list[str]:
    """The spellings under which output may name a changed file.

    The repo-relative path (also matches inside absolute paths, after a '/'), and for a
    Python module at least two levels deep its dotted name (import errors, pytest node ids).
    `__init__.py` maps to its package, which would match nearly every line, so it keeps only
    its path.
    """
    names = [path]
    if path.endswith(".py") and not path.endswith("__init__.py"):
        dotted = path[: -len(".py")].replace("/", ".")
        if "." in dotted:
            names.append(dotted)
    return names


def mention_pattern(diff_paths: Iterable[str]) -> re.Pattern[str] | None:
    """A regex finding diff-surface paths in tool output; None for an empty surface.

    Built from escaped literals only (no input pattern syntax reaches the engine).
    """
    names = sorted({a for p in diff_paths if p for a in _aliases(p)}, key=lambda s: (-len(s), s))
    if not names:
        return None
    alternation = "|".join(re.escape(n) for n in names)
    return re.compile(rf"(?<![\w.\-])({alternation})(?!\w)")


def mentioned_paths(text: str, pattern: re.Pattern[str] | None) -> set[str]:
    return set() if pattern is None else {m.group(1) for m in pattern.finditer(text)}


def not_comparable(head: GateResult, why: str) -> GateResult:
    """A failing head gate whose base cannot be compared: ✗ on its own merits."""
    note = f"base not comparable ({why}): judged on its own merits, confirmed ✗"
    return head.model_copy(update={"notes": (*head.notes, note)})


def judge_against_base(
    head: GateResult,
    *,
    base_exit_code: int,
    base_timed_out: bool,
    mentioned: Sequence[str],
) -> GateResult:
    """Decide a failing head gate after the same setup and command ran on a comparable base."""
    if head.status != "fail" or head.gate == SETUP:
        raise ValueError("only a failing gate is re-run on the base commit")
    fields = {"base_exit_code": base_exit_code, "base_timed_out": base_timed_out}
    base_how = "timed out" if base_timed_out else f"exit {base_exit_code}"
    if base_exit_code == 0 and not base_timed_out:
        note = "passes on the base commit: the change broke it (confirmed ✗)"
        return head.model_copy(update={**fields, "notes": (*head.notes, note)})
    if base_exit_code != head.exit_code or base_timed_out != head.timed_out:
        note = (
            f"also fails on base, but differently ({base_how} vs "
            f"{'timed out' if head.timed_out else f'exit {head.exit_code}'}): confirmed ✗"
        )
        return head.model_copy(update={**fields, "notes": (*head.notes, note)})
    if mentioned:
        note = (
            f"also fails on base ({base_how}), but the failing output names files the change "
            f"touched ({', '.join(sorted(mentioned))}): confirmed ✗"
        )
        return head.model_copy(update={**fields, "notes": (*head.notes, note)})
    note = (
        f"also fails on base ({base_how}) and the failing output names no file of the diff "
        "surface: pre-existing unrelated failure, recorded as an out-of-scope note, not ✗"
    )
    return GateResult.model_validate(
        {
            **head.model_dump(),
            **fields,
            "status": "pre-existing",
            "notes": (*head.notes, note),
        }
    )


def confirmed_failure(results: Iterable[GateResult]) -> bool:
    """True iff at least one gate is a confirmed ✗ (not-run, pre-existing, unscored and the
    setup step never count)."""
    return any(result.confirmed for result in results)


# --- the warehouse table ------------------------------------------------------------------


def gates_frame(run_key: str, results: Sequence[GateResult]) -> pd.DataFrame:
    """Warehouse table `gates`: one row per step (setup first, then the gates)."""
    import pandas as pd  # run manifests read gate settings from here without a frame

    rows = [
        {
            "run_key": run_key,
            "gate": r.gate,
            "command": r.command,
            "status": r.status,
            "confirmed": r.confirmed,
            "category": r.category,
            "evidence": r.evidence,
            "exit_code": r.exit_code,
            "duration_s": r.duration_s,
            "timed_out": r.timed_out,
            "network_isolated": r.network_isolated,
            "target_read_only": r.target_read_only,
            "isolation_missing": list(r.isolation_missing),
            "setup_command": r.setup_command,
            "cached": r.cached,
            "ran_at": None if r.ran_at is None else pd.Timestamp(r.ran_at).tz_convert("UTC"),
            "reason": r.reason,
            "probe_command": r.probe.command if r.probe else None,
            "probe_output": r.probe.output if r.probe else None,
            "probe_exit_code": r.probe.exit_code if r.probe else None,
            "base_exit_code": r.base_exit_code,
            "base_timed_out": r.base_timed_out,
            "notes": "\n".join(r.notes),
            "output_tail": r.output_tail,
        }
        for r in results
    ]
    frame = pd.DataFrame(rows, columns=GATE_RESULT_COLUMNS)
    for column in ("exit_code", "probe_exit_code", "base_exit_code"):
        frame[column] = frame[column].astype("Int64")
    for column in (
        "command",
        "category",
        "evidence",
        "setup_command",
        "reason",
        "probe_command",
        "probe_output",
    ):
        frame[column] = frame[column].astype("string")
    frame["base_timed_out"] = frame["base_timed_out"].astype("boolean")
    for column in ("confirmed", "timed_out", "network_isolated", "target_read_only", "cached"):
        frame[column] = frame[column].astype(bool)
    frame["duration_s"] = frame["duration_s"].astype("float64")
    return frame


def failed_by_run(frame: pd.DataFrame) -> dict[str, bool]:
    """run_key → a gate is a confirmed ✗, from a `gates` frame (rollup's gates_failed)."""
    if frame.empty:
        return {}
    return {str(k): bool(v) for k, v in frame.groupby("run_key")["confirmed"].any().items()}
