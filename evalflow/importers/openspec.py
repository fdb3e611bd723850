"""OpenSpec: `openspec/specs/**/spec.md` and `openspec/changes/<id>/` → `ImportedPRD`.

Read: each `### Requirement: Name` is a story (`RN`, numbered in file order; the capability
folder and name make its title) and each of its `#### Scenario: …` blocks — the
WHEN/THEN/AND bullets joined — is one AC `RN-ACk`. With `--spec openspec/changes/<id>`, the
change's spec deltas are read instead: ADDED and MODIFIED requirements are imported, REMOVED
ones listed under out of scope; its proposal.md/tasks.md are sources. OpenSpec has no
priorities, so every priority is ASSUMED unless the requirement carries a `Priority:` line.
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
    story,
)

_REQUIREMENT = re.compile(r"^requirement\s*:\s*(.+)$", re.IGNORECASE)
_SCENARIO = re.compile(r"^scenario\s*:\s*(.+)$", re.IGNORECASE)
_DELTA = re.compile(r"^(ADDED|MODIFIED|REMOVED|RENAMED)\s+requirements\b", re.IGNORECASE)
_PRIORITY = re.compile(r"^\s*priority\s*:\s*([A-Za-z0-9]+)", re.IGNORECASE)


def import_openspec(
    files: Mapping[str, str], spec: str | None = None, priorities: PriorityMap | None = None
) -> ImportedPRD:
    mapping = priorities or DEFAULT_PRIORITIES
    root = (spec or "openspec/specs").strip("/")
    paths = sorted(p for p in files if p.startswith(f"{root}/") and p.endswith("/spec.md"))
    if not paths:
        raise InputError(
            f"no OpenSpec spec found under {root}/ (**/spec.md)",
            where="repository",
            fix="pass --spec openspec/specs or openspec/changes/<change-id>",
        )
    stories, oos, assumptions, notes = [], [], [], []
    for path in paths:
        doc = parse_doc(path, files[path])
        capability = path[len(root) + 1 : -len("/spec.md")].removeprefix("specs/")
        delta = None
        for h in doc.headings:
            if _DELTA.match(h.text):
                delta = _DELTA.match(h.text).group(1).upper()  # type: ignore[union-attr]
                continue
            m = _REQUIREMENT.match(h.text)
            if not m:
                continue
            if delta in ("REMOVED", "RENAMED"):
                oos.append(f"{capability}: {m.group(1)} ({delta.lower()} by this change)")
                continue
            sid = f"R{len(stories) + 1}"
            start, end = doc.section(h)
            label = next(
                (pm.group(1).upper() for n in range(start, end)
                 if (pm := _PRIORITY.match(strip_emphasis(doc.lines[n - 1])))), None,
            )  # fmt: skip
            acs = []
            for sh in doc.headings:
                if start <= sh.line < end and (sm := _SCENARIO.match(sh.text)):
                    steps = "; ".join(i.text for i in doc.items(*doc.section(sh)))
                    acs.append(
                        ImportedAC(
                            id=f"{sid}-AC{len(acs) + 1}",
                            text=f"{sm.group(1).strip()}: {steps}" if steps else sm.group(1),
                            source=where(doc, sh.line),
                        )
                    )
            if not acs:
                notes.append(f"{capability}: requirement {m.group(1)!r} has no scenario; skipped.")
                continue
            prefix = f"{delta.lower()}: " if delta else ""
            title = f"{capability} — {prefix}{m.group(1).strip()}"
            stories.append(story(sid, title, label, acs, where(doc, h.line), mapping))
        more_oos, more_assumptions = scope_lists(doc)
        oos += more_oos
        assumptions += more_assumptions
    if not stories:
        raise InputError(
            "no requirement with a scenario found",
            where=root,
            fix="OpenSpec requirements read '### Requirement: Name' + '#### Scenario: …'",
        )
    sources = [f"`{p}`" for p in paths]
    for extra in ("proposal.md", "tasks.md", "design.md"):
        if f"{root}/{extra}" in files:
            sources.append(f"`{root}/{extra}`")
            if extra == "proposal.md":
                more_oos, _ = scope_lists(parse_doc(extra, files[f"{root}/{extra}"]))
                oos += more_oos
    return ImportedPRD(
        format="openspec",
        title=root.rsplit("/", 1)[-1] if "changes/" in root else "OpenSpec specifications",
        spec_dir=root,
        sources=tuple(sources),
        stories=tuple(stories),
        out_of_scope=tuple(oos),
        assumptions=tuple(assumptions),
        notes=tuple(notes),
    )
