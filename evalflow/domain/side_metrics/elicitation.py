"""Elicitation E (SPEC §1 Side metrics): the SDD artifacts scored against the PRD, not code.

Trace (deterministic, per item of `spec_artifacts`), first rule that applies:
1. restates — the item references another spec item (an id token, a range, kiro's
   `_Requirements: 1.2_`, BMAD's `(AC: 1)`, or an id in its section heading): it is that
   item said again, never a ledger entry of its own;
2. declared-addition — it carries `implied` / `derived` / `inferred`: the framework says
   the PRD does not state it (even when it also cites a PRD id);
3. prd-ref — it cites a PRD AC or story id (`S1-AC2`, `S5`);
4. prd-lexical — its content tokens (`lexicon.content_tokens`) overlap one PRD AC's by at
   least `trace_min_overlap` tokens and `max(|I∩A|/|I|, |I∩A|/|A|) ≥ trace_threshold`
   (0.5 by default): the item restates the AC, or the AC is contained in it;
5. tasks only: a group task whose children trace is traced; a task overlapping a spec item
   as in 4 restates it; a test/tooling-only task (`lexicon.TOOLING_TASK`) is no requirement;
6. otherwise an addition. Additions are then de-duplicated: in canonical order (items with
   an explicit id first, then file order) an item *without* an explicit id that overlaps
   an earlier addition as in 4 restates it; numbered items are never merged (SPEC: stable
   requirement ids are used as-is).

Ledger: every addition judged valid-necessary / valid-defensive / invalid with a one-line
rationale by the first judge that answers, in precedence order (labels file, then any
model judge, then the heuristic lexicon; see `judges`). A judge may also pull a traced item
into the ledger, or drop a candidate (`traced`, `not-a-requirement`). The heuristic lexicon
decides nothing (SPEC §5: E is a judgement): it answers `candidate` with what it would
propose, and a candidate is neither valid nor invalid.

Categories: each rubric category is Addressed (with a `file:line`), Missed, or N/A (N/A
only from the benchmark's frozen rubric file; whether a category applies depends on the PRD),
or `candidate` when only the lexicon looked at it.

    E_recall    = Addressed / (Addressed + Missed)
    E_precision = (valid-necessary + valid-defensive) / additions
    E_justified = additions with a rationale/traceability marker / additions
    pooled_recall = master items this run surfaced / master items

A marker is `lexicon.JUSTIFICATION` (because, rationale:, so that, implied, derived, …) or a
PRD id in the item. A ratio without a denominator is None, never 0. A ratio a candidate
would change is None too, with reason `unadjudicated — N candidates`: E_recall while any
applicable category is a candidate, E_precision / E_justified / pooled recall while any
ledger entry is. Without spec files every E output has status `n/a — no derived spec`.

Valid additions are then marked implemented or pending by a search with *frozen* patterns —
the adjudicator's keywords, else its master item's code keywords (both chosen by a human,
like probes) — an addition whose text defers it is `pending-deferred`. Keywords derived from
the addition's own text (`code_keywords_of`) only propose: the status is `unadjudicated`
with the first candidate line, if any, as `implementation_ref` (a literal spec string or a
package name matching `__main__.py:1` proves nothing). No keyword at all is `unsearched`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, Protocol

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from evalflow.domain.models import PRD
from evalflow.domain.patterns import Pattern, UntrustedPatternError, compile_untrusted
from evalflow.domain.side_metrics.common import NO_SPEC, SCORED, candidates, ratio
from evalflow.domain.side_metrics.exclusions import OutOfScope, out_of_scope
from evalflow.domain.side_metrics.lexicon import (
    CODE_KEYWORD,
    DECLARED_ADDITION,
    DEFAULT_CATEGORIES,
    DEFERRAL,
    JUSTIFICATION,
    TOOLING_TASK,
    content_tokens,
)
from evalflow.domain.side_metrics.spec_artifacts import SpecArtifacts, SpecItem

TraceKind = Literal[
    "restates", "declared-addition", "prd-ref", "prd-lexical", "group", "tooling", "addition"
]
AdditionVerdict = Literal["valid-necessary", "valid-defensive", "invalid", "candidate"]
LabelVerdict = Literal[
    "valid-necessary", "valid-defensive", "invalid", "traced", "not-a-requirement"
]
JudgedVerdict = Literal[
    "valid-necessary", "valid-defensive", "invalid", "traced", "not-a-requirement", "candidate"
]
CategoryStatus = Literal["addressed", "missed", "n/a", "candidate"]
Implementation = Literal[
    "implemented", "pending", "pending-deferred", "unsearched", "unadjudicated"
]
VALID: frozenset[str] = frozenset({"valid-necessary", "valid-defensive"})
CANDIDATE = "candidate"
HEURISTIC_JUDGE = "heuristic-lexicon"
LABELS_JUDGE = "labels"

CATEGORY_COLUMNS = ["category_id", "category", "status", "ref", "judge", "rationale"]
ADDITION_COLUMNS = [
    "item_id",
    "ref",
    "text",
    "category",
    "categories",
    "verdict",
    "rationale",
    "justified",
    "judge",
    "master_id",
    "implementation",
    "implementation_ref",
    "keywords",
]
SUMMARY_COLUMNS = [
    "status",
    "e_recall",
    "e_precision",
    "e_justified",
    "pooled_recall",
    "n_addressed",
    "n_missed",
    "n_not_applicable",
    "n_additions",
    "n_valid_necessary",
    "n_valid_defensive",
    "n_invalid",
    "n_justified",
    "n_master",
    "n_master_matched",
    "n_candidates",
    "reason",
    "judge",
    "heuristic",
]
_RATIOS = frozenset({"e_recall", "e_precision", "e_justified", "pooled_recall"})
ITEM_COLUMNS = ["item_id", "ref", "role", "kind", "section", "trace", "target", "score", "text"]


class Category(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    pattern: str

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            compile_untrusted(value, ignore_case=True)
        except UntrustedPatternError as exc:
            raise ValueError(f"category pattern: {exc}") from exc
        return value

    @cached_property
    def regex(self) -> Pattern:
        return compile_untrusted(self.pattern, ignore_case=True)


DEFAULT_RUBRIC_CATEGORIES: tuple[Category, ...] = tuple(
    Category(id=i, name=n, pattern=p) for i, n, p in DEFAULT_CATEGORIES
)


class ElicitationRubric(BaseModel):
    """The benchmark's frozen E rubric: categories (default: the ten of SPEC §1), which do
    not apply to this PRD and why, out-of-scope keywords, and the trace threshold."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    categories: tuple[Category, ...] = DEFAULT_RUBRIC_CATEGORIES
    extra_categories: tuple[Category, ...] = ()
    not_applicable: dict[str, str] = Field(default_factory=dict)
    out_of_scope_keywords: tuple[str, ...] | None = Field(
        default=None,
        description="frozen word prefixes, matched at the start of a code word (camelCase "
        "is not split); they propose S candidates beside the PRD's out-of-scope phrases",
    )
    trace_threshold: float = Field(default=0.5, gt=0, le=1)
    trace_min_overlap: int = Field(default=2, ge=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> ElicitationRubric:
        ids = [c.id for c in self.all_categories()]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"category ids repeat: {', '.join(repeated)}")
        unknown = sorted(set(self.not_applicable) - set(ids))
        if unknown:
            raise ValueError(f"not_applicable names unknown categories: {', '.join(unknown)}")
        return self

    def all_categories(self) -> tuple[Category, ...]:
        return self.categories + self.extra_categories


