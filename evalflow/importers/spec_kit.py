"""spec-kit (github/spec-kit): `specs/NNN-feature/spec.md` → `ImportedPRD`.

Read: `### User Story N - Title (Priority: Pn)` with its "Acceptance Scenarios" list
(Given/When/Then) — scenario k of story N becomes AC `USN-ACk`; the early template's single
"Primary User Story" becomes `US1` (priority ASSUMED); a story without scenarios contributes
its "Independent Test" as its one AC (noted). FR-xxx requirements and Edge Cases are listed for
reference; "Out of Scope"/"Non-Goals" items and exclusions stated under "Assumptions" form the
out-of-scope list, the other assumptions are kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from evalflow.domain.prd import SPEC_KIT_PRIORITY_MAP
from evalflow.errors import InputError
from evalflow.importers.mdtext import Doc, Heading, parse_doc, scope_lists, strip_emphasis, where
from evalflow.importers.model import (
    ImportedAC,
    ImportedPRD,
    PriorityMap,
    choose_feature,
    story,
)

_FEATURE_DIR = re.compile(r"^(?:\.specify/)?specs/(\d+)-[^/]+$")
_STORY = re.compile(r"^user\s+story\s+(\d+)\s*[-–—:]\s*(.*)$", re.IGNORECASE)
_PRIMARY = re.compile(r"^primary\s+user\s+story\b", re.IGNORECASE)
_PRIORITY = re.compile(r"\(\s*priority\s*:\s*([A-Za-z0-9]+)\s*\)", re.IGNORECASE)
_SCENARIOS = re.compile(r"^acceptance\s+(scenarios|criteria)\b", re.IGNORECASE)
_INDEPENDENT = re.compile(r"^\s*independent\s+test\s*:\s*(.+)$", re.IGNORECASE)
_REQUIREMENT = re.compile(r"^((?:FR|NFR|SC)-\d+)\s*:?\s*(.*)$")
_EDGE = re.compile(r"^edge\s+cases\b", re.IGNORECASE)


def feature_dirs(paths: list[str]) -> list[str]:
    """spec-kit feature folders holding a spec.md, in feature-number order."""
    dirs = {p.rsplit("/", 1)[0] for p in paths if p.endswith("/spec.md")}
    found = [d for d in dirs if _FEATURE_DIR.match(d)]
    return sorted(found, key=lambda d: (int(_FEATURE_DIR.match(d).group(1)), d))  # type: ignore[union-attr]


def import_spec_kit(
    files: Mapping[str, str], spec: str | None = None, priorities: PriorityMap | None = None
) -> ImportedPRD:
    mapping = priorities or SPEC_KIT_PRIORITY_MAP
    notes: list[str] = []
    spec = choose_feature(
        spec,
        feature_dirs(list(files)),
        document="spec.md",
        layout="specs/NNN-*/spec.md",
        framework="spec-kit",
        notes=notes,
    )
    path = f"{spec}/spec.md"
    if path not in files:
        raise InputError("spec.md not found", where=path, fix="pass --spec the feature folder")
    doc = parse_doc(path, files[path])
    stories, story_notes = _stories(doc, mapping)
    notes += story_notes
    if not stories:
        raise InputError(
            "no user stories found in spec.md",
            where=path,
            fix="spec-kit stories read '### User Story 1 - Title (Priority: P1)'",
        )
    oos, assumptions = scope_lists(doc)
    requirements, edges = [], []
    for h in doc.headings:
        if _EDGE.match(h.text):
            edges += [i.text for i in doc.items(*doc.section(h))]
    for item in doc.items(1, len(doc.lines) + 1):
        m = _REQUIREMENT.match(strip_emphasis(item.text))
        if m and m.group(1).startswith("FR"):
            requirements.append(f"{m.group(1)}: {m.group(2)}")
    title = next((h.text for h in doc.headings if h.level == 1), spec)
    title = re.sub(r"^feature\s+specification\s*:\s*", "", title, flags=re.IGNORECASE)
    return ImportedPRD(
        format="spec-kit",
        title=title,
        spec_dir=spec,
        sources=(f"`{path}`",),
        stories=tuple(stories),
        out_of_scope=tuple(oos),
        assumptions=tuple(assumptions),
        requirements=tuple(requirements),
        edge_cases=tuple(edges),
        notes=tuple(notes),
    )


def _stories(doc: Doc, mapping: PriorityMap) -> tuple[list, list[str]]:
    stories, notes = [], []
    for h in doc.headings:
        m = _STORY.match(h.text)
        primary = _PRIMARY.match(h.text)
        if not m and not primary:
            continue
        label_m = _PRIORITY.search(h.text)
        label = label_m.group(1).upper() if label_m else None
        if m:
            number, title = m.group(1), _PRIORITY.sub("", m.group(2)).strip(" -–—")
        else:
            number, title = str(len(stories) + 1), "Primary user story"
        sid = f"US{number}"
        start, end = doc.section(h)
        if primary:
            # The early template puts the scenarios in a sibling "### Acceptance Scenarios".
            end = _sibling_scenarios_end(doc, h, end)
        acs = _scenarios(doc, sid, start, end)
        if not acs:
            test = _independent_test(doc, start, end)
            if test is None:
                notes.append(f"{sid} ({where(doc, h.line)}) has no acceptance scenarios; skipped.")
                continue
            acs = [ImportedAC(id=f"{sid}-AC1", text=test[1], source=where(doc, test[0]))]
            notes.append(f"{sid} has no acceptance scenarios; its Independent Test is {sid}-AC1.")
        stories.append(story(sid, title, label, acs, where(doc, h.line), mapping))
    return stories, notes


def _sibling_scenarios_end(doc: Doc, h: Heading, end: int) -> int:
    for other in doc.headings:
        if other.line >= end and other.level == h.level and _SCENARIOS.match(other.text):
            return doc.section(other)[1]
        if other.line >= end and other.level <= h.level:
            break
    return end


def _scenarios(doc: Doc, sid: str, start: int, end: int) -> list[ImportedAC]:
    label = None
    for number in range(start, end):
        line = strip_emphasis(doc.lines[number - 1].lstrip("#").strip())
        if _SCENARIOS.match(line):
            label = number
            break
    if label is None:
        return []
    stop = end
    for h in doc.headings:
        if label < h.line < end and not _SCENARIOS.match(h.text):
            stop = h.line
            break
    items = doc.items(label + 1, stop)
    numbers = [i.number for i in items]
    use_source = all(numbers) and len(set(numbers)) == len(numbers)
    return [
        ImportedAC(
            id=f"{sid}-AC{item.number if use_source else k}",
            text=item.text,
            source=where(doc, item.line),
        )
        for k, item in enumerate(items, start=1)
    ]


def _independent_test(doc: Doc, start: int, end: int) -> tuple[int, str] | None:
    for number in range(start, end):
        m = _INDEPENDENT.match(strip_emphasis(doc.lines[number - 1]))
        if m:
            return number, m.group(1).strip()
    return None
