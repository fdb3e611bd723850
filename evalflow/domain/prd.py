"""Parsing a PRD (or a spec-kit `spec.md`) from Markdown into stories, ACs and exclusions.

Two dialects:
- `prd`: stories are headings carrying a priority label (`(P0)`, `[P1]`, `Priority: P2`) or
  named like a story (`Story S1: …`, `US-3 …`); their ACs are the list items under the story
  (under an "Acceptance criteria" label when there is one). An out-of-scope section is any
  heading that reads like one (out of scope, non-goals, not in scope, exclusions).
- `spec-kit`: `### User Story 1 - Title (Priority: P1)` with an "Acceptance Scenarios" list;
  its P1–P5 labels map onto evalflow's P0/P1/P2 by a table (`SPEC_KIT_PRIORITY_MAP`: P1→P0,
  P2→P1, P3/P4/P5→P2).

`priority_mapping` entries (a baseline's `priority_map:`, `--priority-map`) are laid over the
dialect's own table (spec-kit's above; P0/P1/P2 as themselves in the `prd` dialect), so a
benchmark names only the labels it changes or adds.

A story without a label, or with a label the dialect (or the mapping) does not know, gets
`assumed_priority` and `assumed=True`; the report lists it under assumptions (SPEC
reproducibility rule 2: never fatal, never silent). Out-of-scope items are the list items
under an out-of-scope heading ("Out of Scope", "Non-Goals", ...) and the items under an
"Assumptions" heading that say they are excluded; a nested bullet belongs to its parent item,
so each item is kept whole. Malformed input raises `InputError` naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from evalflow.domain.models import PRD, AcceptanceCriterion, OutOfScopeItem, Priority, Story
from evalflow.errors import InputError

Dialect = Literal["auto", "prd", "spec-kit"]

SPEC_KIT_PRIORITY_MAP: Mapping[str, Priority] = {
    "P1": "P0",
    "P2": "P1",
    "P3": "P2",
    "P4": "P2",
    "P5": "P2",
}
# The `prd` dialect's labels are evalflow's own.
PRD_PRIORITY_MAP: Mapping[str, Priority] = {"P0": "P0", "P1": "P1", "P2": "P2"}

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
_PRIORITY = re.compile(
    r"(?:\(\s*(?:priority\s*:\s*)?(P\d)\s*\)|\[\s*(P\d)\s*\]|priority\s*:\s*(P\d)\b|\b(P\d)\s*$)",
    re.IGNORECASE,
)
_STORY_NAME = re.compile(
    r"^(?:(?:user\s+)?story\s+([A-Za-z]*-?\d+(?:\.\d+)*)|(US-?\d+)|(S\d+))\b\s*[:.\-–—]?\s*",
    re.IGNORECASE,
)
_SPEC_KIT_STORY = re.compile(r"^user\s+story\s+(\d+)\s*[-–—:]\s*(.*)$", re.IGNORECASE)
_OUT_OF_SCOPE = re.compile(
    r"out[\s-]of[\s-]scope|non[\s-]?goals?|not\s+in\s+scope|exclusions?|won'?t\s+do",
    re.IGNORECASE,
)
_ASSUMPTIONS = re.compile(r"^assumptions?\b", re.IGNORECASE)
# An assumption that states an exclusion is an out-of-scope item (spec-kit often files them so).
_EXCLUSION = re.compile(
    r"out[\s-]of[\s-]scope|non[\s-]?goals?|not\s+(?:in\s+scope|included|supported|part\s+of)"
    r"|\bexcluded\b|\bdeferred\b|won'?t\s+(?:be|do|support)|will\s+not\s+(?:be|support)",
    re.IGNORECASE,
)
# A bullet that only labels the exclusions nested under it ("**Out of scope**:").
_EXCLUSION_LABEL = re.compile(
    r"^[*_\s]*(?:out[\s-]of[\s-]scope|non[\s-]?goals?|not\s+in\s+scope|exclusions?)"
    r"(?:\s*\([^)]*\))?[*_\s]*:?[*_\s]*$",
    re.IGNORECASE,
)
_AC_LABEL = re.compile(r"^\**\s*(acceptance\s+(criteria|scenarios))\b", re.IGNORECASE)
_AC_ID = re.compile(
    r"^(?:\*\*|`)?\s*((?:[A-Za-z]+\d*(?:\.\d+)*-)?AC-?\d+(?:\.\d+)?|[A-Z]+-\d+(?:\.\d+)?)\s*(?:\*\*|`)?"
    r"\s*[:.\-–—)]?\s*(?:\*\*)?\s*"
)
_FENCE = re.compile(r"^\s*(```|~~~)")


def is_out_of_scope_heading(text: str) -> bool:
    """A heading whose every list item is out of scope ("Out of Scope", "Non-Goals", ...)."""
    return bool(_OUT_OF_SCOPE.search(text)) and not _PRIORITY.search(text)


def is_assumptions_heading(text: str) -> bool:
    return bool(_ASSUMPTIONS.match(text))


def states_exclusion(text: str) -> bool:
    """An assumption that says something is excluded (an out-of-scope item)."""
    return bool(_EXCLUSION.search(text))


def is_exclusion_label(text: str) -> bool:
    """A bullet that only labels the exclusions nested under it ("**Out of scope**:")."""
    return bool(_EXCLUSION_LABEL.match(text))


@dataclass
class _StoryDraft:
    id: str
    title: str
    priority: str | None
    line: int
    level: int
    acs: list[AcceptanceCriterion] = field(default_factory=list)
    saw_ac_label: bool = False
    # List items seen before any "Acceptance criteria" label: the ACs unless a label follows.
    candidates: list[AcceptanceCriterion] = field(default_factory=list)

    def items(self) -> list[AcceptanceCriterion]:
        return self.acs if self.saw_ac_label else self.candidates


def _detect_dialect(lines: list[str]) -> Literal["prd", "spec-kit"]:
    for line in lines:
        m = _HEADING.match(line)
        if m and _SPEC_KIT_STORY.match(m.group(2)) and "priority" in m.group(2).lower():
            return "spec-kit"
    return "prd"


def _priority_label(title: str) -> tuple[str | None, str]:
    m = _PRIORITY.search(title)
    if not m:
        return None, title
    label = next(g for g in m.groups() if g).upper()
    stripped = (title[: m.start()] + title[m.end() :]).strip(" -–—:")
    return label, stripped


def _normalise_priority(label: str | None, mapping: Mapping[str, Priority]) -> Priority | None:
    """evalflow's priority for a story's label; None when there is none or it is unknown."""
    return None if label is None else mapping.get(label.upper())


def parse_prd(
    text: str,
    source: str = "<prd>",
    *,
    dialect: Dialect = "auto",
    priority_mapping: Mapping[str, Priority] | None = None,
    assumed_priority: Priority = "P1",
) -> PRD:
    """Parse PRD Markdown. Raises `InputError` (file:line + fix) on malformed input."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    resolved = _detect_dialect(lines) if dialect == "auto" else dialect
    own = SPEC_KIT_PRIORITY_MAP if resolved == "spec-kit" else PRD_PRIORITY_MAP
    mapping = {**own, **{k.upper(): v for k, v in (priority_mapping or {}).items()}}

    title = ""
    stories: list[_StoryDraft] = []
    out_of_scope: list[OutOfScopeItem] = []
    current: _StoryDraft | None = None
    in_oos_level: int | None = None
    # "all": every item is out of scope; "stated": only items that say they are excluded.
    oos_mode: Literal["all", "stated"] = "all"
    # Inside an Assumptions section, the nested items of an "Out of scope:" bullet are items.
    label_open = False
    in_fence = False
    # The list a continuation line (indented, no marker) extends; None after a paragraph break.
    open_list: list | None = None

    for number, raw in enumerate(lines, start=1):
        if _FENCE.match(raw):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        heading = _HEADING.match(raw)
        if heading:
            level, htext = len(heading.group(1)), heading.group(2)
            open_list = None
            if level == 1 and not title:
                title = htext
                continue
            if in_oos_level is not None and level > in_oos_level:
                continue
            in_oos_level = None
            if not _PRIORITY.search(htext) and (
                _OUT_OF_SCOPE.search(htext) or _ASSUMPTIONS.match(htext)
            ):
                in_oos_level = level
                oos_mode = "all" if _OUT_OF_SCOPE.search(htext) else "stated"
                label_open = False
                current = None
                continue
            if current is not None and level > current.level:
                if _AC_LABEL.match(htext):
                    current.saw_ac_label = True
                continue
            current = _story_from_heading(htext, level, number, resolved, len(stories) + 1)
            if current is not None:
                stories.append(current)
            continue

        item = _LIST_ITEM.match(raw)
        if item and item.group(1) and in_oos_level is not None and label_open:
            out_of_scope.append(OutOfScopeItem(text=_clean(item.group(2)), line=number))
            open_list = out_of_scope
            continue
        if item and item.group(1) and open_list:
            # A nested bullet belongs to the item above it: the item is kept whole.
            _continue_item(open_list, item.group(2), nested=True)
            continue
        if item and not item.group(1):
            if in_oos_level is not None:
                text = _clean(item.group(2))
                label_open = oos_mode == "stated" and bool(_EXCLUSION_LABEL.match(text))
                if oos_mode == "all" or (not label_open and _EXCLUSION.search(text)):
                    out_of_scope.append(OutOfScopeItem(text=text, line=number))
                    open_list = out_of_scope
                else:
                    open_list = None
            elif current is not None:
                target = current.items()
                target.append(_ac(current, target, item.group(2), number))
                open_list = target
            continue
        if current is not None and in_oos_level is None and _AC_LABEL.match(raw.strip()):
            current.saw_ac_label = True
            open_list = None
            continue
        if not raw.strip():
            continue
        if open_list and raw.startswith((" ", "\t")) and not item:
            _continue_item(open_list, raw)
            continue
        if not raw.startswith((" ", "\t")):
            open_list = None

    built: list[Story] = []
    seen_story: dict[str, int] = {}
    seen_ac: dict[str, int] = {}
    for draft in stories:
        draft.acs = draft.items()
        if not draft.acs:
            raise InputError(
                f"story {draft.id!r} has no acceptance criteria",
                where=f"{source}:{draft.line}",
                fix="list its ACs as Markdown list items under the story heading",
            )
        if draft.id in seen_story:
            raise InputError(
                f"duplicate story id {draft.id!r} (first at line {seen_story[draft.id]})",
                where=f"{source}:{draft.line}",
                fix="give every story a unique id",
            )
        seen_story[draft.id] = draft.line
        for ac in draft.acs:
            if ac.id in seen_ac:
                raise InputError(
                    f"duplicate AC id {ac.id!r} (first at line {seen_ac[ac.id]})",
                    where=f"{source}:{ac.line}",
                    fix="give every acceptance criterion a unique id",
                )
            seen_ac[ac.id] = ac.line
        known = _normalise_priority(draft.priority, mapping)
        priority, assumed = (assumed_priority, True) if known is None else (known, False)
        built.append(
            Story(
                id=draft.id,
                title=draft.title,
                priority=priority,
                assumed=assumed,
                acs=tuple(draft.acs),
                line=draft.line,
            )
        )
    if not built:
        raise InputError(
            "no user stories found",
            where=source,
            fix="mark each story as a heading with a priority label, e.g. '## Story S1: Sign up (P0)'",  # noqa: E501
        )
    return PRD(
        title=title or source, stories=tuple(built), out_of_scope=tuple(out_of_scope), source=source
    )


