"""Parsing a framework's SDD artifacts (spec.md, tasks.md) into requirement items with ids
and lines, PRD-agnostic.

A *spec* file yields one item per list item and per table data row inside a requirement
section; a *tasks* file yields one item per checkbox task (`- [ ]` / `- [x]`), with nested
checkbox tasks as children and nested plain bullets folded into their task's text.

Sections: a heading matching `lexicon.EXCLUDED_SECTION` (out of scope, deferred,
assumptions, clarifications, success criteria, goals, overview, components, data model,
key entities, testing strategy, …) holds context, not requirements; one matching
`lexicon.REQUIREMENT_SECTION` holds requirements; other headings inherit their parent's
class (the top of a file counts as a requirement section).

Ids, first that applies: a leading id (`**FR-002**`, `FR10:`, `T001`), a table row's first
cell when it is an id, a numbered item under a story-like heading (`User Story 1` → `US1.4`,
`Requirement 2` → `R2.4` also known as `2.4`, `Story 1.1` → `S1.1.4`), a numbered task
(`2.1` → `T2.1`, `Task 1` under `Story 1.1` → `S1.1/T1`), else `<file>:<line>`; a repeated
id gets `#2`, `#3`.

References an item makes to other spec items: id tokens (`FR-010`, `US1`), ranges
(`FR-001..FR-005`), kiro's `_Requirements: 1.1, 2.3_`, BMAD's `(AC: 1, 2)` (resolved in the
enclosing story) and, for items, id tokens of their section headings (`### Error taxonomy
(FR-011)`). They are kept raw here and resolved by the elicitation trace.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict

from evalflow.domain.side_metrics.lexicon import EXCLUDED_SECTION, REQUIREMENT_SECTION

Role = Literal["spec", "tasks"]
ItemKind = Literal["list", "table", "task"]

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|(\d+)[.)])\s+(.*)$")
_CHECKBOX = re.compile(r"^\[([ xX])\]\s*(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}")
_ID = r"[A-Z]{1,4}-?\d+(?:\.\d+)*"
_ID_TOKEN = re.compile(rf"(?<![\w-])({_ID})(?![\w-])")
_LEADING_ID = re.compile(rf"^(?:\*\*|`)?({_ID})(?:\*\*|`)?\s*[:.\-–—)]?\s*(?:\*\*)?\s+")
_ID_CELL = re.compile(rf"^{_ID}$")
_RANGE = re.compile(r"\b([A-Z]{1,4})-?(\d+)\s*(?:\.\.|–|—|-|to)\s*\1-?(\d+)\b")
_KIRO_REFS = re.compile(r"requirements?\s*:\s*((?:\d+(?:\.\d+)*\s*,?\s*)+)", re.IGNORECASE)
_AC_NUMBERS = re.compile(r"\bAC\s*:\s*((?:\d+\s*,?\s*)+)")
_TASK_NUMBER = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+")
_TASK_WORD = re.compile(r"^task\s+(\d+)\s*[:.]?\s*", re.IGNORECASE)
_STORY_KEYS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\buser\s+story\s+(\d+)", re.IGNORECASE), "US"),
    (re.compile(r"\brequirement\s+(\d+)", re.IGNORECASE), "R"),
    (re.compile(r"\bstory\s+(\d+(?:\.\d+)*)", re.IGNORECASE), "S"),
)


class SpecFile(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    role: Role
    text: str


class SpecHeading(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    line: int
    level: int
    text: str
    requirement_section: bool
    story_key: str | None


class SpecItem(BaseModel):
    """One requirement item (spec) or task (tasks) with its place and raw references."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    path: str
    line: int
    end_line: int
    role: Role
    kind: ItemKind
    text: str
    section: str
    explicit_id: bool
    keys: tuple[str, ...]
    spec_refs: tuple[str, ...]
    heading_refs: tuple[str, ...] = ()
    checked: bool | None = None
    parent_id: str | None = None

    @property
    def ref(self) -> str:
        return f"{self.path}:{self.line}"


class SpecArtifacts(BaseModel):
    """The parsed artifacts of one framework run."""

    model_config = ConfigDict(frozen=True)

    files: tuple[SpecFile, ...]
    items: tuple[SpecItem, ...]
    headings: tuple[SpecHeading, ...]

    @property
    def present(self) -> bool:
        return bool(self.files)

    def spec_items(self) -> list[SpecItem]:
        return [i for i in self.items if i.role == "spec"]

    def tasks(self) -> list[SpecItem]:
        return [i for i in self.items if i.role == "tasks"]

    def lines(self) -> Iterator[tuple[str, int, str]]:
        """(path, 1-based line, text) over every file, in file order."""
        for spec_file in self.files:
            for number, text in enumerate(spec_file.text.split("\n"), start=1):
                yield spec_file.path, number, text


def normalise_key(key: str) -> str:
    """`FR-002` and `FR2` name the same item: upper-case prefix, no hyphen, no leading 0s."""
    m = re.match(r"^([A-Za-z]*)-?(\d+(?:\.\d+)*)((?:/T\d+)?)$", key.strip())
    if not m:
        return key.strip().upper()
    numbers = ".".join(str(int(n)) for n in m.group(2).split("."))
    return f"{m.group(1).upper()}{numbers}{m.group(3).upper()}"


