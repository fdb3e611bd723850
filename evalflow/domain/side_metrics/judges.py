"""E judges: the heuristic lexicon (offline default) and the labels file (adjudication).

Both implement `elicitation.ElicitationJudge`; a model-based judge implements the same
Protocol elsewhere and is placed between them in precedence order. Every row a judge
decides carries its `judge` id, so heuristic answers are always labelled as such.

The heuristic lexicon (`heuristic-lexicon`) never decides (SPEC §5: keyword matching may
propose candidates; it never decides a verdict). Every answer it gives is `candidate`, with
the proposal in the rationale ("unadjudicated; lexicon proposes …") for the adjudicator:
Additions, first rule that applies:
1. the text holds a whole out-of-scope phrase of the PRD ⇒ proposes invalid (scope creep);
2. it concerns an applicable rubric category ⇒ proposes valid-necessary for input
   validation, error taxonomy, idempotency, data lifecycle and state transitions (the PRD's
   behaviour is undefined without them), valid-defensive for the others (hardening);
3. it shares vocabulary with the PRD's ACs ⇒ proposes valid-defensive;
4. otherwise ⇒ proposes invalid (nothing in the PRD or the rubric supports it).
Categories: proposes N/A when the category's pattern matches an exclusion of the PRD or of
the run's spec (authentication the PRD puts out of scope is no miss); else Addressed citing
the first spec item of any trace matching the pattern (spec.md saying "idempotent" on a
restated AC counts); else Missed.

Labels (`labels`): an `ElicitationLabels` file per framework run. Its addition labels are
keyed by item id or `file:line` (a bare `spec.md:85` matches any folder); a label on an item
that is not a candidate pulls it into the ledger, `traced` / `not-a-requirement` drop one.
Its category labels override Addressed/Missed (never N/A, which the benchmark rubric fixes).
"""

from __future__ import annotations

from collections.abc import Sequence

from evalflow.domain.side_metrics.elicitation import (
    CANDIDATE,
    HEURISTIC_JUDGE,
    LABELS_JUDGE,
    AdditionJudgement,
    CategoryJudgement,
    ElicitationLabels,
    ElicitationRequest,
    LedgerEntry,
    MasterList,
    anchored,
    category_matches,
)
from evalflow.domain.side_metrics.exclusions import phrase_hits
from evalflow.domain.side_metrics.lexicon import NECESSARY_CATEGORIES
from evalflow.domain.side_metrics.spec_artifacts import SpecArtifacts, SpecItem, normalise_key
from evalflow.errors import InputError


class HeuristicElicitationJudge:
    """Lexicon rules over the item text (see the module docstring)."""

    @property
    def judge_id(self) -> str:
        return HEURISTIC_JUDGE

    def judge_additions(self, request: ElicitationRequest) -> dict[str, AdditionJudgement]:
        applicable = [
            c for c in request.rubric.all_categories() if c.id not in request.rubric.not_applicable
        ]
        names = {c.id: c.name for c in applicable}
        answers: dict[str, AdditionJudgement] = {}
        for trace in request.candidates():
            text = trace.item.text
            hits = [e.phrase_text for e in phrase_hits(text, request.out_of_scope.prd)]
            matched = category_matches(text, applicable)
            if hits:
                verdict, why = "invalid", f"scope creep: names out-of-scope {', '.join(hits)}"
            elif matched:
                primary = next((c for c in matched if c in NECESSARY_CATEGORIES), matched[0])
                verdict = (
                    "valid-necessary" if primary in NECESSARY_CATEGORIES else "valid-defensive"
                )
                kind = "gap the PRD implies" if verdict == "valid-necessary" else "hardening"
                why = f"{kind}: {names[primary]}"
            elif anchored(text, request.prd):
                verdict, why = "valid-defensive", "no rubric category; anchored in PRD vocabulary"
            else:
                verdict, why = "invalid", "fabricated: no PRD anchor and no rubric category"
            answers[trace.item.item_id] = AdditionJudgement(
                verdict=CANDIDATE,
                rationale=f"unadjudicated; lexicon proposes {verdict}: {why}",
                judge=self.judge_id,
            )
        return answers

    def judge_categories(
        self, request: ElicitationRequest, ledger: Sequence[LedgerEntry]
    ) -> dict[str, CategoryJudgement]:
        answers: dict[str, CategoryJudgement] = {}
        exclusions = request.out_of_scope.prd + request.out_of_scope.spec
        items = request.artifacts.spec_items()
        for category in request.rubric.all_categories():
            excluded = next((e for e in exclusions if category.regex.search(e.text)), None)
            hit = next((i for i in items if category.regex.search(i.text)), None)
            if excluded is not None:
                ref, proposal = excluded.ref, f"n/a: excluded by {excluded.text!r}"
            elif hit is not None:
                ref, proposal = hit.ref, f"addressed: {hit.item_id} concerns it"
            else:
                ref, proposal = None, "missed: no spec item concerns it"
            answers[category.id] = CategoryJudgement(
                status=CANDIDATE,
                ref=ref,
                rationale=f"unadjudicated; lexicon proposes {proposal}",
                judge=self.judge_id,
            )
        return answers


