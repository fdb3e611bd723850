"""The shared model of an imported PRD, its priority mapping and its `prd.md` rendering.

Every importer produces an `ImportedPRD`; `render_prd` writes it in evalflow's own PRD
dialect (`evalflow.domain.prd`), so `prd.md` is read back by the same parser that reads a
hand-written PRD, and `check_round_trip` proves the ids, texts and priorities survive that.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from evalflow.domain.models import Priority
from evalflow.domain.prd import parse_prd
from evalflow.errors import InputError
from evalflow.importers.mdtext import outside_code

PriorityMap = Mapping[str, Priority]

# spec-kit numbers from P1 (the MVP); evalflow weighs P0 = 3, P1 = 2, P2 = 0 (SPEC): the
# parser's table (`SPEC_KIT_PRIORITY_MAP`) is the one the importer uses.
# Formats that label with P0-P2 (or words) keep evalflow's meaning; P3+ never counts.
DEFAULT_PRIORITIES: dict[str, Priority] = {
    "P0": "P0", "P1": "P1", "P2": "P2", "P3": "P2", "P4": "P2", "P5": "P2",
    "CRITICAL": "P0", "HIGH": "P0", "MUST": "P0", "MEDIUM": "P1", "SHOULD": "P1",
    "LOW": "P2", "COULD": "P2",
}  # fmt: skip
ASSUMED_PRIORITY: Priority = "P1"
_PAIR = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=\s*(P[012])\s*$")


def parse_priority_map(spec: str, base: PriorityMap) -> dict[str, Priority]:
    """`P1=P0,P2=P1,...` over `base`; a malformed pair is one `InputError`."""
    mapping = dict(base)
    for pair in filter(None, (p.strip() for p in spec.split(","))):
        m = _PAIR.match(pair)
        if not m:
            raise InputError(
                f"invalid priority mapping entry {pair!r}",
                where="--priority-map",
                fix="write LABEL=P0|P1|P2 pairs separated by commas, e.g. P1=P0,P2=P1,P3=P2",
            )
        mapping[m.group(1).upper()] = m.group(2)  # type: ignore[assignment]
    return mapping


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ImportedAC(Frozen):
    id: str
    text: str = Field(description="the source's own wording (bold and whitespace normalised)")
    source: str = Field(description="file:line it was read from")


class ImportedStory(Frozen):
    id: str
    title: str
    label: str | None = Field(description="the priority label as the source wrote it")
    priority: Priority
    assumed: bool
    acs: tuple[ImportedAC, ...]
    source: str


class ImportedPRD(Frozen):
    format: str
    title: str
    spec_dir: str = Field(description="the framework's spec folder, relative to the repo root")
    sources: tuple[str, ...]
    stories: tuple[ImportedStory, ...]
    out_of_scope: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = ()
    requirements: tuple[str, ...] = Field(default=(), description="FR-xxx etc., for reference")
    edge_cases: tuple[str, ...] = ()
    notes: tuple[str, ...] = Field(default=(), description="what the import decided and why")


def resolve_priority(label: str | None, mapping: PriorityMap) -> tuple[Priority, bool]:
    """evalflow's priority for a source label and whether it is ASSUMED (none or unknown)."""
    if label is not None and label.upper() in mapping:
        return mapping[label.upper()], False
    return ASSUMED_PRIORITY, True


def story(
    story_id: str,
    title: str,
    label: str | None,
    acs: list[ImportedAC],
    source: str,
    mapping: PriorityMap,
) -> ImportedStory:
    priority, assumed = resolve_priority(label, mapping)
    return ImportedStory(
        id=story_id,
        title=title.strip() or story_id,
        label=label,
        priority=priority,
        assumed=assumed,
        acs=tuple(ac.model_copy(update={"text": ac_text(ac.text)}) for ac in acs),
        source=source,
    )


def ac_text(text: str) -> str:
    """The AC's wording without bold markup (`**Given**` → `Given`), whitespace normalised:
    the words are the source's, the emphasis is layout."""
    return _one_line(outside_code(r"\*\*|__", text))


