"""Executable acceptance checks (`run:` probes), the pure part: what a run showed, whether it
meets its expectation, the `acceptance_runs` rows, and how a verdict takes them in.

SPEC §5 ("What counts as evidence"): an observable behaviour at an interface the PRD fixes,
proven by running it in the sandbox and recording command, expectation and output, is
evidence for an I-check. So a check whose `run` probes all ran and passed is MET with that
behavioural evidence; one whose run failed an expectation after setup, build and (for HTTP)
the server came up is UNMET — the probe exercises the interface the PRD fixes, so its failure
holds for any implementation. A run the environment stopped (setup or build not passing, no
network namespace, a timeout, a limit, a server that never listened) proves nothing either
way: it is *not run*, with its reason, and the check keeps what the other probes say.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from evalflow.domain.models import (
    Check,
    Frozen,
    JsonScalar,
    RunEvidence,
    RunExpectation,
    RunProbe,
    Search,
    Verdict,
)
from evalflow.domain.patterns import compile_untrusted
from evalflow.domain.portability import (
    FLAG_NO_PORTABLE_PROOF,
    FLAG_PROVEN_ABSENT,
    FLAG_RUN_FAILED,
)

# How much of an output is kept in the table (after masking secrets).
EXCERPT_CHARS = 1_000
# What the search probes said about absence no longer applies once a run decided.
_SEARCH_FLAGS = frozenset({FLAG_NO_PORTABLE_PROOF, FLAG_PROVEN_ABSENT})
ACCEPTANCE_COLUMNS = [
    "check_id",
    "probe",
    "command",
    "expectation",
    "passed",
    "exit_code",
    "http_status",
    "failures",
    "output_excerpt",
    "not_run_reason",
]


def shell_command(command: str | tuple[str, ...]) -> str:
    """The command as the sandbox's shell runs it: an argv list is quoted word by word."""
    return command if isinstance(command, str) else shlex.join(command)


def command_text(probe: RunProbe) -> str:
    """What a reader sees as the run: the shell command, or the HTTP request line."""
    if probe.http is not None:
        lines = [f"{call.method} {call.path}" for call in probe.http]
        runs = [(line, len(list(group))) for line, group in groupby(lines)]
        return "; ".join(line if n == 1 else f"{line} ×{n}" for line, n in runs)
    return shell_command(probe.command or "")


def _json_text(value: JsonScalar) -> str:
    return json.dumps(value, ensure_ascii=False)


def expectation_text(expect: RunExpectation) -> str:
    """The expectation in one line, every given key in a fixed order."""
    parts: list[str] = []
    if expect.exit_code is not None:
        parts.append(f"exit {expect.exit_code}")
    if expect.status is not None:
        parts.append(f"status {expect.status}")
    parts += [f"header {name} ⊇ {text!r}" for name, text in sorted(expect.headers.items())]
    for stream in ("stdout", "stderr"):
        parts += [f"{stream} ⊇ {text!r}" for text in getattr(expect, stream)]
        parts += [f"{stream} ~ /{p}/" for p in getattr(expect, f"{stream}_matches")]
    parts += [f"json {path} = {_json_text(v)}" for path, v in sorted(expect.json_fields.items())]
    for file in expect.files:
        checks = [f"⊇ {t!r}" for t in file.contains] + [f"~ /{p}/" for p in file.matches]
        parts.append(f"file {file.path} {' '.join(checks) or 'exists'}")
    return "; ".join(parts)


@dataclass(frozen=True)
class Observation:
    """What one execution showed. For an HTTP call `stdout` is the response body.

    `files` maps each expected file to its text, or None when it is missing (or not a
    regular file inside the clone)."""

    exit_code: int | None = None
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    files: Mapping[str, str | None] = field(default_factory=dict)


_MISSING = object()


def json_at(document: Any, dotted: str) -> Any:
    """The value at `a.b.0` in a parsed JSON document (a digit indexes a list), or `_MISSING`."""
    node = document
    for part in dotted.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


def _same_json(got: Any, wanted: JsonScalar) -> bool:
    # JSON equality with types: true is not 1, "201" is not 201; 1 equals 1.0.
    if isinstance(wanted, bool) or isinstance(got, bool):
        return type(got) is type(wanted) and got == wanted
    if isinstance(wanted, int | float) and isinstance(got, int | float):
        return got == wanted
    return type(got) is type(wanted) and got == wanted


def _text_failures(label: str, text: str, contains: Sequence[str], matches: Sequence[str]):
    out = [f"{label} lacks {t!r}" for t in contains if t not in text]
    out += [
        f"{label} does not match /{p}/" for p in matches if not compile_untrusted(p).search(text)
    ]
    return out


def unmet_expectations(expect: RunExpectation, seen: Observation) -> list[str]:
    """Every expectation the observation does not meet, one line each (empty: it passed)."""
    failures: list[str] = []
    if expect.exit_code is not None and seen.exit_code != expect.exit_code:
        failures.append(f"exit {seen.exit_code}, expected {expect.exit_code}")
    if expect.status is not None and seen.status != expect.status:
        failures.append(f"status {seen.status}, expected {expect.status}")
    headers = {name.lower(): value for name, value in seen.headers.items()}
    for name, text in sorted(expect.headers.items()):
        value = headers.get(name.lower())
        if value is None or text not in value:
            failures.append(f"header {name} is {value!r}, expected to hold {text!r}")
    failures += _text_failures("stdout", seen.stdout, expect.stdout, expect.stdout_matches)
    failures += _text_failures("stderr", seen.stderr, expect.stderr, expect.stderr_matches)
    if expect.json_fields:
        try:
            document = json.loads(seen.stdout)
        except ValueError:
            failures.append("stdout is not JSON")
        else:
            for path, wanted in sorted(expect.json_fields.items()):
                got = json_at(document, path)
                if got is _MISSING:
                    failures.append(f"json {path} is missing")
                elif not _same_json(got, wanted):
                    failures.append(
                        f"json {path} = {json.dumps(got)[:80]}, expected {_json_text(wanted)}"
                    )
    for file in expect.files:
        text = seen.files.get(file.path)
        if text is None:
            failures.append(f"file {file.path} was not written")
        else:
            failures += _text_failures(f"file {file.path}", text, file.contains, file.matches)
    return failures


