"""A generic Markdown PRD (evalflow's own PRD dialect, `evalflow.domain.prd`) → `ImportedPRD`.

`--spec` names the file (default: the first of `PRD.md`, `prd.md`, `docs/prd.md`,
`docs/PRD.md`). Stories are headings with a priority label or a story name, their ACs the
list items under them (see docs/importers/markdown.md); the labels go through the priority
mapping like every other format, so unknown ones are ASSUMED instead of failing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from evalflow.domain.prd import parse_prd
from evalflow.errors import InputError
from evalflow.importers.mdtext import parse_doc, scope_lists
from evalflow.importers.model import (
    DEFAULT_PRIORITIES,
    ImportedAC,
    ImportedPRD,
    PriorityMap,
    story,
)

CANDIDATES = ("PRD.md", "prd.md", "docs/prd.md", "docs/PRD.md")
_LABEL = re.compile(
    r"\(\s*(?:priority\s*:\s*)?([A-Za-z0-9]+)\s*\)|\[\s*(P\d)\s*\]|priority\s*:\s*([A-Za-z0-9]+)"
    r"|\b(P\d)\s*$",
    re.IGNORECASE,
)


def import_markdown(
    files: Mapping[str, str], spec: str | None = None, priorities: PriorityMap | None = None
) -> ImportedPRD:
    mapping = priorities or DEFAULT_PRIORITIES
    path = spec.strip("/") if spec else next((c for c in CANDIDATES if c in files), None)
    if path is None or path not in files:
        raise InputError(
            "Markdown PRD not found",
            where=path or "repository",
            fix=f"pass --spec FILE (looked for {', '.join(CANDIDATES)})",
        )
    text = files[path]
    parsed = parse_prd(text, path, dialect="prd")
    lines = text.replace("\r\n", "\n").split("\n")
    stories = []
    for s in parsed.stories:
        m = _LABEL.search(lines[s.line - 1]) if s.line else None
        label = next((g for g in m.groups() if g), None) if m else None
        acs = [ImportedAC(id=a.id, text=a.text, source=f"{path}:{a.line}") for a in s.acs]
        stories.append(story(s.id, s.title, label, acs, f"{path}:{s.line}", mapping))
    doc = parse_doc(path, text)
    _, assumptions = scope_lists(doc)
    return ImportedPRD(
        format="markdown",
        title=parsed.title.removeprefix("PRD:").strip(),
        spec_dir=path.rsplit("/", 1)[0] if "/" in path else ".",
        sources=(f"`{path}`",),
        stories=tuple(stories),
        out_of_scope=tuple(o.text for o in parsed.out_of_scope),
        assumptions=tuple(assumptions),
    )
