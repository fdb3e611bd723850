"""Markdown reading shared by the importers: headings, whole list items, sections.

Pure functions of text. Fenced code and HTML comments are skipped (templates keep their
instructions there); a list item keeps its continuation lines and nested bullets, so an item
is always read whole, with its parentheticals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evalflow.domain.prd import (
    is_assumptions_heading,
    is_exclusion_label,
    is_out_of_scope_heading,
    states_exclusion,
)

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# `1:` too: BMAD's epics number their acceptance criteria so.
_ITEM = re.compile(r"^(\s*)(?:[-*+]|(\d+)[.):])\s+(?:\[[ xX]\]\s+)?(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Heading:
    line: int
    level: int
    text: str


@dataclass(frozen=True)
class Item:
    line: int
    number: str | None
    text: str
    children: tuple[str, ...] = ()


@dataclass(frozen=True)
class Doc:
    """A Markdown file as lines (index 0 = line 1) with code and comments blanked out."""

    path: str
    lines: tuple[str, ...]

    @property
    def headings(self) -> list[Heading]:
        out = []
        for i, raw in enumerate(self.lines):
            m = _HEADING.match(raw)
            if m:
                out.append(Heading(i + 1, len(m.group(1)), strip_emphasis(m.group(2))))
        return out

    def section(self, heading: Heading) -> tuple[int, int]:
        """Lines (1-based, end exclusive) under `heading` up to the next heading of its level."""
        end = len(self.lines) + 1
        for h in self.headings:
            if h.line > heading.line and h.level <= heading.level:
                end = h.line
                break
        return heading.line + 1, end

    def items(self, start: int, end: int) -> list[Item]:
        """Top-level list items of lines [start, end); nested bullets folded into their item."""
        out: list[Item] = []
        base_indent: int | None = None
        open_item = False
        for number in range(start, end):
            raw = self.lines[number - 1]
            if _HEADING.match(raw):
                open_item = False
                continue
            m = _ITEM.match(raw)
            if m:
                indent = len(m.group(1).expandtabs(4))
                if base_indent is None or indent <= base_indent:
                    base_indent = indent
                    out.append(Item(number, m.group(2), m.group(3)))
                    open_item = True
                elif open_item:
                    last = out[-1]
                    # A bold label ("**Draft Deletion:**") ends in ":" once its markup is off.
                    plain = last.text.rstrip().rstrip("*_").rstrip()
                    glue = " " if plain.endswith((":", ";", ",")) else "; "
                    out[-1] = Item(
                        last.line,
                        last.number,
                        f"{last.text.rstrip()}{glue}{m.group(3)}",
                        (*last.children, one_line(m.group(3))),
                    )
                continue
            if not raw.strip():
                continue
            if open_item and raw.startswith((" ", "\t")):
                last = out[-1]
                out[-1] = Item(last.line, last.number, f"{last.text} {raw.strip()}", last.children)
            else:
                open_item = False
        return [Item(i.line, i.number, one_line(i.text), i.children) for i in out]

    def text(self, start: int, end: int) -> str:
        return one_line(" ".join(self.lines[start - 1 : end - 1]))


def parse_doc(path: str, text: str) -> Doc:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff").split("\n")
    out: list[str] = []
    in_fence = in_comment = False
    for raw in lines:
        if _FENCE.match(raw):
            in_fence = not in_fence
            out.append("")
            continue
        if in_fence:
            out.append("")
            continue
        line = raw
        if in_comment:
            if "-->" not in line:
                out.append("")
                continue
            line, in_comment = line.split("-->", 1)[1], False
        line = re.sub(r"<!--.*?-->", "", line)
        if "<!--" in line:
            line, in_comment = line.split("<!--", 1)[0], True
        out.append(line)
    return Doc(path, tuple(out))


def one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def outside_code(pattern: str, text: str) -> str:
    """`text` without the matches of `pattern`, except inside code spans: `categories/*.toml`
    and `__init__.py` are the source's wording, not emphasis."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(p if p.startswith("`") else re.sub(pattern, "", p) for p in parts)


def strip_emphasis(text: str) -> str:
    """`**Acceptance Scenarios**:` → `Acceptance Scenarios:`."""
    return one_line(outside_code(r"\*\*|__|(?<!\w)\*|\*(?!\w)", text))


def where(doc: Doc, line: int) -> str:
    return f"{doc.path}:{line}"


def scope_lists(doc: Doc) -> tuple[list[str], list[str]]:
    """(out-of-scope items, other assumptions) with the PRD parser's own rules: every item
    under an out-of-scope heading, and the assumptions that state an exclusion."""
    oos: list[str] = []
    assumptions: list[str] = []
    for h in doc.headings:
        whole = is_out_of_scope_heading(h.text)
        if not whole and not is_assumptions_heading(h.text):
            continue
        for item in doc.items(*doc.section(h)):
            if whole:
                oos.append(item.text)
            elif item.children and is_exclusion_label(item.text.split(":")[0] + ":"):
                oos.extend(item.children)
            elif states_exclusion(item.text):
                oos.append(item.text)
            else:
                assumptions.append(item.text)
    return oos, assumptions