class MasterItem(BaseModel):
    """One adjudicated valid addition of the benchmark (any framework surfaced it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    category: str
    description: str
    keywords: tuple[str, ...] = Field(description="regexes matched on spec text")
    code_keywords: tuple[str, ...] = Field(
        default=(), description="regexes matched on production code and test assertions"
    )


class MasterList(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmark: str
    items: tuple[MasterItem, ...]


class CategoryLabel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    status: Literal["addressed", "missed"]
    ref: str | None = None
    rationale: str


class AdditionLabel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    item: str = Field(description="item id (FR-002, R1.4) or file:line (spec.md:85)")
    verdict: LabelVerdict
    rationale: str
    master_id: str | None = None
    justified: bool | None = None
    keywords: tuple[str, ...] = ()


class ScopeFindingLabel(BaseModel):
    """A human's word on one S finding: a candidate confirmed or rejected, or a new one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ref: str = Field(description="file:line of the finding (as the candidate lists it)")
    kind: Literal["out_of_scope", "rogue_build", "plan_drift"]
    status: Literal["confirmed", "rejected"]
    rationale: str


class ScopeLabels(BaseModel):
    """The adjudicated S of one run: the verdict (optional while candidates are reviewed)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verdict: Literal["pass", "partial", "fail"] | None = None
    rationale: str = ""
    findings: tuple[ScopeFindingLabel, ...] = ()


class ElicitationLabels(BaseModel):
    """An adjudication file for one framework run; it wins wherever it speaks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    framework: str
    categories: dict[str, CategoryLabel] = Field(default_factory=dict)
    additions: tuple[AdditionLabel, ...] = ()
    pooled: dict[str, str] = Field(
        default_factory=dict, description="master id → file:line where this run surfaces it"
    )
    scope: ScopeLabels | None = None


