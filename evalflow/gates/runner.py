"""Run the engineering gates of one framework run, each in a throw-away clone (SPEC §1 G).

For every gate (build, lint, unit, e2e, in that order), with the manifest's exact command:

1. clone the evaluated repository into a fresh sandbox directory
   (``git clone --no-hardlinks --no-checkout``, ``checkout --detach <sha>``, remote removed so
   the clone holds no path back to the original) — never a worktree, which would write into
   the evaluated repository's ``.git``;
2. probe the command's tooling: ``command -v <executable>`` and, for ``python -m <module>``,
   ``find_spec`` of the top-level module. Missing ⇒ ``not-run`` with that probe recorded
   (environment unavailability is not the project's failure);
3. run the command in the sandbox (`evalflow.gates.sandbox`); exit 0 ⇒ ``pass``, otherwise or
   at the timeout ⇒ ``fail``;
4. a failing gate listed in ``rerun_on_base`` runs again, the same way, on the base commit;
   `evalflow.domain.gates.judge_against_base` then decides ``fail`` or ``pre-existing``;
5. delete the sandbox, and check with the read-only guard that the evaluated repository is
   byte-identical to before. A change raises `ReadOnlyViolationError` naming the gate: the
   run cannot be scored on a target a gate rewrote (SPEC core rule 5).
"""

from __future__ import annotations

import re
import shlex
import sys
import tempfile
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evalflow.domain.gates import (
    GATES,
    GateResult,
    ProbeAttempt,
    judge_against_base,
    mention_pattern,
    no_command_result,
    outcome_status,
)
from evalflow.domain.models import GateCommands, GateName
from evalflow.errors import InputError, ReadOnlyViolationError
from evalflow.gates.sandbox import (
    NO_ISOLATION,
    GateLimits,
    Isolation,
    execute,
    gate_env,
    new_sandbox,
    probe_isolation,
    read_tail,
    remove_tree,
    scan_log,
    scrub,
    secret_values,
)
from evalflow.repo.git import clone_for_gate, require_repo, resolve_commit
from evalflow.repo.guard import RepoState, capture_state, verify_unchanged

IsolationMode = Literal["auto", "none"]

DEFAULT_TIMEOUT_S = 600.0
DEFAULT_RERUN_ON_BASE: tuple[GateName, ...] = ("lint", "unit", "e2e")
_PROBE_TIMEOUT_S = 60.0
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = re.compile(r"python[0-9.]*")
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SHELL_META = frozenset(";&|<>()$`\\\"'*?[]{}~!#")


@dataclass(frozen=True)
class _Context:
    repo: Path
    isolation: Isolation
    read_only_paths: tuple[Path, ...]
    sandbox_root: Path
    timeout_s: float
    limits: GateLimits
    secrets: tuple[str, ...]


@dataclass(frozen=True)
class _Run:
    result: GateResult
    mentioned: frozenset[str]