def _story_from_heading(
    htext: str, level: int, line: int, dialect: str, ordinal: int
) -> _StoryDraft | None:
    label, rest = _priority_label(htext)
    if dialect == "spec-kit":
        m = _SPEC_KIT_STORY.match(rest)
        if not m:
            return None
        return _StoryDraft(
            id=f"US{m.group(1)}", title=m.group(2).strip(), priority=label, line=line, level=level
        )
    named = _STORY_NAME.match(rest)
    if not named and label is None:
        return None
    story_id = f"S{ordinal}"
    title = rest
    if named:
        token = next(g for g in named.groups() if g)
        story_id = token.upper() if not token.isdigit() else f"S{token}"
        title = rest[named.end() :].strip() or rest
    return _StoryDraft(id=story_id, title=title, priority=label, line=line, level=level)


def _ac(
    story: _StoryDraft, siblings: list[AcceptanceCriterion], body: str, line: int
) -> AcceptanceCriterion:
    m = _AC_ID.match(body)
    if m and ("AC" in m.group(1).upper() or m.group(1).upper().startswith(story.id.upper())):
        ac_id = m.group(1)
        text = body[m.end() :]
    else:
        ac_id = f"{story.id}-AC{len(siblings) + 1}"
        text = body
    return AcceptanceCriterion(id=ac_id, text=_clean(text), line=line)


def _continue_item(items: list, raw: str, *, nested: bool = False) -> None:
    last = items[-1]
    glue = " " if not nested or last.text.endswith((":", ";", ",")) else "; "
    items[-1] = last.model_copy(update={"text": f"{last.text}{glue}{_clean(raw)}"})


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