class ItemTrace(BaseModel):
    model_config = ConfigDict(frozen=True)

    item: SpecItem
    trace: TraceKind
    target: str | None = None
    score: float | None = None

    @property
    def candidate(self) -> bool:
        return self.trace in ("addition", "declared-addition")


class AdditionJudgement(BaseModel):
    model_config = ConfigDict(frozen=True)

    verdict: JudgedVerdict
    rationale: str
    judge: str
    master_id: str | None = None
    justified: bool | None = None
    keywords: tuple[str, ...] = ()


class CategoryJudgement(BaseModel):
    model_config = ConfigDict(frozen=True)

    status: Literal["addressed", "missed", "candidate"]
    ref: str | None
    rationale: str
    judge: str


class LedgerEntry(BaseModel):
    """One addition of the ledger with its verdict, categories and implementation status."""

    model_config = ConfigDict(frozen=True)

    item: SpecItem
    verdict: AdditionVerdict
    rationale: str
    judge: str
    categories: tuple[str, ...]
    justified: bool
    master_id: str | None
    restated_by: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    implementation: Implementation | None = None
    implementation_ref: str | None = None

    @property
    def valid(self) -> bool:
        return self.verdict in VALID

    @property
    def candidate(self) -> bool:
        return self.verdict == CANDIDATE

    @property
    def ref(self) -> str:
        return self.item.ref


class CategoryRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    category_id: str
    category: str
    status: CategoryStatus
    ref: str | None
    judge: str
    rationale: str


@dataclass(frozen=True)
class ElicitationRequest:
    """What an E judge sees: the PRD, the parsed artifacts, every item's trace, the rubric."""

    prd: PRD
    artifacts: SpecArtifacts
    traces: tuple[ItemTrace, ...]
    rubric: ElicitationRubric
    out_of_scope: OutOfScope
    master: MasterList | None = None

    def candidates(self) -> list[ItemTrace]:
        return [t for t in self.traces if t.candidate]


class ElicitationJudge(Protocol):
    """An E judge backend (heuristic lexicon, labels file, or a model-based judge).

    Each method may answer for a subset (a labels file speaks only where it has labels);
    the first judge in precedence order that answers wins, per item and per category.
    """

    @property
    def judge_id(self) -> str:
        """Stable name, e.g. `heuristic-lexicon`, `labels` or `anthropic:<model>`."""
        ...

    def judge_additions(self, request: ElicitationRequest) -> dict[str, AdditionJudgement]:
        """item_id → judgement (for candidates; for other items only to pull them in)."""
        ...

    def judge_categories(
        self, request: ElicitationRequest, ledger: Sequence[LedgerEntry]
    ) -> dict[str, CategoryJudgement]:
        """category_id → Addressed/Missed, given the settled ledger."""
        ...


class ElicitationResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    status: str
    traces: tuple[ItemTrace, ...] = ()
    ledger: tuple[LedgerEntry, ...] = ()
    categories: tuple[CategoryRow, ...] = ()
    master_matched: dict[str, str] = Field(default_factory=dict)
    n_master: int | None = None
    judges: tuple[str, ...] = ()

    def count(self, verdict: str) -> int:
        return sum(1 for e in self.ledger if e.verdict == verdict)

    @property
    def n_addressed(self) -> int:
        return sum(1 for c in self.categories if c.status == "addressed")

    @property
    def n_missed(self) -> int:
        return sum(1 for c in self.categories if c.status == "missed")

    @property
    def n_justified(self) -> int:
        return sum(1 for e in self.ledger if e.justified)

    @property
    def n_category_candidates(self) -> int:
        return sum(1 for c in self.categories if c.status == CANDIDATE)

    @property
    def n_addition_candidates(self) -> int:
        return sum(1 for e in self.ledger if e.candidate)

    @property
    def n_candidates(self) -> int:
        return self.n_category_candidates + self.n_addition_candidates

    @property
    def reason(self) -> str | None:
        """Why a ratio is NULL although there are spec files: candidates await a judge."""
        if self.status != SCORED or not self.n_candidates:
            return None
        return f"unadjudicated — {candidates(self.n_candidates)}"

    @property
    def e_recall(self) -> float | None:
        if self.n_category_candidates:
            return None
        return ratio(self.n_addressed, self.n_addressed + self.n_missed)

    @property
    def e_precision(self) -> float | None:
        if self.n_addition_candidates:
            return None
        return ratio(sum(1 for e in self.ledger if e.valid), len(self.ledger))

    @property
    def e_justified(self) -> float | None:
        if self.n_addition_candidates:
            return None
        return ratio(self.n_justified, len(self.ledger))

    @property
    def pooled_recall(self) -> float | None:
        if not self.n_master or self.n_addition_candidates:
            return None
        return ratio(len(self.master_matched), self.n_master)

    def valid_additions(self) -> list[LedgerEntry]:
        return [e for e in self.ledger if e.valid]

    def category_frame(self) -> pd.DataFrame:
        """The `elicitation_category` table."""
        return pd.DataFrame([c.model_dump() for c in self.categories], columns=CATEGORY_COLUMNS)

    def addition_frame(self) -> pd.DataFrame:
        """The `elicitation_addition` table (the additions ledger)."""
        rows = [
            {
                "item_id": e.item.item_id,
                "ref": e.ref,
                "text": e.item.text,
                "category": e.categories[0] if e.categories else None,
                "categories": list(e.categories),
                "verdict": e.verdict,
                "rationale": e.rationale,
                "justified": e.justified,
                "judge": e.judge,
                "master_id": e.master_id,
                "implementation": e.implementation,
                "implementation_ref": e.implementation_ref,
                "keywords": list(e.keywords),
            }
            for e in self.ledger
        ]
        return pd.DataFrame(rows, columns=ADDITION_COLUMNS)

    def item_frame(self) -> pd.DataFrame:
        """Every requirement item with its trace (the audit trail behind the ledger)."""
        rows = [
            {
                "item_id": t.item.item_id,
                "ref": t.item.ref,
                "role": t.item.role,
                "kind": t.item.kind,
                "section": t.item.section,
                "trace": t.trace,
                "target": t.target,
                "score": t.score,
                "text": t.item.text,
            }
            for t in self.traces
        ]
        return pd.DataFrame(rows, columns=ITEM_COLUMNS).astype({"score": "Float64"})

    def summary_frame(self) -> pd.DataFrame:
        """The `elicitation_summary` table (one row)."""
        scored = self.status == SCORED
        # A count a candidate could change is NULL like its ratio (n_candidates says why).
        categories = scored and not self.n_category_candidates
        additions = scored and not self.n_addition_candidates
        row = {
            "status": self.status,
            "e_recall": self.e_recall if scored else None,
            "e_precision": self.e_precision if scored else None,
            "e_justified": self.e_justified if scored else None,
            "pooled_recall": self.pooled_recall if scored else None,
            "n_addressed": self.n_addressed if categories else None,
            "n_missed": self.n_missed if categories else None,
            "n_not_applicable": sum(1 for c in self.categories if c.status == "n/a")
            if scored
            else None,
            "n_additions": len(self.ledger) if additions else None,
            "n_valid_necessary": self.count("valid-necessary") if additions else None,
            "n_valid_defensive": self.count("valid-defensive") if additions else None,
            "n_invalid": self.count("invalid") if additions else None,
            "n_justified": self.n_justified if additions else None,
            "n_master": self.n_master if scored else None,
            "n_master_matched": len(self.master_matched)
            if scored and self.n_master and not self.n_addition_candidates
            else None,
            "n_candidates": self.n_candidates if scored else None,
            "reason": self.reason,
            "judge": "+".join(self.judges) if scored else None,
            "heuristic": HEURISTIC_JUDGE in self.judges if scored else None,
        }
        dtypes = {c: "Float64" for c in SUMMARY_COLUMNS if c in _RATIOS} | {
            c: "Int64" for c in SUMMARY_COLUMNS if c.startswith("n_")
        }
        frame = pd.DataFrame([row], columns=SUMMARY_COLUMNS)
        return frame.astype(
            {**dtypes, "heuristic": "boolean", "judge": "string", "reason": "string"}
        )


