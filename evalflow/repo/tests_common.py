"""Shared machinery of the test-file scanners: cached tree-sitter parsers and queries, the
raw per-file scan records, and the assertion roll-up both languages use.

The scanners in `tests_python` and `tests_js` turn one source file into a `FileScan`;
`test_inventory` turns scans into the public `TestCase` rows. Parsers and compiled queries
are built once per process (a parser per thread, since tree-sitter parsers keep state
between parses) and reused for every file.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from typing import Literal

import tree_sitter_javascript
import tree_sitter_python
import tree_sitter_typescript
from tree_sitter import Language, Node, Parser, Query, QueryCursor

Grammar = Literal["python", "javascript", "typescript", "tsx"]

_GRAMMAR_LOADERS = {
    "python": tree_sitter_python.language,
    "javascript": tree_sitter_javascript.language,
    "typescript": tree_sitter_typescript.language_typescript,
    "tsx": tree_sitter_typescript.language_tsx,
}

_local = threading.local()


@cache
def language_for(grammar: Grammar) -> Language:
    """The tree-sitter Language of one grammar wheel, loaded once per process."""
    return Language(_GRAMMAR_LOADERS[grammar]())


def parser_for(grammar: Grammar) -> Parser:
    """A parser for `grammar`, created on first use and reused by the calling thread."""
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = {}
        _local.parsers = parsers
    parser = parsers.get(grammar)
    if parser is None:
        parser = Parser(language_for(grammar))
        parsers[grammar] = parser
    return parser


@cache
def query_for(grammar: Grammar, source: str) -> Query:
    """A compiled query, cached per grammar and query text."""
    return Query(language_for(grammar), source)


def reset_parser_caches() -> None:
    """Drop every cached language, parser and query so the next use builds them afresh
    (lets a benchmark measure the cost of not reusing them)."""
    language_for.cache_clear()
    query_for.cache_clear()
    _local.parsers = {}


def run_matches(query: Query, node: Node) -> list[tuple[int, dict[str, list[Node]]]]:
    """All matches of `query` under `node` (pattern index, captures)."""
    return QueryCursor(query).matches(node)


def text_of(node: Node | None) -> str:
    """The source text of a node, decoded leniently (inputs may hold odd bytes)."""
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def line_of(node: Node) -> int:
    """1-based first line of a node."""
    return node.start_point.row + 1


def end_line_of(node: Node) -> int:
    """1-based last line of a node."""
    return node.end_point.row + 1


def span(node: Node) -> tuple[int, int]:
    """Byte span, used as the identity of scope nodes across parent walks."""
    return (node.start_byte, node.end_byte)


def first_error_line(root: Node) -> int | None:
    """Line of the first ERROR or MISSING node in document order, if the tree has any."""
    if not root.has_error:
        return None
    node = root
    while True:
        if node.type == "ERROR" or node.is_missing:
            return line_of(node)
        next_node = next((c for c in node.children if c.has_error or c.is_missing), None)
        if next_node is None:
            return line_of(node)
        node = next_node


class AssertionKind(StrEnum):
    """What an assertion proves: a real value, that a mock was called, or nothing by itself.

    `neutral` covers meta-assertions such as `expect.assertions(n)`: they count as asserting
    but are ignored when deciding whether a test is mock-only.
    """

    REAL = "real"
    MOCK = "mock"
    NEUTRAL = "neutral"


@dataclass(frozen=True, slots=True)
class RawAssertion:
    """An assertion's first and last line (a multi-line assertion covers all of them)."""

    line: int
    end_line: int
    kind: AssertionKind


@dataclass(frozen=True, slots=True)
class RawRow:
    """One row of a parametrised table (a `pytest.param`, an array element, a template row)."""

    line: int
    skipped: bool = False
    markers: frozenset[str] = frozenset()


@dataclass(slots=True)
class Scope:
    """A function body assertions are attributed to: a test or a local helper."""

    name: str
    is_test: bool
    assertions: list[RawAssertion] = field(default_factory=list)
    helper_calls: list[tuple[int, int, str]] = field(default_factory=list)