def _entry_point(command: str) -> tuple[str, str | None] | None:
    """The executable a command starts (and the module of ``python -m``), if plainly stated."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)
    if not words or _SHELL_META.intersection(words[0]):
        return None
    exe = words[0]
    module = words[2].split(".")[0] if len(words) > 2 and words[1] == "-m" else ""
    python_module = _PYTHON.fullmatch(Path(exe).name) and _MODULE.fullmatch(module)
    return exe, (module if python_module else None)


def _clone(repo: Path, sha: str, dest: Path) -> None:
    # From evalflow's mirror, never the evaluated repository: no filter or hook it names runs.
    clone_for_gate(repo, sha, dest)


def _sandbox_failure(ctx: _Context, output: str, exit_code: int) -> tuple[str, ProbeAttempt]:
    paths = " ".join(str(p) for p in ctx.read_only_paths)
    return (
        "the sandbox could not be set up (read-only mount of the evaluated checkout failed)",
        ProbeAttempt(
            command=f"{' '.join(ctx.isolation.prefix)} mount --bind -o ro <each of: {paths}>",
            output=output or "no error output",
            exit_code=exit_code,
        ),
    )


def _probe_tooling(
    ctx: _Context, command: str, clone: Path, env: dict[str, str], sandbox: Path
) -> tuple[str, ProbeAttempt] | None:
    """A (reason, probe) when the command's tooling is missing, else None."""
    entry = _entry_point(command)
    if entry is None:
        return None
    exe, module = entry
    probes = [
        (
            f"command -v {shlex.quote(exe)}",
            f"`{exe}` is not installed",
            f"{exe}: not found on PATH={env.get('PATH', '')}",
        )
    ]
    if module is not None:
        check = (
            f'import importlib.util, sys; sys.exit(importlib.util.find_spec("{module}") is None)'
        )
        probes.append(
            (
                f"{shlex.quote(exe)} -c {shlex.quote(check)}",
                f"Python module `{module}` is not installed for `{exe}`",
                f"No module named {module!r}",
            )
        )
    for probe_command, missing, silent in probes:
        log = sandbox / "probe.log"
        run = execute(
            probe_command,
            cwd=clone,
            env=env,
            log=log,
            isolation=ctx.isolation,
            read_only_paths=ctx.read_only_paths,
            timeout_s=min(ctx.timeout_s, _PROBE_TIMEOUT_S),
            limits=ctx.limits,
        )
        output = read_tail(log, lines=20, chars=2000, secrets=ctx.secrets)
        if not run.started:
            return _sandbox_failure(ctx, output, run.exit_code)
        if run.exit_code != 0 and not run.timed_out:
            reason = f"{missing} (environment unavailable, not a project failure)"
            recorded = ProbeAttempt(
                command=probe_command,
                output=scrub(output or silent, ctx.secrets),
                exit_code=run.exit_code,
            )
            return reason, recorded
    return None


def _run_once(
    ctx: _Context, gate: GateName, command: str, sha: str, pattern: re.Pattern[str] | None
) -> _Run:
    sandbox = new_sandbox(ctx.sandbox_root)
    shown = scrub(command, ctx.secrets)
    try:
        clone = sandbox / "clone"
        _clone(ctx.repo, sha, clone)
        env = gate_env(sandbox)
        missing = _probe_tooling(ctx, command, clone, env, sandbox)
        if missing is not None:
            reason, probe = missing
            result = GateResult(
                gate=gate,
                command=shown,
                status="not-run",
                reason=reason,
                probe=probe,
                network_isolated=ctx.isolation.network,
                target_read_only=ctx.isolation.read_only,
            )
            return _Run(result, frozenset())
        log = sandbox / "gate.log"
        run = execute(
            command,
            cwd=clone,
            env=env,
            log=log,
            isolation=ctx.isolation,
            read_only_paths=ctx.read_only_paths,
            timeout_s=ctx.timeout_s,
            limits=ctx.limits,
        )
        tail = read_tail(
            log, lines=ctx.limits.tail_lines, chars=ctx.limits.tail_chars, secrets=ctx.secrets
        )
        if not run.started:
            reason, probe = _sandbox_failure(ctx, tail, run.exit_code)
            result = GateResult(
                gate=gate, command=shown, status="not-run", reason=reason, probe=probe
            )
            return _Run(result, frozenset())
        status = outcome_status(run.exit_code, run.timed_out)
        notes = list(ctx.isolation.notes())
        if run.timed_out:
            notes.append(f"killed at its {ctx.timeout_s:g} s timeout")
        result = GateResult(
            gate=gate,
            command=shown,
            status=status,
            exit_code=run.exit_code,
            duration_s=run.duration_s,
            timed_out=run.timed_out,
            network_isolated=ctx.isolation.network,
            target_read_only=ctx.isolation.read_only,
            output_tail=tail,
            notes=tuple(notes),
        )
        mentioned = scan_log(log, pattern) if status == "fail" else set()
        return _Run(result, frozenset(mentioned))
    finally:
        remove_tree(sandbox)


def _guard(ctx: _Context, before: RepoState, gate: GateName, where: str) -> None:
    try:
        verify_unchanged(ctx.repo, before)
    except ReadOnlyViolationError as exc:
        raise ReadOnlyViolationError(
            f"gate {gate} ({where}) changed the evaluated repository: {exc.what}",
            where=exc.where,
            fix=exc.fix,
        ) from exc


