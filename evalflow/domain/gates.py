"""Engineering gates G (SPEC §1): the gate result model and the rules that decide a gate.

Pure: running commands lives in `evalflow.gates`; this module only judges what a run
produced. The rules, in one place:

- A gate is ``pass`` (exit 0) or ``fail`` (non-zero exit, or killed at its timeout) only
  from an actual run of the manifest's exact command.
- ``not-run`` always carries a reason *and* a recorded probe attempt (the command that was
  tried and its output); the model refuses to exist otherwise, so a silent not-run cannot be
  produced. A gate with no command in the manifest is ``not-run`` whose probe is the manifest
  read itself (`manifest_probe`). A command whose executable (or ``python -m`` module) is not
  installed is environment unavailability, not the project's failure: ``not-run`` with the
  ``command -v`` / ``find_spec`` probe and its output.
- ``pre-existing``: the gate fails on head, the *same* command also fails on the base commit
  with the same exit code and the same timed-out flag, and the head's failing output names no
  file of the diff surface. That is "a pre-existing unrelated toolchain failure in code the
  change did not touch" — an out-of-scope note, not ✗. Any other failure stays ``fail``;
  mentions are matched generously (see `mention_pattern`), so doubt resolves towards ✗.
- Only ``fail`` is a confirmed ✗ and triggers Adjusted Final (`confirmed_failure`);
  ``not-run`` is a blind spot and ``pre-existing`` a note, neither adjusts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

import pandas as pd
from pydantic import Field, model_validator

from evalflow.domain.models import Frozen, GateName

GateStatus = Literal["pass", "fail", "not-run", "pre-existing"]

GATES: tuple[GateName, ...] = ("build", "lint", "unit", "e2e")
NO_COMMAND_REASON = "no command in the manifest"

GATE_RESULT_COLUMNS = [
    "run_key",
    "gate",
    "command",
    "status",
    "confirmed",
    "exit_code",
    "duration_s",
    "timed_out",
    "network_isolated",
    "target_read_only",
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
    """What was tried to find out whether a gate can run, and what came back."""

    command: str = Field(min_length=1)
    output: str
    exit_code: int | None = Field(
        default=None, description="the probe's exit code; None when the probe ran no process"
    )


class GateResult(Frozen):
    """One engineering gate of one framework run."""

    gate: GateName
    command: str | None = Field(
        description="the exact command run; None when the manifest has none"
    )
    status: GateStatus
    exit_code: int | None = Field(
        default=None, description="the head run's exit code (negative: killed by that signal)"
    )
    duration_s: float = Field(default=0.0, ge=0)
    timed_out: bool = False
    network_isolated: bool = Field(
        default=False, description="the command ran without network access"
    )
    target_read_only: bool = Field(
        default=False, description="the evaluated checkout was mounted read-only for the command"
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
        if self.status == "not-run":
            if not (self.reason and self.reason.strip()):
                raise ValueError("a not-run gate needs a reason")
            if self.probe is None:
                raise ValueError("a not-run gate needs the recorded probe attempt (SPEC G)")
            if ran or self.timed_out:
                raise ValueError("a not-run gate has no exit code and cannot have timed out")
            return self
        if self.probe is not None:
            raise ValueError("only a not-run gate carries a probe")
        if self.command is None or not ran:
            raise ValueError(f"status {self.status!r} needs the command and its exit code")
        failed = self.timed_out or self.exit_code != 0
        if self.status == "pass" and failed:
            raise ValueError("a passing gate exits 0 within its timeout")
        if self.status in ("fail", "pre-existing") and not failed:
            raise ValueError(f"status {self.status!r} needs a non-zero exit or a timeout")
        if self.status == "pre-existing" and not (
            self.base_exit_code is not None and (self.base_timed_out or self.base_exit_code != 0)
        ):
            raise ValueError("pre-existing needs the failing run on the base commit")
        return self

    @property
    def confirmed(self) -> bool:
        """A confirmed ✗: the only status that triggers Adjusted Final."""
        return self.status == "fail"


def outcome_status(exit_code: int, timed_out: bool) -> Literal["pass", "fail"]:
    return "pass" if exit_code == 0 and not timed_out else "fail"


def manifest_probe(gate: GateName) -> ProbeAttempt:
    """The probe of a gate the manifest gives no command for: the manifest read itself."""
    return ProbeAttempt(
        command=f"read gates.{gate} from the run manifest",
        output=f"gates.{gate} is not set in the run manifest; there is no command to run",
    )


def no_command_result(gate: GateName) -> GateResult:
    return GateResult(
        gate=gate,
        command=None,
        status="not-run",
        reason=NO_COMMAND_REASON,
        probe=manifest_probe(gate),
    )


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
    """A regex finding diff-surface paths in tool output; None for an empty surface."""
    names = sorted({a for p in diff_paths if p for a in _aliases(p)}, key=lambda s: (-len(s), s))
    if not names:
        return None
    alternation = "|".join(re.escape(n) for n in names)
    return re.compile(rf"(?<![\w.\-])({alternation})(?!\w)")


def mentioned_paths(text: str, pattern: re.Pattern[str] | None) -> set[str]:
    return set() if pattern is None else {m.group(1) for m in pattern.finditer(text)}


def judge_against_base(
    head: GateResult,
    *,
    base_exit_code: int,
    base_timed_out: bool,
    mentioned: Sequence[str],
) -> GateResult:
    """Decide a failing head gate after the same command ran on the base commit."""
    if head.status != "fail":
        raise ValueError("only a failing gate is re-run on the base commit")
    fields = {"base_exit_code": base_exit_code, "base_timed_out": base_timed_out}
    base_how = "timed out" if base_timed_out else f"exit {base_exit_code}"
    if outcome_status(base_exit_code, base_timed_out) == "pass":
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
    """True iff at least one gate is a confirmed ✗ (not-run and pre-existing never count)."""
    return any(result.confirmed for result in results)


def gates_frame(run_key: str, results: Sequence[GateResult]) -> pd.DataFrame:
    """Warehouse table `gates`: one row per gate, snake_case columns."""
    rows = [
        {
            "run_key": run_key,
            "gate": r.gate,
            "command": r.command,
            "status": r.status,
            "confirmed": r.confirmed,
            "exit_code": r.exit_code,
            "duration_s": r.duration_s,
            "timed_out": r.timed_out,
            "network_isolated": r.network_isolated,
            "target_read_only": r.target_read_only,
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
    for column in ("command", "reason", "probe_command", "probe_output"):
        frame[column] = frame[column].astype("string")
    frame["base_timed_out"] = frame["base_timed_out"].astype("boolean")
    for column in ("confirmed", "timed_out", "network_isolated", "target_read_only"):
        frame[column] = frame[column].astype(bool)
    frame["duration_s"] = frame["duration_s"].astype("float64")
    return frame


def failed_by_run(frame: pd.DataFrame) -> dict[str, bool]:
    """run_key → a gate is a confirmed ✗, from a `gates` frame (rollup's gates_failed)."""
    if frame.empty:
        return {}
    return {str(k): bool(v) for k, v in frame.groupby("run_key")["confirmed"].any().items()}
