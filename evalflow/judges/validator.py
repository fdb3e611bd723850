"""Evidence validation and the verdict rule engine shared by every judge.

Rules (SPEC core rules 1–2, DESIGN "Judges"):
- evidence must name a path inside the repository that exists at head, with a line range in
  bounds, and a quote (when given) that really appears in that range (`evidence_problem`);
- a judge's evidence is held to more (`strict_evidence_problem`): the cited range spans at
  most `max_lines` lines (`EVALFLOW_EVIDENCE_MAX_LINES`, default 40) and the quote is
  required and holds at least one meaningful code line (not blank, not only punctuation or
  braces), so an empty or one-character quote over a whole file proves nothing;
- evidence of the check's kind (`evidence_kinds.EvidenceRules`, when the caller gives the
  rules — `evalflow.io.evaluation.score_run` does for every judge): a MET stands only when one
  valid item is proof — a meaningful code line of the implementation for an I-check, an
  assertion inside a test case for a T-check; spec, PRD, README, comment or docstring lines
  stay as context and never prove a check;
- MET without any valid evidence, or without proof, ⇒ UNMET;
- UNMET without recorded searches ⇒ UNSCORED (not scored yet, never a silent zero);
- evidence outside the diff surface stays valid but is flagged (it may mean a wrong base);
- a judge's claimed searches are held to the searches evalflow really answered in that
  conversation (`claimed_search_problem`): a claimed grep/list_files hit count larger than
  what evalflow returned for that pattern (or a pattern it never ran) is a claim of hits
  evalflow never showed, and a MET resting on it is rejected by the judge (one retry, then
  UNSCORED). Claimed file reads are accepted when evalflow read that file.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Sequence

from evalflow.domain.models import Evidence, RunEvidence, Search, Verdict
from evalflow.errors import InputError
from evalflow.judges.evidence_kinds import EvidenceRules
from evalflow.repo.snapshot import RepoSnapshot

FLAG_OUTSIDE_DIFF = "evidence-outside-diff-surface"
FLAG_INVALID_EVIDENCE = "evidence-invalid"
FLAG_DEMOTED = "met-without-valid-evidence"
FLAG_NO_PROOF = "met-without-proof-of-its-kind"
FLAG_NO_SEARCHES = "unmet-without-searches"
FLAG_CLAIMED_SEARCH = "claimed-search-not-run"
MAX_LINES_ENV = "EVALFLOW_EVIDENCE_MAX_LINES"
DEFAULT_MAX_LINES = 40
# A meaningful line has a word character and is more than a token or two of syntax: "}",
# "x" or "));" cannot show a behaviour.
_MEANINGFUL = re.compile(r"(?=.*\w)\S.*\S.*\S")


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def path_problem(path: str) -> str | None:
    """Why `path` is no plain relative path inside the repository (absolute, `..`, not
    normalised), or None."""
    normal = posixpath.normpath(path)
    if path.startswith("/") or normal.startswith("..") or normal != path.removeprefix("./"):
        return f"{path}: not a plain path inside the repository"
    return None


def evidence_problem(evidence: Evidence, snapshot: RepoSnapshot) -> str | None:
    """Why this evidence cannot be accepted, or None when it is valid."""
    path = evidence.path
    normal = posixpath.normpath(path)
    if (problem := path_problem(path)) is not None:
        return problem
    if normal not in snapshot:
        if snapshot.root is not None:
            return f"{path}: no text file of this run at head (it is confined to {snapshot.root}/)"
        return f"{path}: no such text file at head"
    count = snapshot.files[normal].line_count
    if evidence.end_line > count:
        return f"{evidence.ref()}: beyond the end of the file ({count} lines)"
    if evidence.quote:
        lines = snapshot.lines(normal)[evidence.start_line - 1 : evidence.end_line]
        if _squash(evidence.quote) not in _squash("\n".join(lines)):
            return f"{evidence.ref()}: the quoted text is not in that range"
    return None


def _read_path(pattern: str) -> str:
    """The file a claimed read names: "read app/x.py:1-40", "app/x.py:3" or "app/x.py"."""
    path = pattern.strip().removeprefix("read ").strip()
    return posixpath.normpath(re.sub(r":\d+(-\d+)?$", "", path).removeprefix("./"))


def claimed_search_problem(claimed: Sequence[Search], executed: Sequence[Search]) -> str | None:
    """Why a judge's claimed searches cannot be trusted, or None (module docstring).

    `executed` are the searches evalflow answered in the conversation (`RepoTools.searches`):
    a claim with hits > 0 must name a pattern or glob evalflow ran and returned at least that
    many hits for, or a file evalflow read."""
    returned: dict[str, int] = {}
    read: set[str] = set()
    for search in executed:
        returned[search.pattern] = max(returned.get(search.pattern, 0), search.hits)
        if search.pattern.startswith("read ") or search.pattern == search.scope:
            read.add(search.scope)
    bad: list[str] = []
    for claim in claimed:
        if claim.hits <= 0 or _read_path(claim.pattern) in read:
            continue
        got = returned.get(claim.pattern)
        if got is None:
            bad.append(f"{claim.pattern!r} claims {claim.hits} hits but was never run")
        elif claim.hits > got:
            bad.append(f"{claim.pattern!r} claims {claim.hits} hits, evalflow returned {got}")
    if not bad:
        return None
    more = f" (+{len(bad) - 3} more)" if len(bad) > 3 else ""
    return "searches claim hits evalflow never returned: " + "; ".join(bad[:3]) + more


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
    *,
    rules: EvidenceRules | None = None,
) -> Verdict:
    """The verdict after evidence checks and the MET/UNMET/UNSCORED rules; `max_lines`
    defaults to `max_evidence_lines()`; `rules` holds a MET to evidence of its check's kind."""
    cap = max_evidence_lines() if max_lines is None else max_lines
    flags = list(verdict.flags)
    notes: list[str] = []
    valid: list[Evidence | RunEvidence] = []
    for item in verdict.evidence:
        if isinstance(item, RunEvidence):
            # Behavioural evidence evalflow recorded itself by running the check in the
            # sandbox (SPEC §5); there is no file line to check it against.
            valid.append(item)
            continue
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
    elif status == "MET" and rules is not None:
        reasons = [rules.proof_problem(verdict.check_id, item) for item in valid]
        if None not in reasons:
            status = "UNMET"
            valid = []
            flags.append(FLAG_NO_PROOF)
            shown = "; ".join(str(r) for r in reasons[:3])
            notes.append(f"MET without evidence of its kind is UNMET ({shown})")
    if status == "UNMET" and not verdict.searches:
        status = "UNSCORED"
        flags.append(FLAG_NO_SEARCHES)
        notes.append("UNMET without recorded searches is not scored yet")
    cited = [e for e in valid if isinstance(e, Evidence)]
    if any(e.path not in diff_paths for e in cited) and FLAG_OUTSIDE_DIFF not in flags:
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