# --- trace -------------------------------------------------------------------------------


def overlap(a: frozenset[str], b: frozenset[str]) -> tuple[float, int]:
    """(max(|a∩b|/|a|, |a∩b|/|b|), |a∩b|); (0, 0) when either side is empty."""
    if not a or not b:
        return 0.0, 0
    common = len(a & b)
    return max(common / len(a), common / len(b)), common


def prd_id_pattern(prd: PRD) -> re.Pattern[str] | None:
    """Word-bounded PRD AC and story ids (`S1-AC2`, `S5`), longest first."""
    ids = {ac.id for s in prd.stories for ac in s.acs} | {s.id for s in prd.stories}
    if not ids:
        return None
    alternatives = "|".join(re.escape(i) for i in sorted(ids, key=lambda i: (-len(i), i)))
    return re.compile(rf"(?<![\w-])({alternatives})(?![\w-])")


def prd_vocabulary(prd: PRD) -> frozenset[str]:
    """Content tokens of every AC and story title: what the PRD sanctions."""
    texts = [ac.text for s in prd.stories for ac in s.acs] + [s.title for s in prd.stories]
    return frozenset().union(*(content_tokens(t) for t in texts))


def out_of_scope_of(
    prd: PRD, rubric: ElicitationRubric, artifacts: SpecArtifacts | None = None
) -> OutOfScope:
    """The PRD's out-of-scope items as whole phrases plus the rubric's frozen keywords; no
    keyword is ever derived from an item's words (`exclusions`)."""
    return out_of_scope(prd, rubric.out_of_scope_keywords, artifacts)


def best_ac(
    tokens: frozenset[str], ac_tokens: Mapping[str, frozenset[str]]
) -> tuple[str | None, float, int]:
    best: tuple[str | None, float, int] = (None, 0.0, 0)
    for ac_id, target in ac_tokens.items():
        score, common = overlap(tokens, target)
        if (score, common) > (best[1], best[2]):
            best = (ac_id, score, common)
    return best


