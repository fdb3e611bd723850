"""Python test-file scanner: pytest/unittest test discovery, parametrize rows, marks and
assertions, from a tree-sitter parse of one file.

Discovery follows pytest's defaults: module-level functions whose name starts with a test
prefix (`test` by default), methods with that prefix in classes whose name starts with a
class prefix (`Test`) and that define no `__init__` (nested classes included), and the
`test*` methods of unittest `TestCase` subclasses (any base whose name ends in `TestCase`,
or a class of the same file that derives from one). Functions decorated as fixtures are not
tests. When a name is defined twice in one scope only the last definition is collected, as
in Python itself; the earlier one gets a note.

Assertion rule (an assertion covers all its lines; a `with pytest.raises(...)` or
`with self.assertRaises(...)` statement covers its whole block):
- an `assert` statement;
- a call whose callee's last name has `assert` as a word of its own, at the start or after
  an underscore and followed by the end, `_` or a capital (`self.assertEqual`,
  `np.testing.assert_allclose`, `assert_frame_equal`, `xp_assert_close`, `assert_that`,
  `m.assert_called_once`; not `assertion_count`);
- `self.fail(...)` and `pytest.fail(...)`;
- `pytest.raises`/`pytest.warns`/`pytest.deprecated_call` and bare `raises`/`warns`, as a
  context manager or a call (they assert that the raise happens);
- a call to a function or method of the same file that itself asserts (transitively).
An assertion is mock-related when it is a mock's own assertion method
(`assert_called*`, `assert_any_call`, `assert_has_calls`, `assert_not_called`,
`assert_awaited*`, ...) or when its checked expression reads a mock's call record
(`.called`, `.call_count`, `.call_args`, `.call_args_list`, `.mock_calls`, ...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from evalflow.repo.tests_common import (
    AssertionKind,
    FileScan,
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

_ASSERT_QUERY = r"""
(assert_statement) @assert
((call function: (identifier) @fn) @call
  (#match? @fn "(^|_)assert($|_|[A-Z])|^(raises|warns|deprecated_call)$"))
((call function: (attribute object: (_) @obj attribute: (identifier) @fn)) @call
  (#match? @fn "(^|_)assert($|_|[A-Z])|^(fail|raises|warns|deprecated_call)$"))
"""

_CALL_QUERY = r"""
(call function: (identifier) @fn) @call
((call function: (attribute object: (identifier) @obj attribute: (identifier) @fn)) @call
  (#any-of? @obj "self" "cls"))
"""

_ASSERT_NAME_RE = re.compile(r"(^|_)assert($|_|[A-Z])")
_MOCK_METHOD_RE = re.compile(
    r"^assert_(called|any_call|has_calls|not_called|awaited|any_await|has_awaits|not_awaited)"
)
_MOCK_RECORD_RE = re.compile(
    r"\.(called\w*|call_count|call_args|call_args_list|mock_calls|method_calls"
    r"|await_count|await_args|await_args_list)\b"
)
_RAISES = frozenset({"raises", "warns", "deprecated_call"})
_UNITTEST_SKIPS = frozenset({"skip", "skipIf", "skipUnless"})
_BLOCK_CONTAINERS = frozenset(
    {
        "if_statement",
        "try_statement",
        "with_statement",
        "else_clause",
        "elif_clause",
        "except_clause",
        "finally_clause",
        "block",
    }
)


@dataclass(frozen=True, slots=True)
class _Mark:
    """A pytest mark or unittest decorator: its name and the call arguments, if any."""

    name: str
    args: Node | None


def scan_python(
    source: bytes,
    function_prefixes: tuple[str, ...],
    class_prefixes: tuple[str, ...],
    assertion_helpers: re.Pattern[str] | None = None,
) -> FileScan:
    """Scan one Python file into raw tests, imports and notes. `assertion_helpers` names
    further callees (full match on the last name) that count as assertions."""
    tree = parser_for("python").parse(source)
    root = tree.root_node
    scanner = _PythonScanner(function_prefixes, class_prefixes, assertion_helpers)
    scanner.scan(root)
    error_line = first_error_line(root)
    if error_line is not None:
        scanner.scan_result.notes.append(
            RawNote(error_line, "syntax_error", "syntax error; scanned what could be parsed")
        )
    return scanner.scan_result


class _PythonScanner:
    def __init__(
        self,
        function_prefixes: tuple[str, ...],
        class_prefixes: tuple[str, ...],
        assertion_helpers: re.Pattern[str] | None,
    ) -> None:
        self.function_prefixes = function_prefixes
        self.class_prefixes = class_prefixes
        self.assertion_helpers = assertion_helpers
        self.scan_result = FileScan()
        self.scopes: dict[tuple[int, int], Scope] = {}
        self.module_values: dict[str, Node] = {}
        self.module_marks: list[_Mark] = []
        self.unittest_classes: set[str] = set()

    def scan(self, root: Node) -> None:
        statements = list(_module_statements(root))
        self._collect_module_level(statements)
        containers = [n for n in statements if n.type in _DEFINITION_TYPES]
        self._visit_container(containers, suite=(), outer_marks=[], in_class=None)
        self._attribute(root)

    def _collect_module_level(self, statements: list[Node]) -> None:
        class_bases: dict[str, list[str]] = {}
        for node in statements:
            if node.type in ("import_statement", "import_from_statement"):
                self._record_import(node)
            elif node.type == "expression_statement":
                self._record_assignment(node, self.module_values, self.module_marks)
            else:
                definition = _definition_of(node)
                if definition.type == "class_definition":
                    class_bases[text_of(definition.child_by_field_name("name"))] = _bases(
                        definition
                    )
        changed = True
        while changed:
            changed = False
            for name, bases in class_bases.items():
                if name in self.unittest_classes:
                    continue
                if any(_is_unittest_base(b) or b in self.unittest_classes for b in bases):
                    self.unittest_classes.add(name)
                    changed = True

    def _record_import(self, node: Node) -> None:
        result = self.scan_result
        if node.type == "import_statement":
            for child in node.named_children:
                name_node = (
                    child.child_by_field_name("name") if child.type == "aliased_import" else child
                )
                if name_node is not None and name_node.type == "dotted_name":
                    module = text_of(name_node)
                    result.imports.append(module)
                    result.import_targets.append(module)
            return
        module_node = node.child_by_field_name("module_name")
        module = text_of(module_node)
        result.imports.append(module)
        result.import_targets.append(module)
        base = module if not module.endswith(".") else module.rstrip(".")
        for name_node in node.children_by_field_name("name"):
            target = (
                name_node.child_by_field_name("name")
                if name_node.type == "aliased_import"
                else name_node
            )
            if target is not None and base:
                result.import_targets.append(f"{base}.{text_of(target)}")

    def _record_assignment(
        self, statement: Node, values: dict[str, Node], marks: list[_Mark]
    ) -> None:
        expression = statement.named_children[0] if statement.named_children else None
        if expression is None or expression.type != "assignment":
            return
        left = expression.child_by_field_name("left")
        right = expression.child_by_field_name("right")
        if left is None or right is None or left.type != "identifier":
            return
        name = text_of(left)
        if name == "pytestmark":
            marks.extend(_marks_of_value(right))
        elif right.type in ("list", "tuple"):
            values[name] = right

    def _visit_container(
        self,
        nodes: list[Node],
        suite: tuple[str, ...],
        outer_marks: list[_Mark],
        in_class: _ClassContext | None,
    ) -> None:
        collected: dict[str, RawTest] = {}
        for node in nodes:
            definition = _definition_of(node)
            decorators = _decorators(node)
            if definition.type == "class_definition":
                self._visit_class(definition, decorators, suite, outer_marks, in_class)
                continue
            if definition.type != "function_definition":
                continue
            name = text_of(definition.child_by_field_name("name"))
            marks = [m for m in (_mark_of(d) for d in reversed(decorators)) if m is not None]
            is_test = (
                (in_class is None or in_class.collects_tests)
                and name.startswith(self.function_prefixes)
                and not any(m.name == "fixture" for m in marks)
            )
            scope = Scope(name=name, is_test=is_test)
            self.scopes[span(definition)] = scope
            if not is_test:
                continue
            test = self._make_test(
                node, definition, name, scope, suite, marks + outer_marks, in_class
            )
            shadowed = collected.get(name)
            if shadowed is not None:
                self.scan_result.tests.remove(shadowed)
                self.scan_result.notes.append(
                    RawNote(
                        shadowed.def_line,
                        "shadowed_test",
                        f"{name} is redefined at line {test.def_line}; "
                        "only the last definition is collected",
                    )
                )
            collected[name] = test
            self.scan_result.tests.append(test)

    def _visit_class(
        self,
        definition: Node,
        decorators: list[Node],
        suite: tuple[str, ...],
        outer_marks: list[_Mark],
        in_class: _ClassContext | None,
    ) -> None:
        name = text_of(definition.child_by_field_name("name"))
        body = definition.child_by_field_name("body")
        members = list(body.named_children) if body is not None else []
        is_unittest = in_class is None and (
            name in self.unittest_classes or any(_is_unittest_base(b) for b in _bases(definition))
        )
        has_init = any(
            _definition_of(m).type == "function_definition"
            and text_of(_definition_of(m).child_by_field_name("name")) == "__init__"
            for m in members
        )
        collectable_parent = in_class is None or (in_class.collects_tests and not in_class.unittest)
        is_pytest_class = (
            collectable_parent and name.startswith(self.class_prefixes) and not is_unittest
        )
        if is_pytest_class and has_init:
            self.scan_result.notes.append(
                RawNote(
                    line_of(definition),
                    "uncollected_class",
                    f"class {name} defines __init__, so pytest does not collect its tests",
                )
            )
        collects = is_unittest or (is_pytest_class and not has_init)
        class_values: dict[str, Node] = {}
        class_marks: list[_Mark] = []
        for member in members:
            if member.type == "expression_statement":
                self._record_assignment(member, class_values, class_marks)
        marks = [m for m in (_mark_of(d) for d in reversed(decorators)) if m is not None]
        context = _ClassContext(
            collects_tests=collects,
            unittest=is_unittest,
            values={**(in_class.values if in_class else {}), **class_values},
        )
        self._visit_container(
            [m for m in members if m.type in _DEFINITION_TYPES],
            (*suite, name),
            marks + class_marks + outer_marks,
            context,
        )

    def _make_test(
        self,
        node: Node,
        definition: Node,
        name: str,
        scope: Scope,
        suite: tuple[str, ...],
        marks: list[_Mark],
        in_class: _ClassContext | None,
    ) -> RawTest:
        all_marks = marks + self.module_marks
        values = {**self.module_values, **(in_class.values if in_class else {})}
        dims: list[list[RawRow]] = []
        for mark in all_marks:
            if mark.name == "parametrize":
                dims.append(self._parametrize_rows(mark, values, name, line_of(definition)))
        return RawTest(
            suite=suite,
            name=name,
            start_line=line_of(node),
            end_line=end_line_of(node),
            def_line=line_of(definition),
            scope=scope,
            dims=dims,
            skipped=any(_is_skip(m) for m in all_marks) or _body_skips(definition),
            markers=frozenset(m.name for m in all_marks),
        )

    def _parametrize_rows(
        self, mark: _Mark, values: dict[str, Node], test_name: str, def_line: int
    ) -> list[RawRow]:
        argvalues = _argvalues(mark.args)
        rows = _rows_of(argvalues, values, depth=0) if argvalues is not None else None
        line = line_of(argvalues) if argvalues is not None else def_line
        if rows is None:
            self.scan_result.notes.append(
                RawNote(
                    line,
                    "unresolved_rows",
                    f"parametrize values of {test_name} are not a literal list; counted as one row",
                )
            )
            return [RawRow(line)]
        if not rows:
            return [RawRow(line, skipped=True)]
        return rows

    def _attribute(self, root: Node) -> None:
        assertions: list[tuple[Node, AssertionKind]] = []
        for pattern, captures in run_matches(query_for("python", _ASSERT_QUERY), root):
            kind = _classify(pattern, captures)
            if kind is not None:
                node = captures["assert"][0] if pattern == 0 else _with_block(captures["call"][0])
                assertions.append((node, kind))
        if self.assertion_helpers is not None:
            assertions += configured_helper_assertions(
                "python", root, self.assertion_helpers, _kind_of_call, assertions
            )
        helper_names = {s.name for s in self.scopes.values() if not s.is_test}
        calls: list[tuple[Node, str]] = []
        if helper_names:
            for _, captures in run_matches(query_for("python", _CALL_QUERY), root):
                callee = text_of(captures["fn"][0])
                if callee in helper_names:
                    calls.append((captures["call"][0], callee))
        attribute_assertions(self.scopes, assertions, calls)
        resolve_helper_calls(list(self.scopes.values()))


@dataclass(frozen=True, slots=True)
class _ClassContext:
    collects_tests: bool
    unittest: bool
    values: dict[str, Node]


_DEFINITION_TYPES = frozenset({"function_definition", "class_definition", "decorated_definition"})


def _module_statements(root: Node):
    """Module-level statements, descending into module-level if/try/with blocks."""
    for node in root.named_children:
        if node.type in _BLOCK_CONTAINERS:
            yield from _module_statements(node)
        else:
            yield node


def _definition_of(node: Node) -> Node:
    if node.type == "decorated_definition":
        inner = node.child_by_field_name("definition")
        if inner is not None:
            return inner
    return node


def _decorators(node: Node) -> list[Node]:
    if node.type != "decorated_definition":
        return []
    return [c for c in node.named_children if c.type == "decorator"]


def _bases(class_definition: Node) -> list[str]:
    superclasses = class_definition.child_by_field_name("superclasses")
    if superclasses is None:
        return []
    return [
        text_of(c) for c in superclasses.named_children if c.type in ("identifier", "attribute")
    ]


def _is_unittest_base(base: str) -> bool:
    return base.rsplit(".", 1)[-1].endswith("TestCase")


def _dotted(node: Node) -> str:
    return "".join(text_of(node).split())


def _mark_of(decorator: Node) -> _Mark | None:
    expression = next((c for c in decorator.named_children if c.type != "comment"), None)
    return _mark_of_expression(expression) if expression is not None else None


def _mark_of_expression(expression: Node) -> _Mark | None:
    """Read `pytest.mark.X(...)`, `mark.X`, `unittest.skip(...)`, `pytest.fixture` forms."""
    args = None
    target = expression
    if expression.type == "call":
        target = expression.child_by_field_name("function")
        args = expression.child_by_field_name("arguments")
    if target is None or target.type not in ("identifier", "attribute"):
        return None
    segments = _dotted(target).split(".")
    last = segments[-1]
    if len(segments) >= 2 and segments[-2] == "mark":
        return _Mark(last, args)
    if last == "fixture":
        return _Mark("fixture", args)
    if last in _UNITTEST_SKIPS and (len(segments) == 1 or segments[-2] == "unittest"):
        return _Mark(f"unittest.{last}", args)
    return None


def _marks_of_value(value: Node) -> list[_Mark]:
    items = value.named_children if value.type in ("list", "tuple") else [value]
    return [m for m in (_mark_of_expression(i) for i in items if i.type != "comment") if m]


def _positional(args: Node | None) -> list[Node]:
    if args is None:
        return []
    return [c for c in args.named_children if c.type not in ("keyword_argument", "comment")]


def _keyword(args: Node | None, name: str) -> Node | None:
    if args is None:
        return None
    for child in args.named_children:
        if child.type == "keyword_argument" and text_of(child.child_by_field_name("name")) == name:
            return child.child_by_field_name("value")
    return None


def _is_skip(mark: _Mark) -> bool:
    """Unconditional skips only: a `skipif` whose condition is not the literal True runs."""
    if mark.name in ("skip", "unittest.skip"):
        return True
    first = next(iter(_positional(mark.args)), None)
    if mark.name in ("skipif", "unittest.skipIf"):
        return first is not None and first.type == "true"
    if mark.name == "unittest.skipUnless":
        return first is not None and first.type == "false"
    return False


def _body_skips(definition: Node) -> bool:
    """True when the body's first statement (after a docstring) skips unconditionally."""
    body = definition.child_by_field_name("body")
    if body is None:
        return False
    statements = [c for c in body.named_children if c.type != "comment"]
    if statements and _is_docstring(statements[0]):
        statements = statements[1:]
    if not statements or statements[0].type != "expression_statement":
        return False
    call = statements[0].named_children[0] if statements[0].named_children else None
    if call is None or call.type != "call":
        return False
    callee = _dotted(call.child_by_field_name("function"))
    return callee in ("pytest.skip", "self.skipTest")


def _is_docstring(statement: Node) -> bool:
    return (
        statement.type == "expression_statement"
        and len(statement.named_children) == 1
        and statement.named_children[0].type == "string"
    )


def _argvalues(args: Node | None) -> Node | None:
    keyword = _keyword(args, "argvalues")
    if keyword is not None:
        return keyword
    positional = _positional(args)
    return positional[1] if len(positional) >= 2 else None


def _rows_of(value: Node, values: dict[str, Node], depth: int) -> list[RawRow] | None:
    """Rows of a parametrize table, or None when they cannot be read statically."""
    if depth > 8:
        return None
    if value.type == "identifier":
        target = values.get(text_of(value))
        return _rows_of(target, values, depth + 1) if target is not None else None
    if value.type not in ("list", "tuple"):
        return None
    rows: list[RawRow] = []
    for element in value.named_children:
        if element.type == "comment":
            continue
        if element.type == "list_splat":
            inner = element.named_children[0] if element.named_children else None
            expanded = _rows_of(inner, values, depth + 1) if inner is not None else None
            if expanded is None:
                return None
            rows.extend(expanded)
            continue
        rows.append(_row_of(element))
    return rows


def _row_of(element: Node) -> RawRow:
    if element.type == "call":
        callee = _dotted(element.child_by_field_name("function"))
        if callee.rsplit(".", 1)[-1] == "param":
            marks_node = _keyword(element.child_by_field_name("arguments"), "marks")
            marks = _marks_of_value(marks_node) if marks_node is not None else []
            return RawRow(
                line_of(element),
                skipped=any(_is_skip(m) for m in marks),
                markers=frozenset(m.name for m in marks),
            )
    return RawRow(line_of(element))


def _classify(pattern: int, captures: dict[str, list[Node]]) -> AssertionKind | None:
    if pattern == 0:
        statement = captures["assert"][0]
        condition = statement.named_children[0] if statement.named_children else None
        return _kind_from_text(text_of(condition))
    name = text_of(captures["fn"][0])
    call = captures["call"][0]
    if pattern == 1:
        if _ASSERT_NAME_RE.search(name):
            return _kind_from_text(text_of(call.child_by_field_name("arguments")))
        return AssertionKind.REAL
    obj = _dotted(captures["obj"][0])
    if _MOCK_METHOD_RE.match(name):
        return AssertionKind.MOCK
    if _ASSERT_NAME_RE.search(name):
        return _kind_from_text(text_of(call.child_by_field_name("arguments")))
    if name == "fail":
        return AssertionKind.REAL if obj in ("self", "pytest") else None
    return AssertionKind.REAL if obj == "pytest" else None


def _with_block(call: Node) -> Node:
    """The whole `with` statement when the call is its context manager (`with
    pytest.raises(...):` asserts about everything in the block), else the call."""
    item = call.parent
    clause = item.parent if item is not None and item.type == "with_item" else None
    statement = clause.parent if clause is not None and clause.type == "with_clause" else None
    if statement is not None and statement.type == "with_statement":
        return statement
    return call


def _kind_of_call(call: Node) -> AssertionKind:
    return _kind_from_text(text_of(call.child_by_field_name("arguments")))


def _kind_from_text(text: str) -> AssertionKind:
    return AssertionKind.MOCK if _MOCK_RECORD_RE.search(text) else AssertionKind.REAL