def resolve_item(key: str, items: Sequence[SpecItem]) -> SpecItem | None:
    """The item a label names: its id, a key it is known by, `path:line`, or `file:line`."""
    wanted = key.strip()
    normal = normalise_key(wanted)
    for item in items:
        if wanted == item.item_id or normal in item.keys:
            return item
    if ":" in wanted:
        name, _, line = wanted.rpartition(":")
        if line.isdigit():
            for item in items:
                same_file = item.path == name or item.path.endswith(f"/{name}")
                if same_file and item.line <= int(line) <= item.end_line:
                    return item
    return None


def resolve_ref(ref: str | None, artifacts: SpecArtifacts, source: str) -> str | None:
    """A label's `file:line` with the file's repository path (`spec.md:95` →
    `specs/001-x/spec.md:95`); the file must be one of the run's artifacts."""
    if ref is None:
        return None
    name, _, line = ref.rpartition(":")
    if not line.split("-")[0].isdigit():
        name, line = ref, ""
    matches = [f.path for f in artifacts.files if f.path == name or f.path.endswith(f"/{name}")]
    if len(matches) != 1:
        raise InputError(
            f"label ref {ref!r} names no single spec artifact of this run",
            where=source,
            fix=f"use one of {', '.join(f.path for f in artifacts.files)} (or its file name)",
        )
    return f"{matches[0]}:{line}" if line else matches[0]


class LabelsElicitationJudge:
    """Adjudicated judgements from a labels file; silent wherever the file is."""

    def __init__(self, labels: ElicitationLabels, source: str = "<labels>") -> None:
        self.labels = labels
        self.source = source

    @property
    def judge_id(self) -> str:
        return LABELS_JUDGE

    def judge_additions(self, request: ElicitationRequest) -> dict[str, AdditionJudgement]:
        items = [t.item for t in request.traces]
        master = {m.id for m in request.master.items} if request.master else set()
        answers: dict[str, AdditionJudgement] = {}
        for label in self.labels.additions:
            item = resolve_item(label.item, items)
            if item is None:
                raise InputError(
                    f"label names item {label.item!r}, which the spec artifacts do not hold",
                    where=self.source,
                    fix="use an item id from the elicitation_item table or its file:line",
                )
            if label.master_id is not None and master and label.master_id not in master:
                raise InputError(
                    f"label for {label.item} names unknown master item {label.master_id!r}",
                    where=self.source,
                    fix="use an id from the benchmark's master.yaml",
                )
            answers[item.item_id] = AdditionJudgement(
                verdict=label.verdict,
                rationale=label.rationale,
                judge=self.judge_id,
                master_id=label.master_id,
                justified=label.justified,
                keywords=label.keywords,
            )
        return answers

    def judge_categories(
        self, request: ElicitationRequest, ledger: Sequence[LedgerEntry]
    ) -> dict[str, CategoryJudgement]:
        known = {c.id for c in request.rubric.all_categories()}
        unknown = sorted(set(self.labels.categories) - known)
        if unknown:
            raise InputError(
                f"labels name unknown categories {unknown}",
                where=self.source,
                fix=f"use one of {', '.join(sorted(known))}",
            )
        return {
            category_id: CategoryJudgement(
                status=label.status,
                ref=resolve_ref(label.ref, request.artifacts, self.source),
                rationale=label.rationale,
                judge=self.judge_id,
            )
            for category_id, label in self.labels.categories.items()
        }

    def pooled(self, artifacts: SpecArtifacts, master: MasterList | None) -> dict[str, str]:
        """The file's pooled-recall matches (master id → repository `path:line`)."""
        known = {m.id for m in master.items} if master else set()
        unknown = sorted(set(self.labels.pooled) - known)
        if unknown:
            raise InputError(
                f"pooled labels name master items {unknown} the master list does not hold",
                where=self.source,
                fix="use ids from the benchmark's elicitation/master.yaml",
            )
        return {
            master_id: resolve_ref(ref, artifacts, self.source) or ref
            for master_id, ref in self.labels.pooled.items()
        }
