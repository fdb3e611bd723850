"""Run the engineering gates of one framework run in a throw-away clone (SPEC §1 G, §5).

Per commit evaluated (head, and base only when a failing gate needs the comparison):

1. clone the evaluated repository into a fresh sandbox directory (`_clone`) — never a
   worktree, which would write into the evaluated repository's ``.git``. Every command runs
   in the run's folder of that clone (the manifest's ``root:``, else the clone's top), so
   ``auto`` setup, lockfiles and project manifests are the folder's own and one command
   written against the PRD's interface runs alike in every framework's folder;
2. **setup** (manifest ``setup:``, else the benchmark's ``_benchmark.yaml``; ``auto`` picks the
   standard install from the lockfiles, `evalflow.domain.gates.auto_setup`): runs once, in
   the clone, with HTTPS to the package registries only (`sandbox.REGISTRIES`, through
   evalflow's proxy), the dependency download cache writable (one per framework run — its
   repository — and per setup and lockfile digests, under the warehouse work dir). It is its
   own result row; when it does not pass, every gate is ``not-run`` (category ``setup``)
   with the setup's attempt as probe;
3. the gates (build, lint, unit, e2e, in that order) run one after another in that same clone,
   like the steps of one CI job: offline, the dependency cache read-only, ``.venv/bin`` and
   ``node_modules/.bin`` of the clone first on PATH. A non-zero exit is classified
   (`classify_failure`): an environment failure is ``not-run`` with the attempt as probe, the
   project's own failure ``fail``;
4. a failing gate listed in ``rerun_on_base`` runs again on a *comparable* base commit (the
   same setup first); otherwise it is ✗ on its own merits (`base_incomparable`);
5. the read-only guard checks after every command that the evaluated repository is
   byte-identical to before (`ReadOnlyViolationError` names the gate).

Results are cached under the warehouse work dir, keyed by head, base, the setup commands and
lockfile digests, the gate command, its environment, limits and isolation, and the code of
the sandbox and of these rules (`gate_key`). Only results the environment cannot change are
stored (pass, fail, pre-existing, a passing setup); an unchanged key reuses the stored result
(``cached`` true, ``ran_at`` the original execution's time) unless ``rerun`` is set.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from evalflow.domain import gates as rules
from evalflow.domain.gates import (
    GATES,
    SETUP,
    GateResult,
    ProbeAttempt,
    auto_setup,
    base_incomparable,
    classify_failure,
    command_tools,
    declared_dependencies,
    judge_against_base,
    lockfiles,
    mention_pattern,
    not_comparable,
    unscored_result,
)
from evalflow.domain.models import GateCommands, GateName, GateSettings
from evalflow.errors import InputError, ReadOnlyViolationError
from evalflow.gates import sandbox as sandbox_module
from evalflow.gates.sandbox import (
    NO_ISOLATION,
    GateLimits,
    Isolation,
    execute,
    gate_env,
    new_sandbox,
    probe_isolation,
    read_tail,
    scan_log,
    scrub,
    secret_values,
)
from evalflow.repo.git import (
    clone_for_gate,
    git,
    remove_tree,
    require_repo,
    resolve_commit,
    scratch_dir,
)
from evalflow.repo.guard import RepoState, capture_state, verify_unchanged

IsolationMode = Literal["auto", "none"]

DEFAULT_RERUN_ON_BASE: tuple[GateName, ...] = ("lint", "unit", "e2e")
CACHE_FORMAT = 1
# A changed sandbox or changed rules must not reuse results decided by the old ones.
CODE_VERSION = hashlib.sha256(
    b"".join(Path(m.__file__ or "").read_bytes() for m in (sandbox_module, rules))
    + Path(__file__).read_bytes()
).hexdigest()[:16]
_CACHEABLE = frozenset({"pass", "fail", "pre-existing"})
NO_SETTINGS = GateSettings()


@dataclass(frozen=True)
class GateCaches:
    """Where gate results and dependency downloads are kept (the warehouse's work dir)."""

    results: Path
    dependencies: Path

    @classmethod
    def under(cls, workdir: Path) -> GateCaches:
        return cls(results=workdir / "gate-results", dependencies=workdir / "gate-deps")


def _private_home() -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """The operator's home directory, hidden from gates (SSH keys, shell files, cloud
    credentials) — even when the sandbox lives in it (a warehouse in the home): the clone
    and scratch directories are bound back over the hiding tmpfs — and what gates need
    re-exposed read-only: the interpreter evalflow hands them and the tool directories on
    PATH, when they lie in that home or under the temporary directory (which a gate sees as
    its own, empty /tmp — a checkout and its .venv under /tmp would otherwise vanish)."""
    home = Path.home().resolve()
    hide = home != Path("/") and home.is_dir()
    covered = [Path(tempfile.gettempdir()).resolve(), Path("/tmp")]
    if hide:
        covered.append(home)
    executable = Path(sys.executable)
    needed = {
        Path(sys.prefix).resolve(),
        Path(sys.base_prefix).resolve(),
        executable.parent.resolve(),
        executable.resolve().parent,
        *(Path(p).resolve() for p in os.environ.get("PATH", "").split(os.pathsep) if p),
    }
    exposed = sorted(
        p
        for p in needed
        if p.is_dir() and p not in covered and any(p.is_relative_to(c) for c in covered)
    )
    return ((home,) if hide else ()), tuple(exposed)


@dataclass(frozen=True)
class _Context:
    repo: Path
    isolation: Isolation
    hidden: tuple[Path, ...]
    exposed: tuple[Path, ...]
    sandbox_root: Path
    # The run's folder in the clone (manifest `root:`); None: the clone's top.
    root: str | None
    limits: GateLimits
    extra_env: dict[str, str]
    secrets: tuple[str, ...]
    setup: tuple[str, ...]
    deps_cache: Path | None
    declared: frozenset[str]
    locks: Mapping[str, str]


@dataclass
class _Workspace:
    """One commit's clone after its setup; its gates run one after another in it."""

    sandbox: Path
    clone: Path
    env: dict[str, str]
    setup: GateResult | None = None
    logs: Iterator[int] = field(default_factory=lambda: iter(range(1_000_000)))

    @property
    def ready(self) -> bool:
        return self.setup is None or self.setup.status == "pass"

    def cwd(self, root: str | None) -> Path:
        """Where commands run: the run's folder of the clone."""
        return self.clone / root if root else self.clone


def _clone(repo: Path, sha: str, dest: Path) -> None:
    # From evalflow's mirror, never the evaluated repository: no filter or hook it names runs.
    clone_for_gate(repo, sha, dest)


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def _top_level(repo: Path, sha: str, root: str | None = None) -> tuple[str, ...]:
    """The names in the run's folder at `sha` (the top level without a root); empty when
    the folder does not exist there."""
    if root is None:
        out = git(repo, "ls-tree", "--name-only", sha)
    else:
        out = git(repo, "ls-tree", "--name-only", sha, "--", f"{root}/")
    prefix = f"{root}/" if root else ""
    names = out.decode("utf-8", "replace").split("\n")
    return tuple(n.removeprefix(prefix) for n in names if n)


def _blob(repo: Path, sha: str, name: str, root: str | None = None) -> bytes:
    return git(repo, "cat-file", "blob", f"{sha}:{root}/{name}" if root else f"{sha}:{name}")


def _lines(path: Path) -> Iterator[str]:
    if not path.is_file():
        return
    with path.open("rb") as handle:
        for raw in handle:
            yield raw.decode("utf-8", "replace")


def _setup_env(ctx: _Context, base: dict[str, str]) -> dict[str, str]:
    """Setup writes the shared download caches; gates read npm's offline (never write it)."""
    if ctx.deps_cache is None:
        return base
    return {
        **base,
        "npm_config_cache": str(ctx.deps_cache / "npm"),
        "PIP_CACHE_DIR": str(ctx.deps_cache / "pip"),
        "UV_CACHE_DIR": str(ctx.deps_cache / "uv"),
        "YARN_CACHE_FOLDER": str(ctx.deps_cache / "yarn"),
        "npm_config_store_dir": str(ctx.deps_cache / "pnpm"),
    }


def _gate_path_env(ctx: _Context, ws: _Workspace) -> dict[str, str]:
    env = dict(ws.env)
    cwd = ws.cwd(ctx.root)
    first = [cwd / ".venv" / "bin", cwd / "node_modules" / ".bin"]
    found = [str(p) for p in first if p.is_dir()]
    if found:
        env["PATH"] = os.pathsep.join([*found, env.get("PATH", os.defpath)])
    if (cwd / ".venv" / "bin").is_dir():
        env["VIRTUAL_ENV"] = str(cwd / ".venv")
    if ctx.deps_cache is not None:
        env["npm_config_cache"] = str(ctx.deps_cache / "npm")
        env["npm_config_offline"] = "true"
        env["npm_config_logs_dir"] = str(ws.sandbox / "npm-logs")
    return env


@dataclass(frozen=True)
class _Attempt:
    command: str
    exit_code: int
    timed_out: bool
    started: bool
    limit_hit: str | None
    duration_s: float
    tail: str
    log: Path


def _attempt(ctx: _Context, ws: _Workspace, command: str, *, setup: bool) -> _Attempt:
    log = ws.sandbox / f"step-{next(ws.logs)}.log"
    deps = (ctx.deps_cache,) if ctx.deps_cache is not None else ()
    if setup:
        for path in deps:
            path.mkdir(parents=True, exist_ok=True)
    run = execute(
        command,
        cwd=ws.cwd(ctx.root),
        env=_setup_env(ctx, ws.env) if setup else _gate_path_env(ctx, ws),
        log=log,
        isolation=ctx.isolation,
        timeout_s=ctx.limits.timeout_s,
        limits=ctx.limits,
        # The whole clone stays writable, as without a root (a build may write beside it).
        writable=(ws.clone, *(deps if setup else ())),
        hidden=ctx.hidden,
        read_only=ctx.exposed + (() if setup else tuple(p for p in deps if p.is_dir())),
        network=setup,
    )
    tail = read_tail(
        log, lines=ctx.limits.tail_lines, chars=ctx.limits.tail_chars, secrets=ctx.secrets
    )
    return _Attempt(
        command=scrub(command, ctx.secrets),
        exit_code=run.exit_code,
        timed_out=run.timed_out,
        started=run.started,
        limit_hit=run.limit_hit,
        duration_s=run.duration_s,
        tail=tail,
        log=log,
    )


def _common(ctx: _Context, gate: str) -> dict[str, object]:
    return {
        "network_isolated": ctx.isolation.network and gate != SETUP,
        "target_read_only": ctx.isolation.read_only,
        "isolation_missing": ctx.isolation.missing(),
        "setup_command": " && ".join(ctx.setup) or None,
        "ran_at": _now(),
    }


def _not_run(
    gate: rules.StepName, attempt: _Attempt, evidence: str, reason: str, **fields: object
) -> GateResult:
    """An infra failure: not-run, with the attempt recorded as its probe (never ✗)."""
    return GateResult(
        gate=gate,
        command=attempt.command,
        status="not-run",
        category="infra",
        evidence=evidence,
        reason=reason,
        probe=ProbeAttempt(
            command=attempt.command,
            output=attempt.tail or "no output",
            exit_code=attempt.exit_code,
        ),
        **fields,  # type: ignore[arg-type]
    )


def _decide(
    ctx: _Context, gate: rules.StepName, attempt: _Attempt, tools: Collection[str]
) -> GateResult:
    """The result of one executed command: pass, fail (the project's) or not-run (infra)."""
    common = _common(ctx, gate)
    if not attempt.started:
        return _not_run(
            gate,
            attempt,
            f"the sandbox could not be set up: {_last_line(attempt.tail)}",
            "the sandbox could not be set up (environment unavailable)",
            **common,
        )
    notes = list(ctx.isolation.notes())
    if attempt.timed_out:
        notes.append(f"killed at its {ctx.limits.timeout_s:g} s timeout")
    if attempt.exit_code == 0 and not attempt.timed_out:
        return GateResult(
            gate=gate,
            command=attempt.command,
            status="pass",
            exit_code=0,
            duration_s=attempt.duration_s,
            output_tail=attempt.tail,
            notes=tuple(notes),
            **common,
        )
    category, evidence = classify_failure(
        exit_code=attempt.exit_code,
        timed_out=attempt.timed_out,
        limit_hit=attempt.limit_hit,
        lines=_lines(attempt.log),
        declared=ctx.declared,
        tools=tools,
    )
    evidence = scrub(evidence, ctx.secrets)
    if category == "infra":
        return _not_run(
            gate,
            attempt,
            evidence,
            "the environment failed, not the project (infra)",
            duration_s=attempt.duration_s,
            notes=tuple(notes),
            **common,
        )
    return GateResult(
        gate=gate,
        command=attempt.command,
        status="fail",
        category="failed",
        evidence=evidence,
        exit_code=attempt.exit_code,
        duration_s=attempt.duration_s,
        timed_out=attempt.timed_out,
        output_tail=attempt.tail,
        notes=tuple(notes),
        **common,
    )


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no error output"


def _run_setup(ctx: _Context, ws: _Workspace) -> GateResult:
    """Run the setup commands in order; the first that does not pass decides the row."""
    total = 0.0
    outputs: list[str] = []
    for command in ctx.setup:
        attempt = _attempt(ctx, ws, command, setup=True)
        total += attempt.duration_s
        outputs.append(attempt.tail)
        result = _decide(ctx, SETUP, attempt, command_tools(command))
        if result.status != "pass":
            return result.model_copy(
                update={"command": " && ".join(ctx.setup), "duration_s": round(total, 3)}
            )
    return GateResult(
        gate=SETUP,
        command=" && ".join(ctx.setup),
        status="pass",
        exit_code=0,
        duration_s=round(total, 3),
        output_tail="\n".join(o for o in outputs if o)[-ctx.limits.tail_chars :],
        notes=tuple(ctx.isolation.notes()),
        **_common(ctx, SETUP),
    )


def _open(ctx: _Context, sha: str) -> _Workspace:
    sandbox = new_sandbox(ctx.sandbox_root)
    clone = sandbox / "clone"
    ws = _Workspace(sandbox=sandbox, clone=clone, env=gate_env(sandbox, ctx.extra_env))
    try:
        _clone(ctx.repo, sha, clone)
        if ctx.setup:
            ws.setup = _run_setup(ctx, ws)
    except BaseException:
        remove_tree(sandbox)
        raise
    return ws


def _blocked(ctx: _Context, gate: GateName, command: str, setup: GateResult) -> GateResult:
    """A gate that cannot run because the setup did not pass: not-run, the setup as probe."""
    probe = setup.probe or ProbeAttempt(
        command=setup.command or "setup",
        output=setup.output_tail or "no output",
        exit_code=setup.exit_code,
    )
    return GateResult(
        gate=gate,
        command=scrub(command, ctx.secrets),
        status="not-run",
        category="setup",
        evidence=f"setup {setup.status}: {setup.evidence or 'no evidence'}",
        reason="the dependency setup did not pass, so the gate could not run",
        probe=probe,
        **_common(ctx, gate),
    )


def _guard(ctx: _Context, before: RepoState, gate: str, where: str) -> None:
    try:
        verify_unchanged(ctx.repo, before)
    except ReadOnlyViolationError as exc:
        raise ReadOnlyViolationError(
            f"gate {gate} ({where}) changed the evaluated repository: {exc.what}",
            where=exc.where,
            fix=exc.fix,
        ) from exc


def _sandbox_root(sandbox_root: Path | None, repo: Path) -> Path:
    # By default in this process's workspace (under the warehouse's work dir): a killed run's
    # sandboxes are removed by the next run, none is left in the system temp directory.
    root = Path(sandbox_root or scratch_dir("gates")).resolve()
    if root.is_relative_to(repo.resolve()):
        raise InputError(
            "the gate sandbox would live inside the evaluated repository",
            where=str(root),
            fix="keep the warehouse (--warehouse, EVALFLOW_WAREHOUSE) outside the repository",
        )
    root.mkdir(parents=True, exist_ok=True)
    return root


def gate_commands(
    commands: GateCommands, build_command: str | None = None
) -> dict[GateName, str | None]:
    """The command of each gate; `build_command` is the benchmark's fixed build, if it has one."""
    chosen: dict[GateName, str | None] = {gate: getattr(commands, gate) for gate in GATES}
    if build_command is not None:
        chosen["build"] = build_command
    return chosen


def resolve_setup(
    setup: str | Sequence[str] | None, paths: Collection[str], pyproject: str | None = None
) -> tuple[str, ...]:
    """The exact setup commands: ``auto`` resolved from the head's top-level files (and its
    pyproject.toml's text, for the dependency groups to install)."""
    if setup is None:
        return ()
    if isinstance(setup, str):
        return auto_setup(paths, pyproject) if setup.strip() == rules.AUTO else (setup,)
    return tuple(setup)


def gate_env_values(
    wanted: Mapping[str, str | None], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The manifest's ``gate_env``: a value as given, null ⇒ evalflow's own (when it has one)."""
    source = os.environ if environ is None else environ
    out = {}
    for name, value in sorted(wanted.items()):
        if value is not None:
            out[name] = value
        elif name in source:
            out[name] = source[name]
    return out


def gate_limits(settings: GateSettings, timeout_s: float | None = None) -> GateLimits:
    """GateLimits from the settings' ``gate_limits``; `timeout_s` is the operator's default."""
    given = {k: v for k, v in settings.gate_limits.items() if v is not None}
    if timeout_s is not None and "timeout_s" not in given:
        given["timeout_s"] = timeout_s
    return GateLimits.model_validate(given)


def _digest(material: object) -> str:
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def head_key(ctx: _Context, head: str) -> dict[str, object]:
    """What every cached result of a command run on `head` depends on, besides the command."""
    return {
        "format": CACHE_FORMAT,
        "code": CODE_VERSION,
        "head": head,
        "root": ctx.root,
        "setup": ctx.setup,
        "locks": dict(ctx.locks),
        "env": ctx.extra_env,
        "limits": ctx.limits.model_dump(mode="json"),
        "isolation": ctx.isolation.model_dump(mode="json"),
    }


def gate_key(common: Mapping[str, object], gate: str, command: str | None) -> str:
    """The gate-result cache key: everything that can change the result, nothing else."""
    return _digest({**common, "gate": gate, "command": command})


def _load(caches: GateCaches | None, key: str) -> GateResult | None:
    if caches is None:
        return None
    path = caches.results / key[:2] / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return GateResult.model_validate(data).model_copy(update={"cached": True})
    except (OSError, ValueError):
        # Missing, half-written by a crashed process, or from an older shape: run again.
        return None


def _store(caches: GateCaches | None, key: str, result: GateResult) -> None:
    if caches is None or result.status not in _CACHEABLE:
        return
    path = caches.results / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(result.model_copy(update={"cached": False}).model_dump_json(), "utf-8")
    os.replace(tmp, path)


@dataclass
class _Base:
    """The base commit's workspace, opened the first time a failing gate needs it."""

    ctx: _Context
    sha: str
    incomparable: str | None
    before: RepoState
    ws: _Workspace | None = None

    def compare(self, head: GateResult, command: str, mentioned: Iterable[str]) -> GateResult:
        if self.incomparable is not None:
            return not_comparable(head, self.incomparable)
        if self.ws is None:
            self.ws = _open(self.ctx, self.sha)
            _guard(self.ctx, self.before, SETUP, "base")
        if not self.ws.ready and self.ws.setup is not None:
            evidence = self.ws.setup.evidence or self.ws.setup.status
            self.incomparable = f"the setup did not pass on base: {evidence}"
            return not_comparable(head, self.incomparable)
        attempt = _attempt(self.ctx, self.ws, command, setup=False)
        _guard(self.ctx, self.before, head.gate, "base")
        on_base = _decide(self.ctx, head.gate, attempt, command_tools(command))
        if on_base.status == "not-run":
            return not_comparable(head, f"on base: {on_base.evidence}")
        return judge_against_base(
            head,
            base_exit_code=attempt.exit_code,
            base_timed_out=attempt.timed_out,
            mentioned=sorted(mentioned),
        )

    def close(self) -> None:
        if self.ws is not None:
            remove_tree(self.ws.sandbox)


def _require(isolation: Isolation, required: bool) -> None:
    missing = isolation.missing()
    if required and missing:
        raise InputError(
            f"gate isolation required but unavailable: {', '.join(missing)}",
            fix="run on a machine with user namespaces and writable memory and pids cgroups, "
            "or drop --require-isolation / require_isolation",
        )


def prepare_context(
    top: Path,
    head_sha: str,
    *,
    settings: GateSettings,
    limits: GateLimits | None,
    timeout_s: float | None,
    isolation: IsolationMode,
    sandbox_root: Path | None,
    hidden: Sequence[Path],
    caches: GateCaches | None,
    require_isolation: bool,
    root: str | None = None,
) -> tuple[_Context, str, tuple[str, ...]]:
    """Everything a command run in a clone of `head_sha` needs (the gates and the `run`
    probes alike): limits, isolation, hidden paths, setup, dependency cache, secrets.
    `root` is the run's folder (manifest `root:`): commands run there, and the setup,
    lockfiles and project manifests are read there. Returns the context, the resolved head
    commit and the names in the run's folder at head."""
    if timeout_s is not None and timeout_s <= 0:
        raise InputError("the gate timeout must be positive", where=f"timeout_s={timeout_s}")
    chosen_limits = limits or gate_limits(settings)
    if timeout_s is not None:
        chosen_limits = chosen_limits.model_copy(update={"timeout_s": timeout_s})
    head = resolve_commit(top, head_sha)
    chosen = isolation_for(isolation)
    _require(chosen, require_isolation or bool(settings.require_isolation))
    sandbox_root_dir = _sandbox_root(sandbox_root, top)
    hidden_paths = (top, *(Path(p).resolve() for p in hidden))
    home, exposed = _private_home()
    head_paths = _top_level(top, head, root)
    if root is not None and not head_paths:
        raise InputError(
            f"root {root!r} is no folder of the repository at head {head[:12]}",
            where=f"root: {root}",
            fix="set root: to the run's own folder (relative to the repository top)",
        )
    manifests = {
        name: _blob(top, head, name, root).decode("utf-8", "replace")
        for name in head_paths
        if name in ("package.json", "pyproject.toml") or fnmatch.fnmatch(name, "requirements*.txt")
    }
    setup = resolve_setup(settings.setup, head_paths, manifests.get("pyproject.toml"))
    locks = {
        name: hashlib.sha256(_blob(top, head, name, root)).hexdigest()
        for name in lockfiles(head_paths)
    }
    extra_env = gate_env_values(settings.gate_env)
    deps = None
    if caches is not None:
        # One cache per framework run (its repository, and its folder when runs share one):
        # a run's setup is its own code, and what it leaves in the cache must never reach
        # another run's setup or gates.
        where = {"root": root} if root is not None else {}
        material = {"repo": str(top.resolve()), **where, "setup": setup, "locks": locks}
        deps = caches.dependencies / _digest(material)[:16]
    ctx = _Context(
        repo=top,
        isolation=chosen,
        hidden=hidden_paths + home,
        exposed=exposed,
        sandbox_root=sandbox_root_dir,
        root=root,
        limits=chosen_limits,
        extra_env=extra_env,
        secrets=secret_values(),
        setup=setup,
        deps_cache=deps if setup else None,
        declared=declared_dependencies(manifests),
        locks=locks,
    )
    return ctx, head, head_paths


def run_gates(
    repo: Path,
    head_sha: str,
    base_sha: str,
    commands: GateCommands,
    diff_paths: Iterable[str],
    *,
    timeout_s: float | None = None,
    build_command: str | None = None,
    rerun_on_base: Collection[GateName] = DEFAULT_RERUN_ON_BASE,
    limits: GateLimits | None = None,
    isolation: IsolationMode = "auto",
    sandbox_root: Path | None = None,
    settings: GateSettings = NO_SETTINGS,
    caches: GateCaches | None = None,
    hidden: Sequence[Path] = (),
    rerun: bool = False,
    require_isolation: bool = False,
    root: str | None = None,
) -> list[GateResult]:
    """Run setup (when configured), then build, lint, unit and e2e for one framework run.

    Returns the setup row first (only when a setup is configured), then one row per gate.
    `head_sha`/`base_sha` may be any revision. `diff_paths` is the diff surface.
    `build_command` overrides the manifest's build with the benchmark's fixed build command.
    `settings` carries setup, gate_env, gate_limits and require_isolation (manifest over
    benchmark); `limits`/`timeout_s` override its limits. `caches` enables the result and
    dependency caches; `rerun` ignores stored results. `hidden` paths (warehouse, benchmark
    dir) are invisible to commands, as is the evaluated repository. `root` is the run's
    folder (manifest `root:`): every command runs there, on head and on base. Raises
    `ReadOnlyViolationError` when a command changed the evaluated repository, `InputError`
    when isolation is required but missing.
    """
    top = require_repo(Path(repo))
    ctx, head, head_paths = prepare_context(
        top,
        head_sha,
        settings=settings,
        limits=limits,
        timeout_s=timeout_s,
        isolation=isolation,
        sandbox_root=sandbox_root,
        hidden=hidden,
        caches=caches,
        require_isolation=require_isolation,
        root=root,
    )
    base = resolve_commit(top, base_sha)
    setup = ctx.setup
    diff = sorted(set(diff_paths))
    key_material = {
        **head_key(ctx, head),
        "base": base,
        "rerun_on_base": sorted(rerun_on_base),
        "diff": diff,
    }
    pattern = mention_pattern(diff)
    overridden = build_command is not None and build_command != commands.build
    before = capture_state(top)
    wanted = gate_commands(commands, build_command)
    stored: dict[str, GateResult | None] = {
        gate: None
        if rerun or command is None
        else _load(caches, gate_key(key_material, gate, command))
        for gate, command in wanted.items()
    }
    setup_key = gate_key(key_material, SETUP, " && ".join(setup))
    setup_row = (None if rerun else _load(caches, setup_key)) if setup else None
    base_side = _Base(ctx, base, None, before)
    ws: _Workspace | None = None
    results: list[GateResult] = []
    try:
        for gate, command in wanted.items():
            if command is None:
                results.append(unscored_result(gate))
                continue
            cached = stored[gate]
            if cached is not None:
                results.append(cached)
                continue
            if ws is None:
                ws = _open(ctx, head)
                _guard(ctx, before, SETUP, "head")
                if ws.setup is not None:
                    setup_row = ws.setup
                    _store(caches, setup_key, setup_row)
            if not ws.ready and ws.setup is not None:
                results.append(_blocked(ctx, gate, command, ws.setup))
                continue
            attempt = _attempt(ctx, ws, command, setup=False)
            _guard(ctx, before, gate, "head")
            result = _decide(ctx, gate, attempt, command_tools(command))
            if gate == "build" and overridden:
                note = (
                    "the benchmark's fixed build command replaced the manifest's "
                    f"({commands.build or 'none'})"
                )
                result = result.model_copy(update={"notes": (*result.notes, note)})
            if result.status == "fail" and gate in rerun_on_base and base != head:
                if base_side.incomparable is None:
                    base_side.incomparable = _base_incomparable(
                        top, base, ctx.root, head_paths, setup
                    )
                mentioned = scan_log(attempt.log, pattern)
                result = base_side.compare(result, command, mentioned)
            _store(caches, gate_key(key_material, gate, command), result)
            results.append(result)
    finally:
        if ws is not None:
            remove_tree(ws.sandbox)
        base_side.close()
    return ([setup_row] if setup_row is not None else []) + results


def _base_incomparable(
    top: Path, base: str, root: str | None, head_paths: Collection[str], setup: Sequence[str]
) -> str | None:
    """`base_incomparable` in the run's folder; a folder the run created is not on base."""
    base_paths = _top_level(top, base, root)
    if root is not None and not base_paths:
        return f"base has no {root}/"
    return base_incomparable(head_paths, base_paths, setup)


def isolation_for(mode: IsolationMode) -> Isolation:
    return probe_isolation() if mode == "auto" else NO_ISOLATION