def _sandbox_root(sandbox_root: Path | None, repo: Path) -> Path:
    root = Path(sandbox_root or tempfile.gettempdir()).resolve()
    if root.is_relative_to(repo.resolve()):
        raise InputError(
            "the gate sandbox would live inside the evaluated repository",
            where=str(root),
            fix="choose a sandbox directory (or TMPDIR) outside the repository",
        )
    root.mkdir(parents=True, exist_ok=True)
    return root


def _read_only_paths(repo: Path, root: Path) -> tuple[Path, ...]:
    """The evaluated checkout, plus evalflow's interpreter prefix when the sandbox is not in it."""
    paths = [repo.resolve()]
    prefix = Path(sys.prefix).resolve()
    if not root.is_relative_to(prefix) and prefix != paths[0]:
        paths.append(prefix)
    return tuple(paths)


def gate_commands(
    commands: GateCommands, build_command: str | None = None
) -> dict[GateName, str | None]:
    """The command of each gate; `build_command` is the benchmark's fixed build, if it has one."""
    chosen: dict[GateName, str | None] = {gate: getattr(commands, gate) for gate in GATES}
    if build_command is not None:
        chosen["build"] = build_command
    return chosen


def run_gates(
    repo: Path,
    head_sha: str,
    base_sha: str,
    commands: GateCommands,
    diff_paths: Iterable[str],
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    build_command: str | None = None,
    rerun_on_base: Collection[GateName] = DEFAULT_RERUN_ON_BASE,
    limits: GateLimits | None = None,
    isolation: IsolationMode = "auto",
    sandbox_root: Path | None = None,
) -> list[GateResult]:
    """Run build, lint, unit and e2e for one framework run; one `GateResult` per gate.

    `head_sha`/`base_sha` may be any revision (tag, branch, SHA). `diff_paths` is the diff
    surface (repo-relative paths). `build_command` overrides the manifest's build with the
    benchmark's fixed build command. `isolation="none"` skips namespaces (the results then
    record ``network_isolated=False``). Raises `ReadOnlyViolationError` when a gate changed
    the evaluated repository.
    """
    if timeout_s <= 0:
        raise InputError("the gate timeout must be positive", where=f"timeout_s={timeout_s}")
    top = require_repo(Path(repo))
    head = resolve_commit(top, head_sha)
    base = resolve_commit(top, base_sha)
    root = _sandbox_root(sandbox_root, top)
    ctx = _Context(
        repo=top,
        isolation=probe_isolation() if isolation == "auto" else NO_ISOLATION,
        read_only_paths=_read_only_paths(top, root),
        sandbox_root=root,
        timeout_s=timeout_s,
        limits=limits or GateLimits(),
        secrets=secret_values(),
    )
    pattern = mention_pattern(diff_paths)
    overridden = build_command is not None and build_command != commands.build
    before = capture_state(top)
    results: list[GateResult] = []
    for gate, command in gate_commands(commands, build_command).items():
        if command is None:
            results.append(no_command_result(gate))
            continue
        run = _run_once(ctx, gate, command, head, pattern)
        _guard(ctx, before, gate, "head")
        result = run.result
        if gate == "build" and overridden:
            note = (
                "the benchmark's fixed build command replaced the manifest's "
                f"({commands.build or 'none'})"
            )
            result = result.model_copy(update={"notes": (*result.notes, note)})
        if result.status == "fail" and gate in rerun_on_base and base != head:
            on_base = _run_once(ctx, gate, command, base, None).result
            _guard(ctx, before, gate, "base")
            if on_base.exit_code is None:
                note = f"could not re-run on the base commit: {on_base.reason}; stays ✗"
                result = result.model_copy(update={"notes": (*result.notes, note)})
            else:
                result = judge_against_base(
                    result,
                    base_exit_code=on_base.exit_code,
                    base_timed_out=on_base.timed_out,
                    mentioned=sorted(run.mentioned),
                )
        results.append(result)
    return results