def trace_items(
    prd: PRD, artifacts: SpecArtifacts, rubric: ElicitationRubric
) -> tuple[ItemTrace, ...]:
    """Every item's trace (rules in the module docstring), in artifact order."""
    items = list(artifacts.items)
    spec_keys: dict[str, str] = {}
    for item in artifacts.spec_items():
        for key in item.keys:
            spec_keys.setdefault(key, item.item_id)
    story_keys = {h.story_key for h in artifacts.headings if h.story_key}
    ids = prd_id_pattern(prd)
    ac_tokens = {ac.id: content_tokens(ac.text) for s in prd.stories for ac in s.acs}
    tokens = {i.item_id: content_tokens(i.text) for i in items}
    threshold, minimum = rubric.trace_threshold, rubric.trace_min_overlap

    def lexical(item: SpecItem) -> ItemTrace | None:
        ac_id, score, common = best_ac(tokens[item.item_id], ac_tokens)
        if ac_id is not None and score >= threshold and common >= minimum:
            return ItemTrace(item=item, trace="prd-lexical", target=ac_id, score=round(score, 4))
        return None

    traces: dict[str, ItemTrace] = {}
    for item in items:
        refs = item.spec_refs + item.heading_refs
        resolved = list(
            dict.fromkeys(
                spec_keys[r] for r in refs if r in spec_keys and spec_keys[r] != item.item_id
            )
        )
        stories = [r for r in item.spec_refs if r in story_keys] if item.role == "tasks" else []
        prd_refs = sorted(set(ids.findall(item.text))) if ids else []
        if resolved or stories:
            trace = ItemTrace(item=item, trace="restates", target=",".join(resolved + stories))
        elif item.role == "spec" and DECLARED_ADDITION.search(item.text):
            trace = ItemTrace(
                item=item, trace="declared-addition", target=",".join(prd_refs) or None
            )
        elif prd_refs:
            trace = ItemTrace(item=item, trace="prd-ref", target=",".join(prd_refs))
        else:
            trace = lexical(item) or ItemTrace(item=item, trace="addition")
        traces[item.item_id] = trace

    _trace_tasks(items, traces, tokens, artifacts, threshold, minimum)
    _deduplicate(items, traces, tokens, threshold, minimum)
    return tuple(traces[i.item_id] for i in items)


def _trace_tasks(
    items: list[SpecItem],
    traces: dict[str, ItemTrace],
    tokens: Mapping[str, frozenset[str]],
    artifacts: SpecArtifacts,
    threshold: float,
    minimum: int,
) -> None:
    """Tasks that are still additions: groups, lexical restatements of spec items, tooling."""
    children: dict[str, list[str]] = {}
    for item in items:
        if item.parent_id:
            children.setdefault(item.parent_id, []).append(item.item_id)
    spec_items = artifacts.spec_items()
    for item in reversed(items):
        if item.role != "tasks" or traces[item.item_id].trace != "addition":
            continue
        kids = children.get(item.item_id, [])
        if any(not traces[k].candidate for k in kids):
            traces[item.item_id] = ItemTrace(item=item, trace="group", target=",".join(kids))
            continue
        best: tuple[str | None, float, int] = (None, 0.0, 0)
        for spec in spec_items:
            score, common = overlap(tokens[item.item_id], tokens[spec.item_id])
            if (score, common) > (best[1], best[2]):
                best = (spec.item_id, score, common)
        if best[0] is not None and best[1] >= threshold and best[2] >= minimum:
            traces[item.item_id] = ItemTrace(
                item=item, trace="restates", target=best[0], score=round(best[1], 4)
            )
        elif TOOLING_TASK.search(item.text):
            traces[item.item_id] = ItemTrace(item=item, trace="tooling")


def _deduplicate(
    items: list[SpecItem],
    traces: dict[str, ItemTrace],
    tokens: Mapping[str, frozenset[str]],
    threshold: float,
    minimum: int,
) -> None:
    order = {item.item_id: n for n, item in enumerate(items)}
    candidates = sorted(
        (i for i in items if traces[i.item_id].candidate),
        key=lambda i: (not i.explicit_id, i.role != "spec", order[i.item_id]),
    )
    accepted: list[SpecItem] = []
    for item in candidates:
        match = None
        # Items the author numbered are kept as they are (SPEC: stable requirement ids are
        # used as-is, never merged); only unnumbered items can restate an earlier addition.
        for kept in [] if item.explicit_id else accepted:
            score, common = overlap(tokens[item.item_id], tokens[kept.item_id])
            if score >= threshold and common >= minimum:
                match = (kept, score)
                break
        if match is None:
            accepted.append(item)
        else:
            traces[item.item_id] = ItemTrace(
                item=item, trace="restates", target=match[0].item_id, score=round(match[1], 4)
            )


# --- ledger, categories, metrics ---------------------------------------------------------