@dataclass(slots=True)
class RawTest:
    """One test function or `it`/`test` call before rows are expanded."""

    suite: tuple[str, ...]
    name: str
    start_line: int
    end_line: int
    def_line: int
    scope: Scope
    dims: list[list[RawRow]] = field(default_factory=list)
    skipped: bool = False
    markers: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class RawNote:
    line: int | None
    kind: str
    message: str


@dataclass(slots=True)
class FileScan:
    """Everything a scanner extracts from one file."""

    tests: list[RawTest] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    import_targets: list[str] = field(default_factory=list)
    notes: list[RawNote] = field(default_factory=list)


_NAMED_CALL_QUERIES: dict[Grammar, str] = {
    "python": "(call function: [(identifier) @fn (attribute attribute: (identifier) @fn)]) @call",
    "javascript": (
        "(call_expression function: [(identifier) @fn"
        " (member_expression property: (property_identifier) @fn)]) @call"
    ),
}


def configured_helper_assertions(
    grammar: Grammar,
    root: Node,
    names: re.Pattern[str],
    kind_of: Callable[[Node], AssertionKind],
    already: list[tuple[Node, AssertionKind]],
) -> list[tuple[Node, AssertionKind]]:
    """Calls whose callee's last name fully matches an operator-configured pattern (e.g.
    `check_.*`), skipping calls the built-in rules already counted."""
    counted = {span(node) for node, _ in already}
    source = _NAMED_CALL_QUERIES["python" if grammar == "python" else "javascript"]
    found: list[tuple[Node, AssertionKind]] = []
    for _, captures in run_matches(query_for(grammar, source), root):
        call = captures["call"][0]
        if span(call) not in counted and names.fullmatch(text_of(captures["fn"][0])):
            found.append((call, kind_of(call)))
    return found


def attribute_assertions(
    scopes: dict[tuple[int, int], Scope],
    assertions: list[tuple[Node, AssertionKind]],
    calls: list[tuple[Node, str]],
) -> None:
    """Attach each assertion and each local-helper call to the innermost enclosing scope.

    The walk goes up the parent chain until it meets a scope node; nodes outside every
    scope (module level, decorators, hooks) are dropped.
    """
    for node, kind in assertions:
        owner = _owner(scopes, node)
        if owner is not None:
            owner.assertions.append(RawAssertion(line_of(node), end_line_of(node), kind))
    for node, name in calls:
        owner = _owner(scopes, node)
        if owner is not None:
            owner.helper_calls.append((line_of(node), end_line_of(node), name))


def _owner(scopes: dict[tuple[int, int], Scope], node: Node) -> Scope | None:
    current: Node | None = node.parent
    while current is not None:
        owner = scopes.get(span(current))
        if owner is not None:
            return owner
        current = current.parent
    return None


def resolve_helper_calls(scopes: list[Scope]) -> None:
    """Turn calls to local helpers that assert into assertions of the calling scope.

    A helper's kinds are the kinds of its own assertions plus those of the helpers it
    calls (a fixpoint, so helper chains of any depth resolve; recursion terminates because
    the kind sets only grow). Helpers are resolved by name within the file. A call to a
    helper that asserts becomes one assertion spanning the call: real if the helper makes
    any real assertion, else mock if any mock one, else neutral.
    """
    helpers = [s for s in scopes if not s.is_test]
    if not helpers:
        return
    kinds: dict[str, set[AssertionKind]] = {}
    for helper in helpers:
        kinds.setdefault(helper.name, set()).update(a.kind for a in helper.assertions)
    changed = True
    while changed:
        changed = False
        for helper in helpers:
            target = kinds[helper.name]
            before = len(target)
            for _, _, callee in helper.helper_calls:
                target.update(kinds.get(callee, ()))
            changed = changed or len(target) != before
    for scope in scopes:
        if not scope.is_test:
            continue
        for line, end_line, callee in scope.helper_calls:
            callee_kinds = kinds.get(callee)
            if not callee_kinds:
                continue
            if AssertionKind.REAL in callee_kinds:
                kind = AssertionKind.REAL
            elif AssertionKind.MOCK in callee_kinds:
                kind = AssertionKind.MOCK
            else:
                kind = AssertionKind.NEUTRAL
            scope.assertions.append(RawAssertion(line, end_line, kind))
