"""BMAD Method: its PRD, epics and story files → `ImportedPRD`.

Two layouts. v4: `docs/prd.md` (epics and stories) + `docs/stories/*.md`. v6:
`_bmad-output/planning-artifacts/prd.md` and `epics.md` + `_bmad-output/implementation-
artifacts/E-S-*.md`. Read: `### Story E.S[:] Title` under its epic (PRD or epics), its
"Acceptance Criteria": a numbered list, or Given/When/Then blocks (v6 writes one block per
AC, separated by blank lines, or `**AC1 — title:**` followed by its Given/When/Then bullets);
a story file (`# Story E.S: Title`, `## Acceptance Criteria`) replaces the planning entry for
that story, because the scrum master refines the ACs there. Story `E.S` becomes `SE.S`, AC k
`SE.S-ACk`. A `Priority:` line (P0-P5 or High/Medium/Low) is honoured, otherwise the priority
is ASSUMED. Out-of-scope and assumptions come from the PRD (and v4's `docs/brief.md`).
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
# "**AC1 — Inline create flow:**" (a label line) or "AC1: Given …" (a label with its text).
_AC_LABEL = re.compile(r"^AC\s*-?\s*\d+\b[^:]*:\s*(.*)$", re.IGNORECASE)
_STEP = re.compile(r"^(given|when|then|and|but)\b", re.IGNORECASE)
# A step word inside a line: "1. **Given** X, **when** Y, **then** Z" is a whole AC on one
# list item, so the next item's "Given" opens the next AC.
_INLINE_STEP = re.compile(r"\b(given|when|then)\b", re.IGNORECASE)
# The story file's cross-reference to the epic's AC numbers ("… raised (AC: #3)"): a label,
# not a behaviour.
_AC_REF = re.compile(r"\s*\(AC:?\s*#?\d+(?:\s*,\s*#?\d+)*\)\s*$", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
V6 = "_bmad-output"


def _gwt_blocks(doc: Doc, start: int, end: int) -> list[tuple[int, str]]:
    """(line, text) of each AC written as Given/When/Then steps: a label line or a "Given"
    (or a "When" after a Then) starts an AC, the other steps continue it. Empty when the
    section holds no such steps (then its list items are the ACs)."""
    lines = []
    for number in range(start, end):
        raw = doc.lines[number - 1]
        text = strip_emphasis(_BULLET.sub("", raw)).strip()
        if re.fullmatch(r"[-*_]{3,}", raw.strip()):
            break  # a thematic break ends the story's criteria
        if text and not raw.lstrip().startswith("#"):
            lines.append((number, _AC_REF.sub("", text)))
    if not any(_STEP.match(t) for _, t in lines):
        return []
    blocks: list[tuple[int, list[str]]] = []
    state = ""  # the last Given/When/Then of the open block ("And"/"But" continue it)
    for number, text in lines:
        label = _AC_LABEL.match(text)
        if label:
            blocks.append((number, [label.group(1)] if label.group(1) else []))
            state = "given" if label.group(1) else ""
            continue
        step = _STEP.match(text)
        word = step.group(1).lower() if step else ""
        new_ac = (word == "given" and state in ("when", "then")) or (
            word == "when" and state == "then"
        )
        if not blocks or new_ac:
            blocks.append((number, [text]))
        else:
            blocks[-1][1].append(text)
        if word in ("given", "when", "then"):
            state = _INLINE_STEP.findall(text)[-1].lower()
    return [(n, " ".join(parts)) for n, parts in blocks if parts]


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
        blocks = _gwt_blocks(doc, crit + 1, stop) or [
            (i.line, _AC_REF.sub("", _AC_PREFIX.sub("", i.text))) for i in doc.items(crit + 1, stop)
        ]
        acs = [
            ImportedAC(id=f"{sid}-AC{k}", text=text, source=where(doc, line))
            for k, (line, text) in enumerate(blocks, start=1)
        ]
        if acs:
            out[key] = (m.group(3).strip(), label, acs, where(doc, h.line))
    return out


def import_bmad(
    files: Mapping[str, str], spec: str | None = None, priorities: PriorityMap | None = None
) -> ImportedPRD:
    mapping = priorities or DEFAULT_PRIORITIES
    default = V6 if spec is None and any(p.startswith(f"{V6}/") for p in files) else "docs"
    root = (spec or default).strip("/")
    if root.split("/")[-1] == V6 or f"{root}/planning-artifacts/epics.md" in files:
        planning, stories_dir = f"{root}/planning-artifacts", f"{root}/implementation-artifacts"
    else:
        planning, stories_dir = root, f"{root}/stories"
    prd_path = f"{planning}/prd.md"
    # The story files themselves, not v6's reports under implementation-artifacts/tests/.
    story_paths = sorted(
        p for p in files if p.endswith(".md") and p.rsplit("/", 1)[0] == stories_dir
    )
    epics = [p for p in (f"{planning}/epics.md",) if p in files]
    if prd_path not in files and not story_paths and not epics:
        raise InputError(
            f"no BMAD PRD, epics or stories found ({prd_path}, {stories_dir}/*.md)",
            where="repository",
            fix="pass --spec the folder holding prd.md and stories/ (v4, default docs) or "
            f"planning-artifacts/ and implementation-artifacts/ (v6, {V6})",
        )
    found: dict = {}
    origin: dict[tuple[int, int], str] = {}
    notes: list[str] = []
    oos: list[str] = []
    assumptions: list[str] = []
    title = root
    if prd_path in files:
        doc = parse_doc(prd_path, files[prd_path])
        found.update(_read_stories(doc))
        origin.update(dict.fromkeys(found, prd_path))
        oos, assumptions = scope_lists(doc)
        title = next((h.text for h in doc.headings if h.level == 1), title)
    for path in epics:
        planned = _read_stories(parse_doc(path, files[path]))
        for key in planned:
            if key in found:
                notes.append(f"Story {key[0]}.{key[1]}: ACs from {path} over {origin[key]}.")
            origin[key] = path
        found.update(planned)
    for path in story_paths:
        refined = _read_stories(parse_doc(path, files[path]))
        for key in refined:
            if key in found:
                notes.append(
                    f"Story {key[0]}.{key[1]}: ACs from {path} (refined) over {origin[key]}."
                )
            origin[key] = path
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
        sources=tuple(
            f"`{p}`" for p in ([prd_path] if prd_path in files else []) + epics + story_paths
        ),
        stories=tuple(stories),
        out_of_scope=tuple(oos),
        assumptions=tuple(assumptions),
        notes=tuple(notes),
    )
