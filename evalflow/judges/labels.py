"""The labels judge: verdicts read from a file (human labels, or another evaluator's output).

File (YAML or JSON, the same shape):

    run_key: mini.good.r1          # optional; when set, the file only applies to that run
    verdicts:
      - check_id: S1-AC1-I1
        run: 2                     # optional; a verdict without `run` applies to all k runs
        status: MET                # MET | UNMET | UNSCORED
        evidence: [{path: app/core.py, start_line: 2, end_line: 2, quote: "..."}]
        searches: [{pattern: "greet", scope: "diff surface", hits: 1}]
        rationale: "..."

One file may hold the verdicts of several runs of a benchmark (one `score` call for all):

    runs:
      mini.good.r1:
        - {check_id: S1-AC1-I1, status: MET, evidence: [...]}
      mini.poor.r1:
        - {check_id: S1-AC1-I1, status: UNMET, searches: [...]}

A run the file does not name is refused in one line, like a single-run file's other `run_key`.
A per-run verdict wins over a run-less one for its run. A check the file does not label is
answered UNSCORED with the reason (never a silent zero). Labels pass the same evidence
validator as every other judge. A label may cite lines without a `quote` (a human points at
`path:start-end`): the quote is then the cited lines as they are at head, so the validator's
rule that a judge's evidence holds a meaningful code line is applied to the lines themselves.
A label citing more lines than `EVALFLOW_EVIDENCE_MAX_LINES` (default 40) fails the load with
one line naming it, rather than losing its MET to the validator's cap; so does what no run
could ever credit: an evidence path that is absolute or leaves the repository (``../x``), and
a MET without evidence. What depends on the run's head — a cited file or line that is not
there, a quote that does not match, a cited range with no meaningful code line — is checked
per run by the shared validator's rules: such a MET label is UNSCORED with the reason (the
label was written for other code; demoting it to UNMET would invent a verdict nobody gave).
It is deterministic (the report says so) and the gold source for calibration. The file comes
from the constructor or `EVALFLOW_LABELS`; a malformed file is an InputError naming the file
and the entry.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evalflow.domain.models import Evidence, Search, Status, Verdict
from evalflow.domain.yaml_text import load_yaml
from evalflow.errors import InputError
from evalflow.judges.base import JudgeRequest, OfflineJudge
from evalflow.judges.validator import (
    FLAG_INVALID_EVIDENCE,
    MAX_LINES_ENV,
    max_evidence_lines,
    path_problem,
    strict_evidence_problem,
)

LABELS_ENV = "EVALFLOW_LABELS"


class LabelVerdict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    check_id: str = Field(min_length=1)
    run: int | None = Field(default=None, ge=1)
    status: Status
    evidence: tuple[Evidence, ...] = ()
    searches: tuple[Search, ...] = ()
    rationale: str = ""


class LabelFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run_key: str | None = None
    verdicts: tuple[LabelVerdict, ...] = ()
    runs: dict[str, tuple[LabelVerdict, ...]] | None = None

    @model_validator(mode="after")
    def _one_shape(self) -> LabelFile:
        if self.runs is not None and (self.verdicts or self.run_key is not None):
            raise ValueError("use either verdicts (with an optional run_key) or runs, not both")
        if self.runs is None and "verdicts" not in self.model_fields_set:
            raise ValueError("no verdicts: give verdicts, or runs with a list per run key")
        return self

    def blocks(self) -> dict[str | None, tuple[LabelVerdict, ...]]:
        """Verdicts by run key (None: the file's one block, for any run or its run_key)."""
        if self.runs is not None:
            return dict(self.runs)
        return {self.run_key: self.verdicts}


def _describe(error: dict[str, Any]) -> str:
    loc = list(error["loc"])
    where = ""
    if len(loc) >= 2 and loc[0] == "verdicts" and isinstance(loc[1], int):
        where = f"verdicts[{loc[1]}]"
        loc = loc[2:]
    field = ".".join(str(p) for p in loc)
    place = " ".join(p for p in (where, field) if p) or "file"
    return f"{place}: {error['msg']}"


def load_labels(path: Path) -> LabelFile:
    """Parse and validate a labels file; every problem is one InputError line."""
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(
            f"cannot read labels file: {exc.strerror}",
            where=str(path),
            fix=f"check the path (or {LABELS_ENV})",
        ) from exc
    except UnicodeDecodeError as exc:
        raise InputError(
            f"labels file is not UTF-8 text (byte {exc.start})",
            where=str(path),
            fix="save the file as UTF-8",
        ) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"labels file is not valid YAML/JSON: {problem}", where=where) from exc
    try:
        labels = LabelFile.model_validate(data)
    except ValidationError as exc:
        raise InputError(
            f"invalid labels entry {_describe(exc.errors()[0])}",
            where=str(path),
            fix="see evalflow/judges/labels.py for the file shape",
        ) from exc
    for key, verdicts in labels.blocks().items():
        block = "verdicts" if labels.runs is None else f"runs[{key}]"
        seen: dict[tuple[str, int | None], int] = {}
        for index, entry in enumerate(verdicts):
            slot = (entry.check_id, entry.run)
            if slot in seen:
                run = "all runs" if entry.run is None else f"run {entry.run}"
                raise InputError(
                    f"invalid labels entry {block}[{index}]: check {entry.check_id} ({run}) is "
                    f"already labelled by {block}[{seen[slot]}]",
                    where=str(path),
                )
            seen[slot] = index
    _creditable(labels, path)
    return labels


