"""Kiro: `.kiro/specs/<feature>/requirements.md` (+ design.md, tasks.md) → `ImportedPRD`;
a folder holding Kiro's `.config.kiro` beside its requirements.md is a feature too.

Read: each `### Requirement N[: Title]` is story `RN` (title from the heading, else its
`**User Story:**` line); its numbered "Acceptance Criteria" — EARS sentences such as
"WHEN … THEN/THE SYSTEM SHALL …", "IF … THEN …", "WHILE …" — are ACs `RN-ACk` (k the source's
own number; Japanese and Chinese headings are read too). Kiro has no priorities: a
`Priority:` line under the requirement is honoured, otherwise the priority is ASSUMED.
design.md/tasks.md are recorded as sources only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from evalflow.errors import InputError
from evalflow.importers.mdtext import parse_doc, scope_lists, strip_emphasis, where
from evalflow.importers.model import (
    DEFAULT_PRIORITIES,
    ImportedAC,
    ImportedPRD,
    PriorityMap,
    choose_feature,
    story,
)

_FEATURE = re.compile(r"^\.kiro/specs/([^/]+)/requirements\.md$")
# Kiro writes its headings in the user's language: English, Japanese (要件 / 受け入れ基準 /
# ユーザーストーリー) and Chinese (需求 / 验收标准 / 用户故事) are read; the ACs stay verbatim.
_REQUIREMENT = re.compile(
    r"^(?:requirement|要件|需求)\s*(\d+)\s*(?:[:：.\-–—]\s*(.*))?$", re.IGNORECASE
)
_USER_STORY = re.compile(r"^\s*(?:user\s+story|ユーザーストーリー|用户故事)\s*[:：]\s*(.+)$", re.I)
_CRITERIA = re.compile(r"^(?:acceptance\s+criteria\b|受け入れ基準|受入基準|验收标准)", re.I)
_PRIORITY = re.compile(r"^\s*priority\s*:\s*([A-Za-z0-9]+)", re.IGNORECASE)


def _features(files: Mapping[str, str]) -> list[str]:
    """The feature folders: `.kiro/specs/<feature>`, and any folder whose `requirements.md`
    sits beside Kiro's own `.config.kiro` — a project may keep its specs elsewhere with
    `.kiro/specs` a symbolic link to them (foxey/imaprest: `.kiro/specs -> ../.specs`), and a
    snapshot never follows a link."""
    marked = {p.rsplit("/", 1)[0] for p in files if p.endswith("/.config.kiro")}
    return sorted(
        folder
        for p in files
        if p.endswith("requirements.md")
        for folder in [p.rsplit("/", 1)[0] if "/" in p else ""]
        if _FEATURE.match(p) or folder in marked
    )


def import_kiro(
    files: Mapping[str, str], spec: str | None = None, priorities: PriorityMap | None = None
) -> ImportedPRD:
    mapping = priorities or DEFAULT_PRIORITIES
    notes: list[str] = []
    spec = choose_feature(
        spec,
        _features(files),
        document="requirements.md",
        layout=".kiro/specs/<feature>/requirements.md, or a folder with .config.kiro",
        framework="Kiro",
        notes=notes,
    )
    path = f"{spec}/requirements.md"
    if path not in files:
        raise InputError("requirements.md not found", where=path, fix="pass --spec the folder")
    doc = parse_doc(path, files[path])
    stories = []
    for h in doc.headings:
        m = _REQUIREMENT.match(h.text)
        if not m:
            continue
        sid = f"R{m.group(1)}"
        start, end = doc.section(h)
        title, label, crit = (m.group(2) or "").strip(), None, None
        for number in range(start, end):
            line = strip_emphasis(doc.lines[number - 1].lstrip("#").strip())
            if not title and (us := _USER_STORY.match(line)):
                title = us.group(1)
            if label is None and (pm := _PRIORITY.match(line)):
                label = pm.group(1).upper()
            if crit is None and _CRITERIA.match(line):
                crit = number
        if crit is None:
            notes.append(f"{sid} ({where(doc, h.line)}) has no acceptance criteria; skipped.")
            continue
        items = doc.items(crit + 1, end)
        nums = [i.number for i in items]
        own = all(nums) and len(set(nums)) == len(nums)
        acs = [
            ImportedAC(
                id=f"{sid}-AC{i.number if own else k}", text=i.text, source=where(doc, i.line)
            )
            for k, i in enumerate(items, start=1)
        ]
        if acs:
            stories.append(story(sid, title or sid, label, acs, where(doc, h.line), mapping))
    if not stories:
        raise InputError(
            "no requirements with acceptance criteria in requirements.md",
            where=path,
            fix="Kiro requirements read '### Requirement 1' + '#### Acceptance Criteria' list",
        )
    oos, assumptions = scope_lists(doc)
    title = next((h.text for h in doc.headings if h.level == 1), spec)
    sources = [f"`{p}`" for p in (path, f"{spec}/design.md", f"{spec}/tasks.md") if p in files]
    return ImportedPRD(
        format="kiro",
        title=f"{spec.rsplit('/', 1)[-1]} — {title}",
        spec_dir=spec,
        sources=tuple(sources),
        stories=tuple(stories),
        out_of_scope=tuple(oos),
        assumptions=tuple(assumptions),
        notes=tuple(notes),
    )
