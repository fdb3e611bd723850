"""JavaScript/TypeScript test-file scanner: Jest, Vitest, Mocha, Jasmine and Playwright
style `describe`/`it`/`test` calls, `.each` tables, skips, tags and assertions.

A test is a call rooted at `it`, `test`, `specify` (or their `f`/`x` variants) whose other
chain members are known modifiers (`only`, `skip`, `todo`, `concurrent`, `each`, `skipIf`,
...), with a title argument and a callback; a title-only `it('x')` or `it.todo('x')` is a
pending (skipped) test; a test whose body is a named function (`it('x', runCase)`) asserts
when that function, declared in the same file, does. A suite is the same with `describe`,
`context`, `suite` or Playwright's `test.describe`. Suites nest by source position. Any
other member (`test.step`, `test.use`, `test.beforeEach`, `test.describe.configure`) is not
a test.

Assertion rule (an assertion covers every line of its whole chain, e.g. `expect(a)` through
the closing `})` of `.toEqual({...})`):
- `expect(...)` / `expect.soft(...)` / `expect.poll(...)` followed by at least one matcher
  or chai property (`expect(x).toBe(1)`, `expect(x).to.be.true`);
- `expect.assertions(n)` / `expect.hasAssertions()` (neutral: they count as asserting but
  never decide mock-only);
- `assert(...)`, `assert.*(...)`, `chai.assert.*`, `t.assert.*`, `sinon.assert.*`,
  `td.verify(...)`;
- a call of a function named like an assertion (`assertValid(...)`, `expectOk(...)`);
- chai `should` chains and Cypress `.should(...)`; supertest's `.expect(...)` on a request;
- a call to a function of the same file, declared outside any test, that itself asserts.
Mock-related: matchers about calls or returns of a mock (`toHaveBeenCalled*`,
`toBeCalled*`, `toHaveBeenLastCalledWith`, `toHaveReturned*`, sinon-chai `calledWith`...),
`sinon.assert.*`, `td.verify`, and any assertion whose subject reads a call record
(`fn.mock.calls`, `spy.callCount`, `spy.calledWith(...)`).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from tree_sitter import Node

from evalflow.repo.tests_common import (
    AssertionKind,
    FileScan,
    Grammar,
    RawNote,
    RawRow,
    RawTest,
    Scope,
    attribute_assertions,
    configured_helper_assertions,
    end_line_of,
    first_error_line,
    line_of,
    parser_for,
    query_for,
    resolve_helper_calls,
    run_matches,
    span,
    text_of,
)

_TEST_ROOTS = frozenset({"it", "test", "specify", "fit", "xit", "xtest", "xspecify"})
_SUITE_ROOTS = frozenset({"describe", "context", "suite", "fdescribe", "xdescribe", "xcontext"})
_SKIP_ROOTS = frozenset({"xit", "xtest", "xspecify", "xdescribe", "xcontext"})
_SKIP_MODIFIERS = frozenset({"skip", "todo", "fixme"})
_FACTORIES = frozenset({"each", "for", "skipIf", "runIf"})
_ROW_FACTORIES = frozenset({"each", "for"})
_TEST_MODIFIERS = frozenset(
    {
        "only",
        "skip",
        "todo",
        "concurrent",
        "failing",
        "fails",
        "fixme",
        "sequential",
        "each",
        "for",
        "skipIf",
        "runIf",
    }
)
_SUITE_MODIFIERS = frozenset(
    {
        "only",
        "skip",
        "todo",
        "concurrent",
        "fixme",
        "sequential",
        "serial",
        "parallel",
        "each",
        "for",
        "skipIf",
        "runIf",
    }
)
_FUNCTION_TYPES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)

_INVOCATION_QUERY = r"""
((call_expression function: (identifier) @fn) @call
  (#any-of? @fn "it" "test" "specify" "fit" "xit" "xtest" "xspecify"
                "describe" "context" "suite" "fdescribe" "xdescribe" "xcontext"))