def priority_assumptions(stories: tuple[ImportedStory, ...]) -> list[str]:
    """One line per ASSUMED story priority (SPEC reproducibility rule 2)."""
    out = []
    for s in stories:
        if s.assumed:
            why = "no priority label" if s.label is None else f"unknown priority label {s.label!r}"
            out.append(f"Story {s.id} ({s.title}): {why}; priority ASSUMED {s.priority}.")
    return out


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def render_prd(prd: ImportedPRD, mapping: PriorityMap, commit: str) -> str:
    """`prd.md` in evalflow's PRD dialect (deterministic: no timestamp)."""
    used = ", ".join(f"{k}→{v}" for k, v in sorted(mapping.items()) if re.match(r"P\d$", k))
    lines = [
        f"# PRD: {_one_line(prd.title)}",
        "",
        f"Imported by `evalflow init --from {prd.format}` from {', '.join(prd.sources)} at "
        f"commit `{commit}`. Acceptance criteria keep the source's wording; their ids are "
        f"stable (derived from the source's numbering). Priority mapping: {used}. A story "
        "without a known label carries no label here and is listed under Recorded "
        f"assumptions (ASSUMED {ASSUMED_PRIORITY}).",
        "",
    ]
    for s in prd.stories:
        label = "" if s.assumed else f" ({s.priority})"
        origin = "no priority label" if s.label is None else f"source priority {s.label}"
        lines += [
            f"## Story {s.id}: {_one_line(s.title)}{label}",
            "",
            f"Source: {s.source} · {origin}.",
            "",
        ]
        lines += ["Acceptance criteria:"]
        lines += [f"- {ac.id}: {_one_line(ac.text)}" for ac in s.acs]
        lines.append("")
    if prd.out_of_scope:
        lines += ["## Out of scope", ""]
        lines += [f"- {_one_line(item)}" for item in prd.out_of_scope]
        lines.append("")
    recorded = [*priority_assumptions(prd.stories), *prd.assumptions]
    for heading, items in (
        ("Recorded assumptions", recorded),
        ("Reference: functional requirements (not scored)", prd.requirements),
        ("Reference: edge cases (not scored)", prd.edge_cases),
        ("Import notes", prd.notes),
    ):
        if items:
            lines += [f"## {heading}", ""]
            lines += [f"- {_one_line(item)}" for item in items]
            lines.append("")
    return "\n".join(lines)


def check_round_trip(prd: ImportedPRD, text: str) -> None:
    """`text` (from `render_prd`) parses back to the same stories, ACs and priorities."""
    parsed = parse_prd(text, "prd.md", assumed_priority=ASSUMED_PRIORITY)
    want = [
        (s.id, s.priority, s.assumed, [(a.id, _one_line(a.text)) for a in s.acs])
        for s in prd.stories
    ]
    got = [(s.id, s.priority, s.assumed, [(a.id, a.text) for a in s.acs]) for s in parsed.stories]
    if want != got:
        first = next(
            (w, g) for w, g in zip(want + [None] * len(got), got + [None] * len(want), strict=True)
            if w != g
        )  # fmt: skip
        raise InputError(
            f"the imported PRD does not read back the same (first difference: {first[0]!r} "
            f"became {first[1]!r})",
            where="prd.md",
            fix="report this as an evalflow bug with the source file; meanwhile write prd.md "
            "by hand (docs/importers/)",
        )


def choose_feature(
    spec: str | None,
    features: list[str],
    *,
    document: str,
    layout: str,
    framework: str,
    notes: list[str],
) -> str:
    """The feature folder to import and the path of its `document`: `spec` when given, else
    the latest of `features` (sorted), with a note when there were several to choose from."""
    if spec is None:
        if not features:
            raise InputError(
                f"no {framework} feature found ({layout})",
                where="repository",
                fix=f"pass --spec DIR with the feature folder that holds {document}",
            )
        spec = features[-1]
        if len(features) > 1:
            notes.append(f"{len(features)} {framework} features found; imported {spec} (--spec).")
    return spec.strip("/")