def category_matches(text: str, categories: Sequence[Category]) -> tuple[str, ...]:
    """Ids of the categories whose pattern matches the text, in rubric order."""
    return tuple(c.id for c in categories if c.regex.search(text))


def is_justified(text: str, prd_ids: re.Pattern[str] | None) -> bool:
    return bool(JUSTIFICATION.search(text) or (prd_ids and prd_ids.search(text)))


def _searches(keywords: Sequence[str], text: str) -> bool:
    return any(compile_untrusted(k, ignore_case=True).search(text) for k in keywords)


def _master_for(text: str, master: MasterList | None) -> str | None:
    if master is None:
        return None
    for item in master.items:
        if _searches(item.keywords, text):
            return item.id
    return None


def code_keywords_of(text: str) -> tuple[str, ...]:
    """Code-like tokens of a requirement text (backticked spans, snake_case identifiers,
    HTTP status codes), escaped as regexes: what an implementation search looks for."""
    found: list[str] = []
    for m in CODE_KEYWORD.finditer(text):
        token = next(g for g in m.groups() if g)
        found.append(rf"\b{re.escape(token)}\b" if token.isdigit() else re.escape(token))
    return tuple(dict.fromkeys(found))


def _keywords(
    entry_keywords: tuple[str, ...], master_id: str | None, text: str, master: MasterList | None
) -> tuple[tuple[str, ...], bool]:
    """(keywords to search, whether a human froze them): the adjudicator's, else the
    master item's, else code-like tokens of the text (which only propose)."""
    if entry_keywords:
        return entry_keywords, True
    if master is not None and master_id is not None:
        item = next((m for m in master.items if m.id == master_id), None)
        if item is not None:
            return item.code_keywords or item.keywords, True
    return code_keywords_of(text), False


def find_keyword(keywords: Sequence[str], files: Mapping[str, str]) -> tuple[str, int] | None:
    """First (path, line) in path order where any keyword regex matches, else None."""
    if not keywords:
        return None
    pattern = compile_untrusted("|".join(f"(?:{k})" for k in keywords), ignore_case=True)
    for path in sorted(files):
        for number, line in enumerate(files[path].split("\n"), start=1):
            if pattern.search(line):
                return path, number
    return None


def compute_elicitation(
    prd: PRD,
    artifacts: SpecArtifacts,
    judges: Sequence[ElicitationJudge],
    *,
    rubric: ElicitationRubric | None = None,
    master: MasterList | None = None,
    production_files: Mapping[str, str] | None = None,
    pooled_labels: Mapping[str, str] | None = None,
) -> ElicitationResult:
    """E for one framework run. `judges` in precedence order (labels first, heuristic last);
    `production_files` (path → text, test files excluded) decides implemented vs pending."""
    if not artifacts.present:
        return ElicitationResult(status=NO_SPEC)
    rubric = rubric or ElicitationRubric()
    request = ElicitationRequest(
        prd=prd,
        artifacts=artifacts,
        traces=trace_items(prd, artifacts, rubric),
        rubric=rubric,
        out_of_scope=out_of_scope_of(prd, rubric, artifacts),
        master=master,
    )
    ledger = _ledger(request, judges, production_files or {})
    categories = _categories(request, judges, ledger)
    used = {e.judge for e in ledger} | {c.judge for c in categories if c.status != "n/a"}
    matched = _pooled(request, ledger, pooled_labels or {})
    return ElicitationResult(
        status=SCORED,
        traces=request.traces,
        ledger=tuple(ledger),
        categories=tuple(categories),
        master_matched=matched,
        n_master=len(master.items) if master is not None else None,
        judges=tuple(j.judge_id for j in judges if j.judge_id in used),
    )