def excerpt(text: str, chars: int = EXCERPT_CHARS) -> str:
    """The start of an output, bounded (the start is where a response's status and body are)."""
    return text if len(text) <= chars else f"{text[:chars]}[… {len(text) - chars} more characters]"


class AcceptanceRun(Frozen):
    """One `run` probe of one check on one framework run: a row of `acceptance_runs`.

    `passed` is None when the probe did not run (`not_run_reason` says why)."""

    check_id: str
    probe: int
    command: str
    expectation: str
    passed: bool | None
    exit_code: int | None = None
    http_status: int | None = None
    failures: str = ""
    output_excerpt: str = ""
    not_run_reason: str | None = None


def not_run(
    check_id: str, number: int, probe: RunProbe, reason: str, output: str = ""
) -> AcceptanceRun:
    """The row of a probe the environment stopped; `output` is the attempt's excerpt."""
    return AcceptanceRun(
        check_id=check_id,
        probe=number,
        command=command_text(probe),
        expectation=expectation_text(probe.expect),
        passed=None,
        output_excerpt=output,
        not_run_reason=reason,
    )


def decided(
    check_id: str, number: int, probe: RunProbe, seen: Observation, output: str
) -> AcceptanceRun:
    """The row of a probe that ran: passed or not, by its expectation."""
    failures = unmet_expectations(probe.expect, seen)
    return AcceptanceRun(
        check_id=check_id,
        probe=number,
        command=command_text(probe),
        expectation=expectation_text(probe.expect),
        passed=not failures,
        exit_code=seen.exit_code,
        http_status=seen.status,
        failures="; ".join(failures),
        output_excerpt=output,
    )


def acceptance_rows(runs: Sequence[AcceptanceRun]) -> list[dict[str, Any]]:
    """The table's rows in a fixed order (check, probe), whatever order they ran in."""
    ordered = sorted(runs, key=lambda r: (r.check_id, r.probe))
    return [r.model_dump(include=set(ACCEPTANCE_COLUMNS)) for r in ordered]


def observed(run: AcceptanceRun) -> str:
    """What a verdict cites of a passing run: its exit code or HTTP status, with the
    expectation it met. The output itself stays in `acceptance_runs`: a program's output may
    hold random codes or the time, and a verdict must be the same on every evaluation."""
    if run.http_status is not None:
        return f"HTTP {run.http_status}, expectation met"
    return f"exit {run.exit_code}, expectation met"


def _search(run: AcceptanceRun) -> Search:
    return Search(
        pattern=f"run `{run.command}`",
        scope=f"sandbox execution at head, expecting {run.expectation}",
        hits=int(bool(run.passed)),
    )


def with_runs(verdict: Verdict, check: Check, runs: Sequence[AcceptanceRun]) -> Verdict:
    """`verdict` (from the check's search probes) after its `run` probes (module docstring).

    All ran and passed ⇒ MET, the runs as behavioural evidence beside any file:line the
    search probes cited; one ran and failed ⇒ UNMET (flag `run-failed`), the runs recorded as
    searches; either way the search probes' absence flags are dropped. Any not run (and none
    failed) ⇒ the search probes' verdict, with the reason appended."""
    if not check.run:
        return verdict
    mine = {r.probe: r for r in runs if r.check_id == check.id}
    ordered = [mine.get(n) for n in range(1, len(check.run) + 1)]
    done = [r for r in ordered if r is not None and r.passed is not None]
    searches = (*verdict.searches, *(_search(r) for r in done))
    failed = [r for r in done if not r.passed]
    kept = tuple(flag for flag in verdict.flags if flag not in _SEARCH_FLAGS)
    if failed:
        why = "; ".join(f"run `{r.command}`: {r.failures}" for r in failed)
        return verdict.model_copy(
            update={
                "status": "UNMET",
                "evidence": (),
                "searches": searches,
                "flags": (*kept, FLAG_RUN_FAILED),
                "rationale": f"the behaviour the PRD fixes was run and failed: {why}",
            }
        )
    if len(done) == len(check.run):
        behaviour = tuple(
            RunEvidence(command=r.command, expectation=r.expectation, output=observed(r))
            for r in done
        )
        cited = verdict.evidence if verdict.status == "MET" else ()
        return verdict.model_copy(
            update={
                "status": "MET",
                "evidence": (*behaviour, *cited),
                "searches": searches,
                "flags": kept,
                "rationale": "ran in the sandbox and met its expectation: "
                + "; ".join(f"`{r.command}` ⇒ {r.expectation}" for r in done),
            }
        )
    reasons = [
        f"run probe {n} not run: {r.not_run_reason if r else 'no acceptance run recorded'}"
        for n, r in enumerate(ordered, start=1)
        if r is None or r.passed is None
    ]
    rationale = f"{verdict.rationale} [{'; '.join(reasons)}]".strip()
    return verdict.model_copy(update={"searches": searches, "rationale": rationale})