def _creditable(labels: LabelFile, path: Path) -> None:
    """A label no run could credit fails the load, naming it, instead of silently losing its
    MET to the validator (UNMET, or UNSCORED without searches): evidence outside the
    repository, wider than the validator's line cap, or a MET with no evidence at all."""
    cap = max_evidence_lines()
    for key, verdicts in labels.blocks().items():
        block = "verdicts" if labels.runs is None else f"runs[{key}]"
        for index, entry in enumerate(verdicts):
            label = f"invalid labels entry {block}[{index}] ({entry.check_id})"
            if entry.status == "MET" and not entry.evidence:
                raise InputError(
                    f"{label}: MET without evidence",
                    where=str(path),
                    fix="cite the lines that show it (evidence: [{path, start_line, end_line}]),"
                    " or label it UNMET with its searches, or UNSCORED",
                )
            for item in entry.evidence:
                if (problem := path_problem(item.path)) is not None:
                    raise InputError(
                        f"{label}: evidence {problem}",
                        where=str(path),
                        fix="cite the file by its path from the repository top (app/core.py), "
                        "without a leading / or ..",
                    )
                span = item.end_line - item.start_line + 1
                if span > cap:
                    raise InputError(
                        f"{label}: evidence {item.ref()} cites {span} lines, more than "
                        f"{MAX_LINES_ENV}={cap}",
                        where=str(path),
                        fix=f"cite the lines that show it, or raise {MAX_LINES_ENV}",
                    )


class LabelsJudge(OfflineJudge):
    """Verdicts from a labels file (see the module docstring)."""

    def __init__(self, path: Path | None = None) -> None:
        env = os.environ.get(LABELS_ENV)
        if path is None and not env:
            raise InputError(
                "the labels judge needs a labels file",
                fix=f"set {LABELS_ENV}=/path/to/labels.yaml",
            )
        self.path = path or Path(env or "")
        self.labels = load_labels(self.path)
        self._sha256 = hashlib.sha256(self.path.read_bytes()).hexdigest()
        self._by_slot = {
            (key, v.check_id, v.run): v
            for key, verdicts in self.labels.blocks().items()
            for v in verdicts
        }

    @property
    def judge_id(self) -> str:
        return f"labels:{self.path.stem}"

    def fingerprint_fields(self) -> dict[str, Any]:
        return {"judge": self.judge_id, "labels_sha256": self._sha256}

    def score(self, request: JudgeRequest) -> list[Verdict]:
        blocks = self.labels.blocks()
        if self.labels.runs is not None:
            key: str | None = request.run_key
            if key not in blocks:
                raise InputError(
                    f"labels file has no verdicts for run {request.run_key!r}",
                    where=str(self.path),
                    fix=f"add runs: {request.run_key}: [...] to it (labels template writes one)",
                )
        else:
            key = self.labels.run_key
            if key is not None and key != request.run_key:
                raise InputError(
                    f"labels file is for run {key!r}, not {request.run_key!r}",
                    where=str(self.path),
                    fix="point the labels judge at this run's labels file",
                )
        cap = max_evidence_lines()
        out: list[Verdict] = []
        for _, check in request.checks:
            label = self._by_slot.get((key, check.id, request.run)) or self._by_slot.get(
                (key, check.id, None)
            )
            if label is None:
                out.append(
                    Verdict(
                        check_id=check.id,
                        run=request.run,
                        status="UNSCORED",
                        rationale=f"no label for check {check.id} (run {request.run}) in "
                        f"{self.path.name}",
                        judge_id=self.judge_id,
                    )
                )
                continue
            evidence = tuple(_quoted(e, request) for e in label.evidence)
            problems = [strict_evidence_problem(e, request.snapshot, cap) for e in evidence]
            wrong = [problem for problem in problems if problem is not None]
            if label.status == "MET" and wrong:
                out.append(
                    Verdict(
                        check_id=check.id,
                        run=request.run,
                        status="UNSCORED",
                        flags=(FLAG_INVALID_EVIDENCE,),
                        rationale=f"the MET label in {self.path.name} cites evidence this "
                        f"run's head does not have: {'; '.join(wrong[:3])} (fix the label's "
                        "evidence for this run, or give this run a label of its own)",
                        judge_id=self.judge_id,
                    )
                )
                continue
            out.append(
                Verdict(
                    check_id=check.id,
                    run=request.run,
                    status=label.status,
                    evidence=evidence,
                    searches=label.searches,
                    rationale=label.rationale,
                    judge_id=self.judge_id,
                )
            )
        return out


def _quoted(evidence: Evidence, request: JudgeRequest) -> Evidence:
    """A quote-less label's evidence with the cited lines as its quote (module docstring);
    a path or range the snapshot lacks is left for the validator to reject with its reason."""
    snapshot = request.snapshot
    if evidence.quote or evidence.path not in snapshot:
        return evidence
    lines = snapshot.lines(evidence.path)
    if evidence.end_line > len(lines):
        return evidence
    cited = "\n".join(lines[evidence.start_line - 1 : evidence.end_line])
    return evidence.model_copy(update={"quote": cited})
