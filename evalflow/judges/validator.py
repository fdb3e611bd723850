"""Evidence validation and the verdict rule engine shared by every judge.

Rules (SPEC core rules 1–2, DESIGN "Judges"):
- evidence must name a path inside the repository that exists at head, with a line range in
  bounds, and a quote (when given) that really appears in that range (`evidence_problem`);
- a judge's evidence is held to more (`strict_evidence_problem`): the cited range spans at
  most `max_lines` lines (`EVALFLOW_EVIDENCE_MAX_LINES`, default 40) and the quote is
  required and holds at least one meaningful code line (not blank, not only punctuation or
  braces), so an empty or one-character quote over a whole file proves nothing;
- MET without any valid evidence ⇒ UNMET;
- UNMET without recorded searches ⇒ UNSCORED (not scored yet, never a silent zero);
- evidence outside the diff surface stays valid but is flagged (it may mean a wrong base).
"""

from __future__ import annotations

import os
import posixpath
import re

from evalflow.domain.models import Evidence, Verdict
from evalflow.errors import InputError
from evalflow.repo.snapshot import RepoSnapshot

FLAG_OUTSIDE_DIFF = "evidence-outside-diff-surface"
FLAG_INVALID_EVIDENCE = "evidence-invalid"
FLAG_DEMOTED = "met-without-valid-evidence"
FLAG_NO_SEARCHES = "unmet-without-searches"
MAX_LINES_ENV = "EVALFLOW_EVIDENCE_MAX_LINES"
DEFAULT_MAX_LINES = 40
# A meaningful line has a word character and is more than a token or two of syntax: "}",
# "x" or "));" cannot show a behaviour.
_MEANINGFUL = re.compile(r"(?=.*\w)\S.*\S.*\S")


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def evidence_problem(evidence: Evidence, snapshot: RepoSnapshot) -> str | None:
    """Why this evidence cannot be accepted, or None when it is valid."""
    path = evidence.path
    normal = posixpath.normpath(path)
    if path.startswith("/") or normal.startswith("..") or normal != path.removeprefix("./"):
        return f"{path}: not a plain path inside the repository"
    if normal not in snapshot:
        return f"{path}: no such text file at head"
    count = snapshot.files[normal].line_count
    if evidence.end_line > count:
        return f"{evidence.ref()}: beyond the end of the file ({count} lines)"
    if evidence.quote:
        lines = snapshot.lines(normal)[evidence.start_line - 1 : evidence.end_line]
        if _squash(evidence.quote) not in _squash("\n".join(lines)):
            return f"{evidence.ref()}: the quoted text is not in that range"
    return None


def max_evidence_lines() -> int:
    """The cap on a cited range: `EVALFLOW_EVIDENCE_MAX_LINES`, else 40."""
    value = os.environ.get(MAX_LINES_ENV, "").strip()
    if not value:
        return DEFAULT_MAX_LINES
    if not value.isdigit() or int(value) < 1:
        raise InputError(
            f"{MAX_LINES_ENV}={value!r} is not a positive whole number of lines",
            fix=f"unset it (default {DEFAULT_MAX_LINES}) or set e.g. {MAX_LINES_ENV}=60",
        )
    return int(value)


def strict_evidence_problem(
    evidence: Evidence, snapshot: RepoSnapshot, max_lines: int
) -> str | None:
    """`evidence_problem`, plus the rules a judge's evidence must meet (module docstring)."""
    problem = evidence_problem(evidence, snapshot)
    if problem is not None:
        return problem
    span = evidence.end_line - evidence.start_line + 1
    if span > max_lines:
        return f"{evidence.ref()}: cites {span} lines (at most {max_lines}; cite the lines)"
    if not any(_MEANINGFUL.search(line) for line in (evidence.quote or "").splitlines()):
        return f"{evidence.ref()}: the quote has no meaningful code line"
    return None


def validate_verdict(
    verdict: Verdict,
    snapshot: RepoSnapshot,
    diff_paths: set[str],
    max_lines: int | None = None,
) -> Verdict:
    """The verdict after evidence checks and the MET/UNMET/UNSCORED rules; `max_lines`
    defaults to `max_evidence_lines()`."""
    cap = max_evidence_lines() if max_lines is None else max_lines
    flags = list(verdict.flags)
    notes: list[str] = []
    valid: list[Evidence] = []
    for item in verdict.evidence:
        problem = strict_evidence_problem(item, snapshot, cap)
        if problem is None:
            valid.append(item.model_copy(update={"path": posixpath.normpath(item.path)}))
        else:
            notes.append(f"rejected evidence {problem}")
            if FLAG_INVALID_EVIDENCE not in flags:
                flags.append(FLAG_INVALID_EVIDENCE)
    status = verdict.status
    if status == "MET" and not valid:
        status = "UNMET"
        flags.append(FLAG_DEMOTED)
        notes.append("MET without valid evidence is UNMET (no evidence, no credit)")
    if status == "UNMET" and not verdict.searches:
        status = "UNSCORED"
        flags.append(FLAG_NO_SEARCHES)
        notes.append("UNMET without recorded searches is not scored yet")
    if any(e.path not in diff_paths for e in valid) and FLAG_OUTSIDE_DIFF not in flags:
        flags.append(FLAG_OUTSIDE_DIFF)
    rationale = verdict.rationale
    if notes:
        rationale = f"{rationale} [validator: {'; '.join(notes)}]".strip()
    return verdict.model_copy(
        update={
            "status": status,
            "evidence": tuple(valid),
            "flags": tuple(flags),
            "rationale": rationale,
        }
    )
