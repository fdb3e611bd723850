"""Loading River Review fixtures and a reviewer's findings (SPEC §3).

Two ways to get findings for the cases of a `cases.json`:

- a findings file: a JSON object mapping case name → array of findings (the finding format is
  documented in `evalflow.domain.rubric.review_fixtures`); a case without a key had no
  findings, a key that names no case is an input error;
- a reviewer command, run once per case without a shell: `shlex.split(command)` plus the
  absolute path of the case's diff as the last argument, in the directory of `cases.json`,
  with a timeout and a scrubbed environment (every variable whose name contains KEY, TOKEN,
  SECRET or PASSWORD is dropped) plus `EVALFLOW_REVIEW_CASE`, `EVALFLOW_REVIEW_PHASE` and
  `EVALFLOW_REVIEW_SKILLS` (comma-separated planSkills). It prints a JSON array of findings on
  stdout. A crash, a timeout or other output fails that case (`tool_gap`), not the whole run.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from evalflow.domain.rubric.review_fixtures import CaseOutput, ReviewCase
from evalflow.errors import InputError

SCRUBBED_NAME_PARTS: tuple[str, ...] = ("KEY", "TOKEN", "SECRET", "PASSWORD")
DEFAULT_TIMEOUT_SECONDS = 60.0
_STDERR_TAIL = 200

_CASES = TypeAdapter(list[ReviewCase])


@dataclass(frozen=True, slots=True)
class LoadedCases:
    """The cases of one `cases.json` and the absolute path of each case's diff."""

    path: Path
    cases: list[ReviewCase]
    diff_paths: dict[str, Path]


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read the {what} ({exc.strerror})", where=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{what} is not JSON ({exc.msg} at line {exc.lineno})", where=str(path)
        ) from exc


def load_cases(path: Path) -> LoadedCases:
    """The cases of `path`; every diffFile must exist (resolved against the file's directory)."""
    document = _read_json(path, "cases file")
    try:
        cases = _CASES.validate_python(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        place = "/".join(str(p) for p in first["loc"]) or "(root)"
        raise InputError(
            f"{place}: {first['msg']}",
            where=str(path),
            fix="cases.json is an array of {name, phase?, diffFile, planSkills, mustInclude, "
            "expectNoFindings?, minFindings?, maxFindings?, expectSeverity?}",
        ) from exc
    base = path.resolve().parent
    diff_paths: dict[str, Path] = {}
    for case in cases:
        diff = (base / case.diff_file).resolve()
        if not diff.is_file():
            raise InputError(
                f"case {case.name!r}: diffFile {case.diff_file!r} not found", where=str(path)
            )
        diff_paths[case.name] = diff
    return LoadedCases(path=path, cases=cases, diff_paths=diff_paths)


def load_findings(path: Path) -> dict[str, CaseOutput]:
    """case name → the findings listed for it in the findings file at `path`."""
    document = _read_json(path, "findings file")
    if not isinstance(document, dict):
        raise InputError(
            "the findings file must be a JSON object mapping case name → array of findings",
            where=str(path),
        )
    outputs: dict[str, CaseOutput] = {}
    for name, findings in document.items():
        if not isinstance(findings, list):
            raise InputError(f"findings of case {name!r} must be an array", where=str(path))
        outputs[name] = CaseOutput(findings=findings)
    return outputs


def scrubbed_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without any variable whose name contains KEY, TOKEN, SECRET or PASSWORD."""
    return {
        name: value
        for name, value in environ.items()
        if not any(part in name.upper() for part in SCRUBBED_NAME_PARTS)
    }


def _parse_stdout(stdout: str) -> CaseOutput:
    try:
        findings = json.loads(stdout)
    except json.JSONDecodeError as exc:
        return CaseOutput(tool_error=f"stdout is not JSON ({exc.msg})")
    if not isinstance(findings, list):
        return CaseOutput(tool_error="stdout is not a JSON array of findings")
    return CaseOutput(findings=findings)


def run_reviewer_case(
    argv: Sequence[str], case: ReviewCase, diff_path: Path, *, cwd: Path, timeout: float
) -> CaseOutput:
    """Run the reviewer on one case's diff and parse what it printed."""
    env = scrubbed_environment(os.environ)
    env["EVALFLOW_REVIEW_CASE"] = case.name
    env["EVALFLOW_REVIEW_PHASE"] = case.phase or ""
    env["EVALFLOW_REVIEW_SKILLS"] = ",".join(case.plan_skills)
    try:
        process = subprocess.Popen(
            [*argv, str(diff_path)],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    except OSError as exc:
        raise InputError(
            f"cannot run the reviewer command {argv[0]!r} ({exc.strerror})",
            fix="pass an executable on PATH or a path to one",
        ) from exc
    with process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            # The reviewer may have spawned helpers that keep its pipes open: end the group.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return CaseOutput(tool_error=f"timed out after {timeout:g} s")
    if process.returncode != 0:
        message = f"exit status {process.returncode}"
        tail = stderr.strip()[-_STDERR_TAIL:]
        return CaseOutput(tool_error=f"{message}: {tail}" if tail else message)
    return _parse_stdout(stdout)


def run_reviewer(
    command: str,
    loaded: LoadedCases,
    *,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    track: Callable[[Sequence[ReviewCase]], Iterable[ReviewCase]] = iter,
) -> dict[str, CaseOutput]:
    """case name → the reviewer command's output for it; `track` wraps the loop (progress)."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise InputError(f"cannot parse the reviewer command: {exc}") from exc
    if not argv:
        raise InputError("the reviewer command is empty")
    cwd = loaded.path.resolve().parent
    return {
        case.name: run_reviewer_case(
            argv, case, loaded.diff_paths[case.name], cwd=cwd, timeout=timeout
        )
        for case in track(loaded.cases)
    }
