"""BMAD Method: `docs/prd.md` (epics and stories) + `docs/stories/*.md` → `ImportedPRD`.

Read: `### Story E.S[:] Title` under its epic in `docs/prd.md`, its "Acceptance Criteria"
numbered list; a story file `docs/stories/E.S.*.md` (`# Story E.S: Title`, `## Acceptance
Criteria`) replaces the PRD's entry for that story, because the scrum master refines the ACs
there. Story `E.S` becomes `SE.S`, AC k `SE.S-ACk`. A `Priority:` line (P0-P5 or
High/Medium/Low) is honoured, otherwise the priority is ASSUMED. Out-of-scope and assumptions
come from `docs/prd.md` (and `docs/brief.md` when present).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from evalflow.errors import InputError
from evalflow.importers.mdtext import Doc, parse_doc, scope_lists, strip_emphasis, where
from evalflow.importers.model import (
    DEFAULT_PRIORITIES,
    ImportedAC,
    ImportedPRD,
    PriorityMap,
    story,
)

_STORY = re.compile(r"^story\s+(\d+)\.(\d+)\s*[:.\-–—]?\s*(.*)$", re.IGNORECASE)
_CRITERIA = re.compile(r"^acceptance\s+criteria\b", re.IGNORECASE)
_PRIORITY = re.compile(r"^\s*priority\s*:\s*([A-Za-z0-9]+)", re.IGNORECASE)
_AC_PREFIX = re.compile(r"^(?:AC\s*)?\d+\s*[:.)]\s*")


def _read_stories(doc: Doc) -> dict[tuple[int, int], tuple[str, str | None, list, str]]:
    out = {}
    for h in doc.headings:
        m = _STORY.match(h.text)
        if not m:
            continue
        start, end = doc.section(h)
        label, crit = None, None
        for number in range(start, end):
            line = strip_emphasis(doc.lines[number - 1].lstrip("#").strip())
            if label is None and (pm := _PRIORITY.match(line)):
                label = pm.group(1).upper()
            if crit is None and _CRITERIA.match(line):
                crit = number
        if crit is None:
            continue
        stop = next((x.line for x in doc.headings if crit < x.line < end and x.level <= h.level + 1
                     and not _CRITERIA.match(x.text)), end)  # fmt: skip
        key = (int(m.group(1)), int(m.group(2)))
        sid = f"S{key[0]}.{key[1]}"
        items = doc.items(crit + 1, stop)
        acs = [
            ImportedAC(
                id=f"{sid}-AC{k}", text=_AC_PREFIX.sub("", i.text), source=where(doc, i.line)
            )
            for k, i in enumerate(items, start=1)
        ]
        if acs:
            out[key] = (m.group(3).strip(), label, acs, where(doc, h.line))
    return out


def import_bmad(
    files: Mapping[str, str], spec: str | None = None, priorities: PriorityMap | None = None
) -> ImportedPRD:
    mapping = priorities or DEFAULT_PRIORITIES
    root = (spec or "docs").strip("/")
    prd_path = f"{root}/prd.md"
    story_paths = sorted(p for p in files if p.startswith(f"{root}/stories/") and p.endswith(".md"))
    if prd_path not in files and not story_paths:
        raise InputError(
            f"no BMAD PRD or stories found ({prd_path}, {root}/stories/*.md)",
            where="repository",
            fix="pass --spec the folder holding prd.md and stories/ (default: docs)",
        )
    found: dict = {}
    notes: list[str] = []
    oos: list[str] = []
    assumptions: list[str] = []
    title = root
    if prd_path in files:
        doc = parse_doc(prd_path, files[prd_path])
        found.update(_read_stories(doc))
        oos, assumptions = scope_lists(doc)
        title = next((h.text for h in doc.headings if h.level == 1), title)
    for path in story_paths:
        refined = _read_stories(parse_doc(path, files[path]))
        for key in refined:
            if key in found:
                notes.append(f"Story {key[0]}.{key[1]}: ACs from {path} (refined) over {prd_path}.")
        found.update(refined)
    brief = f"{root}/brief.md"
    if brief in files:
        more_oos, more_assumptions = scope_lists(parse_doc(brief, files[brief]))
        oos += [i for i in more_oos if i not in oos]
        assumptions += more_assumptions
    if not found:
        raise InputError(
            "no BMAD stories with acceptance criteria found",
            where=prd_path,
            fix="BMAD stories read '### Story 1.1: Title' + an 'Acceptance Criteria' list",
        )
    stories = [
        story(f"S{e}.{s}", t, label, acs, src, mapping)
        for (e, s), (t, label, acs, src) in sorted(found.items())
    ]
    return ImportedPRD(
        format="bmad",
        title=re.sub(
            r"\s*product\s+requirements\s+document\s*(\(prd\))?\s*", " ", title, flags=re.I
        ).strip(" :-")
        or root,
        spec_dir=root,
        sources=tuple(f"`{p}`" for p in ([prd_path] if prd_path in files else []) + story_paths),
        stories=tuple(stories),
        out_of_scope=tuple(oos),
        assumptions=tuple(assumptions),
        notes=tuple(notes),
    )