def _ledger(
    request: ElicitationRequest,
    judges: Sequence[ElicitationJudge],
    production_files: Mapping[str, str],
) -> list[LedgerEntry]:
    answers = [j.judge_additions(request) for j in judges]
    restated: dict[str, list[str]] = {}
    for trace in request.traces:
        if trace.trace == "restates" and trace.target:
            for target in trace.target.split(","):
                restated.setdefault(target, []).append(trace.item.item_id)
    categories = request.rubric.all_categories()
    rubric_ids = {c.id for c in categories}
    master_category = {m.id: m.category for m in request.master.items} if request.master else {}
    prd_ids = prd_id_pattern(request.prd)
    ledger: list[LedgerEntry] = []
    for trace in request.traces:
        item = trace.item
        judgement = next((a[item.item_id] for a in answers if item.item_id in a), None)
        if judgement is None or judgement.verdict not in (*VALID, "invalid", CANDIDATE):
            continue
        verdict: AdditionVerdict = judgement.verdict  # type: ignore[assignment]
        master_id = judgement.master_id or _master_for(item.text, request.master)
        justified = (
            judgement.justified
            if judgement.justified is not None
            else is_justified(item.text, prd_ids)
        )
        matched = category_matches(item.text, categories)
        linked = master_category.get(master_id or "")
        if linked in rubric_ids:
            matched = (linked, *(c for c in matched if c != linked))
        entry = LedgerEntry(
            item=item,
            verdict=verdict,
            rationale=judgement.rationale,
            judge=judgement.judge,
            categories=matched,
            justified=justified,
            master_id=master_id,
            restated_by=tuple(restated.get(item.item_id, ())),
        )
        if entry.valid:
            keywords, frozen = _keywords(judgement.keywords, master_id, item.text, request.master)
            hit = find_keyword(keywords, production_files)
            status: Implementation
            if not keywords:
                status = "unsearched"
            elif DEFERRAL.search(item.text) and hit is None:
                status = "pending-deferred"
            elif not frozen:
                status = "unadjudicated"
            else:
                status = "implemented" if hit is not None else "pending"
            entry = entry.model_copy(
                update={
                    "keywords": keywords,
                    "implementation": status,
                    "implementation_ref": f"{hit[0]}:{hit[1]}" if hit else None,
                }
            )
        ledger.append(entry)
    return ledger


def _categories(
    request: ElicitationRequest,
    judges: Sequence[ElicitationJudge],
    ledger: Sequence[LedgerEntry],
) -> list[CategoryRow]:
    answers = [j.judge_categories(request, ledger) for j in judges]
    rows: list[CategoryRow] = []
    for category in request.rubric.all_categories():
        if category.id in request.rubric.not_applicable:
            rows.append(
                CategoryRow(
                    category_id=category.id,
                    category=category.name,
                    status="n/a",
                    ref=None,
                    judge="rubric",
                    rationale=request.rubric.not_applicable[category.id],
                )
            )
            continue
        judgement = next((a[category.id] for a in answers if category.id in a), None)
        if judgement is None:
            judgement = CategoryJudgement(
                status=CANDIDATE, ref=None, rationale="no judge answered", judge="none"
            )
        rows.append(
            CategoryRow(
                category_id=category.id,
                category=category.name,
                status=judgement.status,
                ref=judgement.ref,
                judge=judgement.judge,
                rationale=judgement.rationale,
            )
        )
    return rows


def _pooled(
    request: ElicitationRequest, ledger: Sequence[LedgerEntry], labels: Mapping[str, str]
) -> dict[str, str]:
    """master id → where this run surfaces it: labels, then the ledger's master links, then
    master keywords over the valid additions and the items restating them."""
    master = request.master
    if master is None:
        return {}
    known = {m.id for m in master.items}
    matched: dict[str, str] = {k: v for k, v in labels.items() if k in known}
    by_id = {t.item.item_id: t.item for t in request.traces}
    for entry in ledger:
        if not entry.valid:
            continue
        if entry.master_id in known:
            matched.setdefault(entry.master_id, entry.ref)
        for text, where in [(entry.item.text, entry.ref)] + [
            (by_id[r].text, by_id[r].ref) for r in entry.restated_by if r in by_id
        ]:
            for item in master.items:
                if _searches(item.keywords, text):
                    matched.setdefault(item.id, where)
    return dict(sorted(matched.items()))


def anchored(text: str, prd: PRD) -> bool:
    """Whether a text shares at least one content word with the PRD's ACs and titles."""
    return bool(content_tokens(text) & prd_vocabulary(prd))