((call_expression function: (member_expression) @fn) @call
  (#match? @fn "^(it|test|specify|fit|xit|xtest|describe|context|suite|fdescribe|xdescribe)[.]"))
((call_expression function: (call_expression) @fn) @call
  (#match? @fn "^(it|test|specify|fit|xit|xtest|describe|context|suite|fdescribe|xdescribe)[.(]"))
"""

_ASSERT_QUERY = r"""
((call_expression function: (identifier) @fn) @call (#eq? @fn "expect"))
((call_expression
   function: (member_expression object: (identifier) @obj property: (property_identifier) @prop))
  @call (#eq? @obj "expect"))
((call_expression function: (identifier) @fn) @call
  (#match? @fn "^(assert|(assert|expect)[A-Z_].*)$"))
((call_expression function: (member_expression) @fn) @call
  (#match? @fn "^([A-Za-z_$][A-Za-z0-9_$]*[.])?assert([.][A-Za-z_$][A-Za-z0-9_$]*)+$"))
((call_expression function: (member_expression) @fn) @call (#eq? @fn "td.verify"))
((member_expression property: (property_identifier) @prop) @member (#eq? @prop "should"))
((call_expression
   function: (member_expression object: (call_expression) property: (property_identifier) @prop))
  @call (#eq? @prop "expect"))
"""

_HELPER_QUERY = r"""
(function_declaration name: (identifier) @name) @fn
(generator_function_declaration name: (identifier) @name) @fn
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)] @fn)
"""

_CALL_QUERY = "(call_expression function: (identifier) @fn) @call"

_ARRAY_QUERY = "(variable_declarator name: (identifier) @name value: (array) @value)"

_MOCK_MATCHER_RE = re.compile(
    r"^(toHaveBeen\w*Called\w*|toBeCalled\w*|(last|nth)CalledWith|toHave\w*Returned\w*"
    r"|toReturn\w*|(always|never)?[cC]alled\w*|callCount|notCalled)$"
)
_MOCK_RECORD_RE = re.compile(
    r"\.mock\.(calls|results|lastCall|instances|contexts)\b"
    r"|\.(callCount|called|calledOnce|calledTwice|calledThrice|calledWith\w*|calledOnceWith\w*"
    r"|notCalled|getCall|firstCall|secondCall|thirdCall|lastCall)\b"
)
_TAG_RE = re.compile(r"(?<![\w@])@([A-Za-z][\w-]*)")


@dataclass(frozen=True, slots=True)
class _Segment:
    name: str
    args: Node | None


@dataclass(slots=True)
class _Invocation:
    """A test or suite call with everything read from its own call site."""

    node: Node
    is_suite: bool
    title: str
    skipped: bool
    markers: frozenset[str]
    dims: list[list[RawRow]]
    body_ref: Node | None


@dataclass(frozen=True, slots=True)
class _SuiteFrame:
    end_byte: int
    titles: tuple[str, ...]
    skipped: bool
    markers: frozenset[str]
    dims: tuple[list[RawRow], ...]


def scan_js(
    source: bytes, grammar: Grammar, assertion_helpers: re.Pattern[str] | None = None
) -> FileScan:
    """Scan one JavaScript/TypeScript file into raw tests, imports and notes.
    `assertion_helpers` names further callees (full match on the last name) that count as
    assertions."""
    tree = parser_for(grammar).parse(source)
    root = tree.root_node
    scanner = _JsScanner(grammar, root, assertion_helpers)
    scanner.scan()
    error_line = first_error_line(root)
    if error_line is not None:
        scanner.scan_result.notes.append(
            RawNote(error_line, "syntax_error", "syntax error; scanned what could be parsed")
        )
    return scanner.scan_result


class _JsScanner:
    def __init__(
        self, grammar: Grammar, root: Node, assertion_helpers: re.Pattern[str] | None
    ) -> None:
        self.grammar: Grammar = grammar
        self.root = root
        self.assertion_helpers = assertion_helpers
        self.scan_result = FileScan()
        self._arrays: dict[str, Node] | None = None

    def scan(self) -> None:
        self._collect_imports()
        invocations = self._invocations()
        scopes = self._build_tests(invocations)
        self._add_helpers(scopes)
        self._attribute(scopes)

    def _collect_imports(self) -> None:
        for node in self.root.named_children:
            source = _import_source(node)
            if source is not None:
                self.scan_result.imports.append(source)
                self.scan_result.import_targets.append(source)

    def _invocations(self) -> list[_Invocation]:
        seen: set[tuple[int, int]] = set()
        found: list[_Invocation] = []
        for _, captures in run_matches(query_for(self.grammar, _INVOCATION_QUERY), self.root):
            call = captures["call"][0]
            if span(call) in seen:
                continue
            seen.add(span(call))
            invocation = self._invocation(call)
            if invocation is not None:
                found.append(invocation)
        found.sort(key=lambda i: (i.node.start_byte, -i.node.end_byte))
        return found

    def _invocation(self, call: Node) -> _Invocation | None:
        arguments = call.child_by_field_name("arguments")
        function = call.child_by_field_name("function")
        if arguments is None or function is None or arguments.type != "arguments":
            return None
        chain = _chain(function)
        if not chain or any(s.name in _FACTORIES and s.args is None for s in chain):
            return None
        root = chain[0].name
        names = [s.name for s in chain[1:]]
        if root in _SUITE_ROOTS:
            is_suite, modifiers = True, names
        elif root == "test" and names[:1] == ["describe"]:
            is_suite, modifiers = True, names[1:]
        elif root in _TEST_ROOTS:
            is_suite, modifiers = False, names
        else:
            return None
        allowed = _SUITE_MODIFIERS if is_suite else _TEST_MODIFIERS
        if any(m not in allowed for m in modifiers):
            return None
        args = [a for a in arguments.named_children if a.type != "comment"]
        if not args:
            return None
        title_node = args[0]
        callback = next((a for a in reversed(args[1:]) if a.type in _FUNCTION_TYPES), None)
        body_ref = (
            args[-1]
            if callback is None and len(args) > 1 and args[-1].type == "identifier"
            else None
        )
        has_body = callback is not None or body_ref is not None
        is_literal_title = title_node.type in ("string", "template_string")
        if not has_body and (is_suite or not is_literal_title):
            return None
        title = _title(title_node)
        options = " ".join(text_of(a) for a in args[1:] if a.type == "object")
        skipped = (
            root in _SKIP_ROOTS or any(m in _SKIP_MODIFIERS for m in modifiers) or not has_body
        )
        dims = [
            self._rows(s.args, call)
            for s in chain
            if s.name in _ROW_FACTORIES and s.args is not None
        ]
        return _Invocation(
            node=call,
            is_suite=is_suite,
            title=title,
            skipped=skipped,
            markers=frozenset(_TAG_RE.findall(f"{title} {options}")),
            dims=dims,
            body_ref=body_ref,
        )

    def _rows(self, table: Node, call: Node) -> list[RawRow]:
        rows = self._rows_of(table)
        if rows is None:
            self.scan_result.notes.append(
                RawNote(
                    line_of(table),
                    "unresolved_rows",
                    f"`.each` table of the call at line {line_of(call)} is not a literal; "
                    "counted as one row",
                )
            )
            return [RawRow(line_of(table))]
        if not rows:
            return [RawRow(line_of(table), skipped=True)]
        return rows

    def _rows_of(self, table: Node) -> list[RawRow] | None:
        if table.type == "template_string":
            return _template_rows(table)
        values = [a for a in table.named_children if a.type != "comment"]
        if not values:
            return None
        value = values[0]
        if value.type == "identifier":
            resolved = self._array_named(text_of(value))
            if resolved is None:
                return None
            value = resolved
        if value.type != "array":
            return None
        elements = [e for e in value.named_children if e.type != "comment"]
        if any(e.type == "spread_element" for e in elements):
            return None
        return [RawRow(line_of(e)) for e in elements]

    def _array_named(self, name: str) -> Node | None:
        if self._arrays is None:
            self._arrays = {}
            for _, captures in run_matches(query_for(self.grammar, _ARRAY_QUERY), self.root):
                self._arrays.setdefault(text_of(captures["name"][0]), captures["value"][0])
        return self._arrays.get(name)

    def _build_tests(self, invocations: list[_Invocation]) -> dict[tuple[int, int], Scope]:
        scopes: dict[tuple[int, int], Scope] = {}
        stack: list[_SuiteFrame] = []
        for invocation in invocations:
            node = invocation.node
            while stack and stack[-1].end_byte <= node.start_byte:
                stack.pop()
            parent = stack[-1] if stack else _SuiteFrame(0, (), False, frozenset(), ())
            if invocation.is_suite:
                stack.append(
                    _SuiteFrame(
                        end_byte=node.end_byte,
                        titles=(*parent.titles, invocation.title),
                        skipped=parent.skipped or invocation.skipped,
                        markers=parent.markers | invocation.markers,
                        dims=(*parent.dims, *invocation.dims),
                    )
                )
                continue
            scope = Scope(name=invocation.title, is_test=True)
            scopes[span(node)] = scope
            ref = invocation.body_ref
            if ref is not None:
                # `it('x', runCase)`: the named function is the body, as if it were called.
                scope.helper_calls.append((line_of(ref), end_line_of(ref), text_of(ref)))
            self.scan_result.tests.append(
                RawTest(
                    suite=parent.titles,
                    name=invocation.title,
                    start_line=line_of(node),
                    end_line=end_line_of(node),
                    def_line=line_of(node),
                    scope=scope,
                    dims=[*parent.dims, *invocation.dims],
                    skipped=parent.skipped or invocation.skipped,
                    markers=parent.markers | invocation.markers,
                )
            )
        return scopes

    def _add_helpers(self, scopes: dict[tuple[int, int], Scope]) -> None:
        test_spans = sorted(scopes)
        for _, captures in run_matches(query_for(self.grammar, _HELPER_QUERY), self.root):
            function = captures["fn"][0]
            key = span(function)
            if key in scopes or _inside_any(key, test_spans):
                continue
            scopes[key] = Scope(name=text_of(captures["name"][0]), is_test=False)

    def _attribute(self, scopes: dict[tuple[int, int], Scope]) -> None:
        assertions: list[tuple[Node, AssertionKind]] = []
        for pattern, captures in run_matches(query_for(self.grammar, _ASSERT_QUERY), self.root):
            found = _classify(pattern, captures)
            if found is not None:
                assertions.append(found)
        if self.assertion_helpers is not None:
            assertions += configured_helper_assertions(
                self.grammar, self.root, self.assertion_helpers, _kind_of_call, assertions
            )
        helper_names = {s.name for s in scopes.values() if not s.is_test}
        calls: list[tuple[Node, str]] = []
        if helper_names:
            for _, captures in run_matches(query_for(self.grammar, _CALL_QUERY), self.root):
                callee = text_of(captures["fn"][0])
                if callee in helper_names:
                    calls.append((captures["call"][0], callee))
        attribute_assertions(scopes, assertions, calls)
        resolve_helper_calls(list(scopes.values()))


def _inside_any(key: tuple[int, int], sorted_spans: list[tuple[int, int]]) -> bool:
    """Whether `key` lies inside one of the (non-overlapping, sorted) test spans."""
    index = bisect.bisect_right(sorted_spans, (key[0], float("inf"))) - 1
    return index >= 0 and sorted_spans[index][1] >= key[1]


def _chain(node: Node) -> list[_Segment] | None:
    """Flatten a callee like `test.concurrent.each([...])` into named segments."""
    if node.type == "identifier":
        return [_Segment(text_of(node), None)]
    if node.type == "member_expression":
        inner = node.child_by_field_name("object")
        prop = node.child_by_field_name("property")
        head = _chain(inner) if inner is not None else None
        if head is None or prop is None:
            return None
        return [*head, _Segment(text_of(prop), None)]
    if node.type == "call_expression":
        inner = node.child_by_field_name("function")
        head = _chain(inner) if inner is not None else None
        if not head or head[-1].args is not None:
            return None
        return [*head[:-1], _Segment(head[-1].name, node.child_by_field_name("arguments"))]
    return None


def _title(node: Node) -> str:
    text = text_of(node)
    if node.type in ("string", "template_string") and len(text) >= 2:
        return text[1:-1]
    return text


def _template_rows(template: Node) -> list[RawRow] | None:
    """Rows of a tagged-template table: the header names the columns, each row then
    supplies one `${...}` per column."""
    substitutions = [c for c in template.named_children if c.type == "template_substitution"]
    header_text = ""
    for child in template.children:
        if child.type == "template_substitution":
            break
        if child.type == "string_fragment":
            header_text += text_of(child)
    header = next((line for line in header_text.splitlines() if line.strip()), "")
    columns = len([c for c in header.split("|") if c.strip()])
    if columns == 0 or not substitutions:
        return None
    return [RawRow(line_of(substitutions[i])) for i in range(0, len(substitutions), columns)]


def _import_source(node: Node) -> str | None:
    if node.type in ("import_statement", "export_statement"):
        source = node.child_by_field_name("source")
        if source is None and node.type == "import_statement":
            clause = next(
                (c for c in node.named_children if c.type == "import_require_clause"), None
            )
            source = clause.child_by_field_name("source") if clause is not None else None
        return _title(source) if source is not None else None
    if node.type in ("lexical_declaration", "variable_declaration"):
        for declarator in node.named_children:
            if declarator.type == "variable_declarator":
                value = declarator.child_by_field_name("value")
                found = _required(value) if value is not None else None
                if found is not None:
                    return found
        return None
    if node.type == "expression_statement" and node.named_children:
        return _required(node.named_children[0])
    return None


def _required(value: Node) -> str | None:
    """The module of `require('m')`, `require('m').x`, `await import('m')`."""
    while value.type in ("member_expression", "await_expression", "parenthesized_expression"):
        inner = (
            value.child_by_field_name("object")
            if value.type == "member_expression"
            else (value.named_children[0] if value.named_children else None)
        )
        if inner is None:
            return None
        value = inner
    if value.type != "call_expression":
        return None
    function = value.child_by_field_name("function")
    arguments = value.child_by_field_name("arguments")
    if function is None or arguments is None or text_of(function) not in ("require", "import"):
        return None
    first = next((a for a in arguments.named_children if a.type == "string"), None)
    return _title(first) if first is not None else None


def _chain_properties(start: Node, include_start: bool) -> tuple[list[str], Node]:
    """Property names of the member/call chain that continues from `start` upwards, and
    the chain's outermost node (the whole assertion, e.g. `expect(a).toEqual({...})`)."""
    props: list[str] = []
    if include_start:
        prop = start.child_by_field_name("property")
        props.append(text_of(prop))
    current = start
    while True:
        parent = current.parent
        if parent is None:
            break
        if parent.type == "member_expression" and _same(
            parent.child_by_field_name("object"), current
        ):
            props.append(text_of(parent.child_by_field_name("property")))
        elif (
            not (
                parent.type == "call_expression"
                and _same(parent.child_by_field_name("function"), current)
            )
            and parent.type != "non_null_expression"
        ):
            break
        current = parent
    return props, current


def _same(a: Node | None, b: Node) -> bool:
    return a is not None and span(a) == span(b) and a.type == b.type


def _expect(call: Node) -> tuple[Node, AssertionKind] | None:
    props, top = _chain_properties(call, include_start=False)
    if not props:
        return None
    if any(_MOCK_MATCHER_RE.match(p) for p in props):
        return top, AssertionKind.MOCK
    return top, _kind_from_text(text_of(call.child_by_field_name("arguments")))


def _kind_of_call(call: Node) -> AssertionKind:
    return _kind_from_text(text_of(call.child_by_field_name("arguments")))


def _kind_from_text(text: str) -> AssertionKind:
    return AssertionKind.MOCK if _MOCK_RECORD_RE.search(text) else AssertionKind.REAL


def _classify(pattern: int, captures: dict[str, list[Node]]) -> tuple[Node, AssertionKind] | None:
    if pattern == 5:
        props, top = _chain_properties(captures["member"][0], include_start=True)
        mock = any(_MOCK_MATCHER_RE.match(p) for p in props)
        return top, AssertionKind.MOCK if mock else AssertionKind.REAL
    call = captures["call"][0]
    if pattern == 0:
        return _expect(call)
    kind: AssertionKind | None
    if pattern == 1:
        prop = text_of(captures["prop"][0])
        if prop in ("soft", "poll"):
            return _expect(call)
        kind = AssertionKind.NEUTRAL if prop in ("assertions", "hasAssertions") else None
    elif (pattern == 3 and text_of(captures["fn"][0]).startswith("sinon.")) or pattern == 4:
        kind = AssertionKind.MOCK
    elif pattern == 6:
        kind = AssertionKind.REAL
    else:
        kind = _kind_from_text(text_of(call.child_by_field_name("arguments")))
    return (call, kind) if kind is not None else None