def role_of(path: str) -> Role:
    """`tasks.md` (any folder) is a tasks file; every other artifact is a spec file."""
    return "tasks" if path.rsplit("/", 1)[-1].lower().startswith("tasks") else "spec"


def parse_spec_artifacts(files: Mapping[str, str]) -> SpecArtifacts:
    """Items of every file (path → text), files in path order with spec files first."""
    ordered = sorted(files, key=lambda p: (role_of(p) == "tasks", p))
    spec_files = tuple(SpecFile(path=p, role=role_of(p), text=files[p]) for p in ordered)
    items: list[SpecItem] = []
    headings: list[SpecHeading] = []
    for spec_file in spec_files:
        parser = _FileParser(spec_file)
        parser.run()
        items += parser.items
        headings += parser.headings
    return SpecArtifacts(files=spec_files, items=_unique(items), headings=tuple(headings))


def _unique(items: list[SpecItem]) -> tuple[SpecItem, ...]:
    """A repeated id (two `Task 1` in one story) gets `#2`, `#3` in file order."""
    seen: dict[str, int] = {}
    out: list[SpecItem] = []
    for item in items:
        n = seen[item.item_id] = seen.get(item.item_id, 0) + 1
        out.append(item if n == 1 else item.model_copy(update={"item_id": f"{item.item_id}#{n}"}))
    return tuple(out)


def _raw_refs(text: str, story_key: str | None) -> list[str]:
    refs: list[str] = []
    for m in _RANGE.finditer(text):
        prefix, low, high = m.group(1), int(m.group(2)), int(m.group(3))
        if low <= high <= low + 100:
            refs += [f"{prefix}{n}" for n in range(low, high + 1)]
    refs += [m.group(1) for m in _ID_TOKEN.finditer(text)]
    for m in _KIRO_REFS.finditer(text):
        refs += [n for n in re.split(r"[\s,]+", m.group(1)) if n]
    if story_key:
        for m in _AC_NUMBERS.finditer(text):
            refs += [f"{story_key}.{n}" for n in re.split(r"[\s,]+", m.group(1)) if n]
    return list(dict.fromkeys(normalise_key(r) for r in refs))


def _cells(row: str) -> list[str]:
    body = row.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") else body
    return [c.strip() for c in re.split(r"(?<!\\)\|", body)]


