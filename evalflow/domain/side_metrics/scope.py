"""Scope S (SPEC §1 Side metrics): pass / partial / fail by traceability, with findings.

S is a judgement (SPEC §5): the verdict comes only from an adjudication (the labels file's
`scope` section, `ScopeLabels`). The lexicon below only *proposes*: every finding it derives
from wording is stored with status `candidate`, and without an adjudicated verdict S is
NULL with reason `unadjudicated — N candidates` — never `fail` from a keyword hit. Facts the
artifacts state themselves (an unchecked task; a spec line deferring work) are `confirmed` /
`note`; a label confirms or rejects a candidate by its `file:line`, or adds a finding.

Production code here means the code files the diff added or changed, test files excluded;
for a new file every line counts as added. Comment lines and bare string lines (docstrings)
are skipped when scanning for keywords, so a module explaining what it does *not* do is
never flagged.

Findings, each with `file:line`:
- out_of_scope (fail, candidate): an added code line holds a whole out-of-scope phrase of
  the PRD, or a code word starting with one of the benchmark's frozen keywords
  (`exclusions`: no camelCase splitting, no keyword derived from an item's words); one
  candidate per file, at its first such line.
- rogue_build (fail, candidate): a new production module whose name and top-level definitions share
  no word with the sanctioned vocabulary (PRD ACs and story titles ∪ valid additions) and
  that is not glue (`lexicon.INFRASTRUCTURE_MODULES`: app, routes, models, db, config, …);
  or an added route declaration whose path (parameters dropped) holds a word outside that
  vocabulary (a compound of two vocabulary words, `signup`, counts as inside). Files and
  lines already flagged out-of-scope are not reported twice.
- plan_drift (partial): an unchecked task of tasks.md (confirmed: the run says so; reported
  on the deepest unchecked task, not on its unchecked parents); a valid addition whose
  frozen keywords find no code (E `pending`: confirmed); one whose keywords were derived
  from its text and find nothing (E `unadjudicated` without a line: candidate). An
  `unsearched` one is no finding: no search, no zero.
- deferred (no deduction): a spec line or valid addition that defers work (`lexicon.
  DEFERRAL`, or an item of a "Deferred" section); logged so the report shows it, with the
  PRD AC it traces to when there is one.
Verdict (adjudicated only): the label's verdict, which may not be milder than its confirmed
findings; without one, the worst confirmed effect once no candidate is left unreviewed
(fail, else partial, else pass); otherwise NULL. Without spec files: `n/a — no derived spec`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict

from evalflow.domain.models import PRD
from evalflow.domain.side_metrics.common import NO_SPEC, SCORED, candidates
from evalflow.domain.side_metrics.elicitation import (
    HEURISTIC_JUDGE,
    LABELS_JUDGE,
    ElicitationResult,
    ElicitationRubric,
    ScopeLabels,
    best_ac,
    out_of_scope_of,
    prd_id_pattern,
    prd_vocabulary,
)
from evalflow.domain.side_metrics.lexicon import (
    DEFERRAL,
    DEFINITION,
    INFRASTRUCTURE_MODULES,
    NON_CODE_LINE,
    ROUTE_DECLARATION,
    STOPWORDS,
    content_tokens,
    stem,
    words,
)
from evalflow.domain.side_metrics.spec_artifacts import HEADING, LIST_ITEM, SpecArtifacts
from evalflow.errors import InputError

FindingKind = Literal["out_of_scope", "rogue_build", "plan_drift", "deferred"]
Effect = Literal["fail", "partial", "none"]
FindingStatus = Literal["confirmed", "candidate", "rejected", "note"]
Verdict = Literal["pass", "partial", "fail"]
FINDING_COLUMNS = ["kind", "effect", "status", "description", "ref", "judge"]
SCOPE_SUMMARY_COLUMNS = [
    "status",
    "verdict",
    "reason",
    "n_out_of_scope",
    "n_rogue_build",
    "n_plan_drift",
    "n_deferred",
    "n_candidates",
    "judge",
]
_SEVERITY: dict[str, int] = {"pass": 0, "partial": 1, "fail": 2}
_ROUTE_PARAM = re.compile(r"\{[^}]*\}|<[^>]*>|:\w+")
_EFFECT: dict[str, Effect] = {
    "out_of_scope": "fail",
    "rogue_build": "fail",
    "plan_drift": "partial",
    "deferred": "none",
}


class ProductionChange(BaseModel):
    """A production code file the diff added or modified, and the lines it added."""

    model_config = ConfigDict(frozen=True)

    path: str
    new_file: bool
    added_lines: frozenset[int] = frozenset()


class ScopeFinding(BaseModel):
    """One S finding; `effect` is what it does to the verdict once `confirmed`."""

    model_config = ConfigDict(frozen=True)

    kind: FindingKind
    effect: Effect
    status: FindingStatus
    description: str
    ref: str
    judge: str = HEURISTIC_JUDGE
    terms: tuple[str, ...] = ()  # the exclusion phrases / frozen keywords an out_of_scope hit


class ScopeResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    status: str
    verdict: Verdict | None = None
    findings: tuple[ScopeFinding, ...] = ()
    judge: str | None = None

    def count(self, kind: str) -> int:
        """Confirmed findings (and notes) of one kind; candidates are counted apart."""
        return sum(1 for f in self.findings if f.kind == kind and f.status in ("confirmed", "note"))

    @property
    def n_candidates(self) -> int:
        return sum(1 for f in self.findings if f.status == "candidate")

    @property
    def reason(self) -> str | None:
        if self.status != SCORED or self.verdict is not None:
            return None
        return f"unadjudicated — {candidates(self.n_candidates)}"

    def finding_frame(self) -> pd.DataFrame:
        """The `scope_finding` table."""
        return pd.DataFrame(
            [f.model_dump(exclude={"terms"}) for f in self.findings], columns=FINDING_COLUMNS
        )

    def confirmed_terms(self) -> tuple[str, ...]:
        """Exclusion phrases and frozen keywords of the confirmed out-of-scope findings."""
        return tuple(
            dict.fromkeys(
                t
                for f in self.findings
                if f.kind == "out_of_scope" and f.status == "confirmed"
                for t in f.terms
            )
        )

    def summary_frame(self) -> pd.DataFrame:
        """The `scope_summary` table (one row)."""
        scored = self.status == SCORED
        row = {
            "status": self.status,
            "verdict": self.verdict,
            "reason": self.reason,
            "n_out_of_scope": self.count("out_of_scope") if scored else None,
            "n_rogue_build": self.count("rogue_build") if scored else None,
            "n_plan_drift": self.count("plan_drift") if scored else None,
            "n_deferred": self.count("deferred") if scored else None,
            "n_candidates": self.n_candidates if scored else None,
            "judge": self.judge,
        }
        frame = pd.DataFrame([row], columns=SCOPE_SUMMARY_COLUMNS)
        counts = {c: "Int64" for c in SCOPE_SUMMARY_COLUMNS if c.startswith("n_")}
        strings = {"verdict": "string", "reason": "string", "judge": "string"}
        return frame.astype({**strings, **counts})


def _finding(
    kind: FindingKind, description: str, ref: str, status: FindingStatus = "candidate"
) -> ScopeFinding:
    return ScopeFinding(
        kind=kind, effect=_EFFECT[kind], status=status, description=description, ref=ref
    )


def _added(change: ProductionChange, text: str) -> list[tuple[int, str]]:
    lines = text.split("\n")
    numbers = range(1, len(lines) + 1) if change.new_file else sorted(change.added_lines)
    return [
        (n, lines[n - 1])
        for n in numbers
        if 0 < n <= len(lines) and lines[n - 1].strip() and not NON_CODE_LINE.match(lines[n - 1])
    ]


def compute_scope(
    prd: PRD,
    artifacts: SpecArtifacts,
    elicitation: ElicitationResult,
    changes: Sequence[ProductionChange],
    production_files: Mapping[str, str],
    *,
    rubric: ElicitationRubric | None = None,
    labels: ScopeLabels | None = None,
    labels_source: str = "<labels>",
) -> ScopeResult:
    """S for one framework run (rules in the module docstring)."""
    if not artifacts.present:
        return ScopeResult(status=NO_SPEC)
    rubric = rubric or ElicitationRubric()
    excluded = out_of_scope_of(prd, rubric)
    findings: list[ScopeFinding] = []
    flagged_files: set[str] = set()
    flagged_lines: set[tuple[str, int]] = set()
    for change in sorted(changes, key=lambda c: c.path):
        text = production_files.get(change.path)
        if text is None:
            continue
        hits = [(n, excluded.hits(line)) for n, line in _added(change, text)]
        hits = [(n, h) for n, h in hits if h]
        if not hits:
            continue
        flagged_files.add(change.path)
        flagged_lines.update((change.path, n) for n, _ in hits)
        found = list(dict.fromkeys(k for _, h in hits for k in h))
        finding = _finding(
            "out_of_scope",
            f"may build out-of-scope behaviour ({', '.join(found)}) on {len(hits)} "
            f"added line(s); the PRD excludes: {excluded.source(found[0])}",
            f"{change.path}:{hits[0][0]}",
        )
        findings.append(finding.model_copy(update={"terms": tuple(found)}))
    findings += _rogue(prd, elicitation, changes, production_files, flagged_files, flagged_lines)
    findings += _drift(artifacts, elicitation)
    findings += _deferred(prd, artifacts, elicitation, rubric)
    if labels is None:
        return ScopeResult(status=SCORED, verdict=None, findings=tuple(findings))
    findings = _adjudicate(findings, labels, labels_source)
    return ScopeResult(
        status=SCORED,
        verdict=_verdict(findings, labels, labels_source),
        findings=tuple(findings),
        judge=LABELS_JUDGE,
    )


def _adjudicate(
    findings: list[ScopeFinding], labels: ScopeLabels, source: str
) -> list[ScopeFinding]:
    """Candidates confirmed or rejected by `file:line` (a bare file name matches any
    folder); a label naming no candidate adds a confirmed finding."""
    out = list(findings)
    for label in labels.findings:
        name, _, line = label.ref.rpartition(":")
        at = [
            n
            for n, f in enumerate(out)
            if f.kind == label.kind
            and (f.ref == label.ref or (line and f.ref.endswith(f"/{name}:{line}")))
        ]
        if not at and label.status == "rejected":
            raise InputError(
                f"scope label rejects {label.kind} at {label.ref}, which is no finding",
                where=source,
                fix="copy the ref from the scope_finding table or `evalflow side-metrics template`",
            )
        for n in at:
            out[n] = out[n].model_copy(
                update={
                    "status": label.status,
                    "judge": LABELS_JUDGE,
                    "description": f"{out[n].description} — {label.rationale}",
                }
            )
        if not at:
            added = _finding(label.kind, label.rationale, label.ref, label.status)
            out.append(added.model_copy(update={"judge": LABELS_JUDGE}))
    return out


def _verdict(findings: list[ScopeFinding], labels: ScopeLabels, source: str) -> Verdict | None:
    confirmed = [f.effect for f in findings if f.status == "confirmed"]
    worst: Verdict = (
        "fail" if "fail" in confirmed else "partial" if "partial" in confirmed else "pass"
    )
    if labels.verdict is None:
        pending = any(f.status == "candidate" for f in findings)
        return None if pending else worst
    if _SEVERITY[labels.verdict] < _SEVERITY[worst]:
        raise InputError(
            f"scope verdict {labels.verdict!r} is milder than its confirmed findings ({worst})",
            where=source,
            fix="reject the finding or adjudicate the verdict it implies",
        )
    return labels.verdict


def sanctioned_vocabulary(prd: PRD, elicitation: ElicitationResult) -> frozenset[str]:
    """Content tokens of the PRD's ACs and titles and of every valid addition (with the
    items restating it)."""
    texts = []
    by_id = {t.item.item_id: t.item for t in elicitation.traces}
    for entry in elicitation.valid_additions():
        texts.append(entry.item.text)
        texts += [by_id[r].text for r in entry.restated_by if r in by_id]
    return prd_vocabulary(prd).union(*(content_tokens(t) for t in texts))


def _rogue(
    prd: PRD,
    elicitation: ElicitationResult,
    changes: Sequence[ProductionChange],
    files: Mapping[str, str],
    flagged_files: set[str],
    flagged_lines: set[tuple[str, int]],
) -> list[ScopeFinding]:
    vocabulary = sanctioned_vocabulary(prd, elicitation)
    findings: list[ScopeFinding] = []
    for change in sorted(changes, key=lambda c: c.path):
        text = files.get(change.path)
        if text is None:
            continue
        if change.new_file and change.path not in flagged_files:
            module = change.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            names = words(module)
            definitions = [m.group(1) for line in text.split("\n") if (m := DEFINITION.match(line))]
            glue = bool(names) and all(n in INFRASTRUCTURE_MODULES for n in names)
            traced = content_tokens(module) & vocabulary or any(
                content_tokens(d) & vocabulary for d in definitions
            )
            if not glue and not traced:
                shown = ", ".join(definitions[:5]) or "none"
                findings.append(
                    _finding(
                        "rogue_build",
                        f"new module '{module}' traces to no PRD AC or valid addition "
                        f"(definitions: {shown})",
                        f"{change.path}:1",
                    )
                )
        for number, line in _added(change, text):
            if (change.path, number) in flagged_lines:
                continue
            for m in ROUTE_DECLARATION.finditer(line):
                route = next(g for g in m.groups() if g)
                outside = sorted(
                    t
                    for t in content_tokens(_ROUTE_PARAM.sub(" ", route))
                    if not _sanctioned_word(t, vocabulary)
                )
                if outside:
                    findings.append(
                        _finding(
                            "rogue_build",
                            f"route {route} traces to no PRD AC or valid addition "
                            f"(unsanctioned: {', '.join(outside)})",
                            f"{change.path}:{number}",
                        )
                    )
    return findings


def _sanctioned_word(token: str, vocabulary: frozenset[str]) -> bool:
    """In the vocabulary, or a compound of a vocabulary word and another vocabulary word or
    particle (`signup` = sign + up, `login` = log + in)."""
    if token in vocabulary:
        return True
    for i in range(2, len(token) - 1):
        head, tail = token[:i], token[i:]
        known = (head in vocabulary, stem(tail) in vocabulary)
        particle = (head in STOPWORDS, tail in STOPWORDS)
        if all(k or p for k, p in zip(known, particle, strict=True)) and any(known):
            return True
    return False


def _drift(artifacts: SpecArtifacts, elicitation: ElicitationResult) -> list[ScopeFinding]:
    tasks = artifacts.tasks()
    unchecked_parents = {t.parent_id for t in tasks if t.checked is False and t.parent_id}
    findings = [
        _finding("plan_drift", f"task {t.item_id} is not done: {t.text}", t.ref, "confirmed")
        for t in tasks
        if t.checked is False and t.item_id not in unchecked_parents
    ]
    for e in elicitation.valid_additions():
        searched = ", ".join(e.keywords)
        if e.implementation == "pending":
            findings.append(
                _finding(
                    "plan_drift",
                    f"sanctioned addition {e.item.item_id} has no code (frozen search: {searched})",
                    e.ref,
                    "confirmed",
                )
            )
        elif e.implementation == "unadjudicated" and e.implementation_ref is None:
            findings.append(
                _finding(
                    "plan_drift",
                    f"sanctioned addition {e.item.item_id} may have no code (words of its "
                    f"text found nowhere: {searched})",
                    e.ref,
                )
            )
    return findings


def _deferred(
    prd: PRD, artifacts: SpecArtifacts, elicitation: ElicitationResult, rubric: ElicitationRubric
) -> list[ScopeFinding]:
    ids = prd_id_pattern(prd)
    priority = {s.id: s.priority for s in prd.stories} | {
        ac.id: s.priority for s in prd.stories for ac in s.acs
    }
    ac_tokens = {ac.id: content_tokens(ac.text) for s in prd.stories for ac in s.acs}
    findings: list[ScopeFinding] = []
    seen: set[tuple[str, int]] = set()
    current_path, in_deferred_section = "", False
    for path, number, text in artifacts.lines():
        if path != current_path:
            current_path, in_deferred_section = path, False
        heading = HEADING.match(text)
        if heading:
            in_deferred_section = bool(DEFERRAL.search(heading.group(2)))
            continue
        stripped = text.strip()
        listed = in_deferred_section and LIST_ITEM.match(text) is not None
        if not stripped or not (listed or DEFERRAL.search(stripped)):
            continue
        seen.add((path, number))
        targets = sorted(set(ids.findall(stripped))) if ids else []
        if not targets:
            ac_id, score, common = best_ac(content_tokens(stripped), ac_tokens)
            if ac_id and score >= rubric.trace_threshold and common >= rubric.trace_min_overlap:
                targets = [ac_id]
        where = f" — PRD {', '.join(f'{t} ({priority[t]})' for t in targets)}" if targets else ""
        findings.append(
            _finding(
                "deferred",
                f"deferred (no deduction): {stripped}{where}",
                f"{path}:{number}",
                "note",
            )
        )
    findings += [
        _finding(
            "deferred",
            f"valid addition {e.item.item_id} deferred by the spec; E logs it pending-valid",
            e.ref,
            "note",
        )
        for e in elicitation.valid_additions()
        if e.implementation == "pending-deferred" and (e.item.path, e.item.line) not in seen
    ]
    return findings