class _FileParser:
    def __init__(self, spec_file: SpecFile) -> None:
        self.file = spec_file
        self.base = spec_file.path.rsplit("/", 1)[-1]
        self.items: list[SpecItem] = []
        self.headings: list[SpecHeading] = []
        # (level, requirement_section, story_key, heading id tokens)
        self.stack: list[tuple[int, bool, str | None, tuple[str, ...]]] = []
        self.open_item: dict | None = None
        self.task_stack: list[tuple[int, str]] = []
        self.table_header_seen = False

    @property
    def in_requirements(self) -> bool:
        return self.stack[-1][1] if self.stack else True

    @property
    def story_key(self) -> str | None:
        return next((key for *_, key, _ in reversed(self.stack) if key), None)

    @property
    def heading_refs(self) -> tuple[str, ...]:
        return tuple(r for *_, refs in self.stack for r in refs)

    @property
    def section(self) -> str:
        return " > ".join(h.text for h in self._open_headings())

    def _open_headings(self) -> list[SpecHeading]:
        levels = [level for level, *_ in self.stack]
        open_ = [h for h in self.headings if h.path == self.file.path]
        chosen: list[SpecHeading] = []
        for level in levels:
            chosen.append(next(h for h in reversed(open_) if h.level == level))
        return chosen

    def run(self) -> None:
        in_fence = False
        for number, raw in enumerate(self.file.text.split("\n"), start=1):
            if _FENCE.match(raw):
                in_fence = not in_fence
                self._close()
                continue
            if in_fence:
                continue
            self._line(number, raw)
        self._close()

    def _line(self, number: int, raw: str) -> None:
        heading = HEADING.match(raw)
        if heading:
            self._close()
            self._heading(number, len(heading.group(1)), heading.group(2))
            return
        if not raw.strip():
            self._close()
            self.table_header_seen = False
            return
        if raw.lstrip().startswith("|"):
            self._close()
            self._table_row(number, raw)
            return
        self.table_header_seen = False
        item = LIST_ITEM.match(raw)
        if item:
            self._list_item(number, len(item.group(1).expandtabs(4)), item.group(2), item.group(3))
            return
        if self.open_item is not None and raw[:1] in (" ", "\t"):
            self._extend(number, raw.strip())

    def _heading(self, number: int, level: int, text: str) -> None:
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        parent = self.stack[-1][1] if self.stack else True
        if EXCLUDED_SECTION.search(text):
            requirement = False
        elif REQUIREMENT_SECTION.search(text):
            requirement = True
        else:
            requirement = parent
        story_key = None
        for pattern, prefix in _STORY_KEYS:
            m = pattern.search(text)
            if m:
                story_key = f"{prefix}{m.group(1)}"
                break
        refs = tuple(r for r in _raw_refs(text, None) if r != story_key)
        self.stack.append((level, requirement, story_key, refs))
        self.headings.append(
            SpecHeading(
                path=self.file.path,
                line=number,
                level=level,
                text=text,
                requirement_section=requirement,
                story_key=story_key,
            )
        )
        self.task_stack = []

    def _table_row(self, number: int, raw: str) -> None:
        if _TABLE_SEPARATOR.match(raw.strip()):
            self.table_header_seen = True
            return
        if not self.table_header_seen or self.file.role != "spec" or not self.in_requirements:
            return
        cells = _cells(raw)
        first = cells[0].strip("*` ") if cells else ""
        explicit = bool(_ID_CELL.match(first))
        item_id = first if explicit else f"{self.base}:{number}"
        text = " | ".join(c for c in cells if c)
        self._add(number, number, "table", item_id, explicit, text, (item_id,))

    def _list_item(self, number: int, indent: int, ordinal: str | None, body: str) -> None:
        checkbox = _CHECKBOX.match(body)
        if self.file.role == "tasks":
            if checkbox is None:
                if self.open_item is not None and indent > self.open_item["indent"]:
                    self._extend(number, body.strip())
                else:
                    self._close()
                return
            self._close()
            self._task(number, indent, checkbox.group(1) != " ", checkbox.group(2))
            return
        self._close()
        if not self.in_requirements:
            return
        leading = _LEADING_ID.match(body)
        story = self.story_key
        if leading:
            item_id, explicit = leading.group(1), True
            keys: tuple[str, ...] = (item_id,)
        elif ordinal is not None and story is not None:
            item_id, explicit = f"{story}.{ordinal}", True
            keys = (item_id,)
            if story.startswith("R"):
                keys += (f"{story[1:]}.{ordinal}",)
        else:
            item_id, explicit, keys = f"{self.base}:{number}", False, ()
        self._open(number, indent, "list", item_id, explicit, body.strip(), keys or (item_id,))

    def _task(self, number: int, indent: int, checked: bool, body: str) -> None:
        while self.task_stack and self.task_stack[-1][0] >= indent:
            self.task_stack.pop()
        parent = self.task_stack[-1][1] if self.task_stack else None
        leading = _LEADING_ID.match(body)
        numbered = _TASK_NUMBER.match(body)
        worded = _TASK_WORD.match(body)
        if leading and not leading.group(1)[0].isdigit():
            item_id, explicit = leading.group(1), True
        elif numbered:
            item_id, explicit = f"T{numbered.group(1)}", True
        elif worded:
            prefix = f"{self.story_key}/" if self.story_key else ""
            item_id, explicit = f"{prefix}T{worded.group(1)}", True
        else:
            item_id, explicit = f"{self.base}:{number}", False
        self._open(
            number,
            indent,
            "task",
            item_id,
            explicit,
            body.strip(),
            (item_id,),
            checked=checked,
            parent_id=parent,
        )
        self.task_stack.append((indent, item_id))

    def _open(
        self,
        number: int,
        indent: int,
        kind: ItemKind,
        item_id: str,
        explicit: bool,
        text: str,
        keys: tuple[str, ...],
        *,
        checked: bool | None = None,
        parent_id: str | None = None,
    ) -> None:
        self.open_item = {
            "line": number,
            "end_line": number,
            "indent": indent,
            "kind": kind,
            "item_id": item_id,
            "explicit": explicit,
            "text": text,
            "keys": keys,
            "checked": checked,
            "parent_id": parent_id,
            "story": self.story_key,
        }

    def _extend(self, number: int, text: str) -> None:
        assert self.open_item is not None
        self.open_item["text"] = f"{self.open_item['text']} {text}"
        self.open_item["end_line"] = number

    def _close(self) -> None:
        item, self.open_item = self.open_item, None
        if item is None:
            return
        self._add(
            item["line"],
            item["end_line"],
            item["kind"],
            item["item_id"],
            item["explicit"],
            item["text"],
            item["keys"],
            checked=item["checked"],
            parent_id=item["parent_id"],
            story=item["story"],
        )

    def _add(
        self,
        line: int,
        end_line: int,
        kind: ItemKind,
        item_id: str,
        explicit: bool,
        text: str,
        keys: tuple[str, ...],
        *,
        checked: bool | None = None,
        parent_id: str | None = None,
        story: str | None = None,
    ) -> None:
        own = {normalise_key(k) for k in keys}
        refs = tuple(r for r in _raw_refs(text, story or self.story_key) if r not in own)
        self.items.append(
            SpecItem(
                item_id=item_id,
                path=self.file.path,
                line=line,
                end_line=end_line,
                role=self.file.role,
                kind=kind,
                text=text,
                section=self.section,
                explicit_id=explicit,
                keys=tuple(normalise_key(k) for k in keys),
                spec_refs=refs,
                heading_refs=self.heading_refs if kind != "task" else (),
                checked=checked,
                parent_id=parent_id,
            )
        )
