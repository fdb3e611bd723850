"""The test inventory of an evaluated repository: every test case (each parametrised row on
its own) with its file:line range, level (unit/e2e), whether and where it asserts, whether
it only asserts on mocks, whether it is skipped, and whether the change under evaluation
added it (SPEC §1: T-checks, T-outcome's mock-only exclusion, the minimum-level floor and
Test distribution D). It feeds the `test_case` warehouse table and the heuristic judge,
which accepts a T-check match only inside a test case that asserts.

Everything here is pure over `(path, text)` pairs: the caller reads files (at the head
commit, read-only) and passes their text. Python, JavaScript and TypeScript files are
parsed with tree-sitter; the per-language rules live in `tests_python` and `tests_js`.

Level precedence, first rule that applies wins:
1. a marker on the test, its class/suite, the module (`pytestmark`) or its parametrize row
   named in `e2e_markers` (pytest `@pytest.mark.e2e`; a JS/TS `@e2e` tag in a test or suite
   title or in Playwright's `{ tag: ... }` option) ⇒ e2e;
2. a marker named in `unit_markers` ⇒ unit (the author's explicit word beats file heuristics);
3. the file path matches one of `e2e_path_globs` ⇒ e2e;
4. the file imports one of `e2e_imports` (a module or any submodule of it) ⇒ e2e;
5. otherwise unit.

Glob semantics (file selection and level): `**` spans directories, `*` and `?` do not (the
shared globs of `evalflow.domain.globs`); on top of that, a pattern without `/` is matched
against every path component (`*.e2e.*`, `__tests__`), a pattern with `/` against the
whole path or any of its leading directories, so `**/tests/e2e*` also covers
`tests/e2e_flows/test_x.py`.

Test ids are `path::Class::name` (Python classes or JS suite titles, outermost first) with
`[row]` appended for parametrised rows. Rows of stacked tables are the cartesian product,
enumerated as pytest orders them (the first-applied table varies slowest: the decorator
nearest `def`, then class-level tables, then module-level; JS suite tables before test
tables). A second JS test with the same id in one file gets `#2`, a third `#3`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from evalflow.domain.globs import glob_match
from evalflow.errors import InputError
from evalflow.repo.diff_lines import (
    DiffLines,
    added_lines_from_unified_diff,
    parse_unified_diff,
)
from evalflow.repo.tests_common import AssertionKind, FileScan, Grammar, RawRow, RawTest
from evalflow.repo.tests_js import scan_js
from evalflow.repo.tests_python import scan_python

__all__ = [
    "DiffLines",
    "InventoryNote",
    "InventoryResult",
    "LevelConventions",
    "TestCase",
    "TestIndex",
    "added_lines_from_unified_diff",
    "build_inventory",
    "classify_feature_tests",
    "find_enclosing_test",
    "inventory_frame",
    "is_test_file",
    "parse_test_file",
    "parse_unified_diff",
    "rows_of",
    "scan_test_file",
]

TestLanguage = Literal["python", "javascript", "typescript"]
TestLevel = Literal["unit", "e2e"]

_EXTENSIONS: dict[str, tuple[TestLanguage, Grammar]] = {
    ".py": ("python", "python"),
    ".js": ("javascript", "javascript"),
    ".jsx": ("javascript", "javascript"),
    ".mjs": ("javascript", "javascript"),
    ".cjs": ("javascript", "javascript"),
    ".ts": ("typescript", "typescript"),
    ".mts": ("typescript", "typescript"),
    ".cts": ("typescript", "typescript"),
    ".tsx": ("typescript", "tsx"),
}


class LevelConventions(BaseModel):
    """Which files hold tests and how a test's level is decided (precedence in the module
    docstring). Every list is configurable per benchmark; the defaults follow the common
    pytest/Jest/Vitest/Playwright/Cypress layouts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    e2e_path_globs: tuple[str, ...] = (
        "**/e2e/**",
        "**/e2e_tests/**",
        "**/integration/**",
        "**/integration_tests/**",
        "**/tests/e2e*",
        "**/api_tests/**",
        "**/cypress/**",
        "*.e2e.*",
        "*.e2e-spec.*",
        "*.integration.*",
        "*.cy.*",
    )
    e2e_imports: tuple[str, ...] = (
        "fastapi.testclient",
        "starlette.testclient",
        "httpx",
        "requests",
        "aiohttp.test_utils",
        "django.test",
        "rest_framework.test",
        "playwright",
        "selenium",
        "testcontainers",
        "psycopg",
        "psycopg2",
        "supertest",
        "@playwright/test",
        "cypress",
        "puppeteer",
        "selenium-webdriver",
        "@testcontainers",
    )
    e2e_markers: tuple[str, ...] = ("e2e", "integration")
    unit_markers: tuple[str, ...] = ("unit",)
    python_test_globs: tuple[str, ...] = ("test_*.py", "*_test.py", "**/tests/**")
    js_test_globs: tuple[str, ...] = ("*.test.*", "*.spec.*", "*.cy.*", "**/__tests__/**")
    exclude_globs: tuple[str, ...] = (
        "**/node_modules/**",
        "**/.venv/**",
        "**/venv/**",
        "**/site-packages/**",
        "**/.git/**",
        "**/.tox/**",
    )
    assertion_helpers: tuple[str, ...] = Field(
        default=(),
        description="Extra regular expressions; a call whose callee's last name fully "
        "matches one counts as a (real) assertion, e.g. `_?check_.*` for a code base whose "
        "shared checks are named check_*.",
    )
    python_function_prefixes: tuple[str, ...] = ("test",)
    python_class_prefixes: tuple[str, ...] = ("Test",)
    max_rows_per_test: int = Field(default=10_000, ge=1)


class TestCase(BaseModel):
    """One collected test case; a parametrised function yields one case per row.

    Lines are 1-based and inclusive. `start_line`-`end_line` spans the whole test (the
    Python function with its decorators, or the whole JS `it(...)` call); `def_line` is the
    `def`/`it(` line. `row_lines` holds the source line of each table row combined into
    this case (slowest-varying table first); `row_line` is the last of them, i.e. the row of
    the fastest-varying table. `assert_lines` lists every line an assertion covers: all
    lines of a multi-line assertion (`expect(x).toEqual({` ... `})`, a wrapped `assert`),
    the whole block of `with pytest.raises(...)`/`with self.assertRaises(...)`, and the
    call lines of a local helper that asserts; `mock_assert_lines` the lines of assertions
    about mocks.
    `mock_only` is true when the test asserts and every assertion is about a mock having
    been called (SPEC §1 mock-only exclusion). `is_feature` is None until the case is
    classified against a diff.
    """

    __test__: ClassVar[bool] = False
    model_config = ConfigDict(frozen=True)

    test_id: str
    function_id: str
    path: str
    suite: list[str]
    name: str
    language: TestLanguage
    start_line: int
    end_line: int
    def_line: int
    row_index: int | None = None
    row_line: int | None = None
    row_lines: list[int] = Field(default_factory=list)
    level: TestLevel
    level_reason: str
    asserts: bool
    assert_lines: list[int]
    mock_assert_lines: list[int]
    mock_only: bool
    skipped: bool
    imports: list[str]
    is_feature: bool | None = None


class InventoryNote(BaseModel):
    """Something the operator should know about a file: skipped (binary), partly parsed
    (syntax error), rows not countable statically, shadowed or uncollected tests."""

    model_config = ConfigDict(frozen=True)

    path: str
    line: int | None
    kind: str
    message: str


class InventoryResult(BaseModel):
    """Test cases plus the notes gathered while building them."""

    model_config = ConfigDict(frozen=True)

    cases: list[TestCase] = Field(default_factory=list)
    notes: list[InventoryNote] = Field(default_factory=list)


def normalise_path(path: str) -> str:
    """Repository-relative POSIX form used in every id and lookup."""
    text = path.replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return text.lstrip("/")


def _language_entry(path: str) -> tuple[TestLanguage, Grammar] | None:
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return _EXTENSIONS.get(name[dot:].lower()) if dot > 0 else None


def glob_matches(path: str, pattern: str) -> bool:
    """Match a normalised path against one glob (semantics in the module docstring), on
    top of the shared `**` glob of `evalflow.domain.globs`."""
    parts = path.split("/")
    if "/" not in pattern:
        return any(glob_match(part, pattern) for part in parts)
    anchored = pattern.lstrip("/")
    return any(glob_match("/".join(parts[:n]), anchored) for n in range(len(parts), 0, -1))


def is_test_file(path: str, conventions: LevelConventions | None = None) -> bool:
    """Whether `path` is a test file under the conventions (Python or JS/TS globs)."""
    conventions = conventions or LevelConventions()
    normalised = normalise_path(path)
    entry = _language_entry(normalised)
    if entry is None or any(glob_matches(normalised, g) for g in conventions.exclude_globs):
        return False
    globs = conventions.python_test_globs if entry[0] == "python" else conventions.js_test_globs
    return any(glob_matches(normalised, g) for g in globs)


# A file named as a test: a tests/spec folder, or a test/spec word in its name (`foo_test.go`,
# `test_foo.rb`, `foo.spec.rb`, `FooTests.cs`, `FooTest.java`).
TEST_NAMED = re.compile(r"(?i)(?:^|[/_.\-])(?:tests?|specs?|__tests__)(?:[/_.\-]|$)")
_TEST_CAMEL = re.compile(r"[a-z0-9](?:Tests?|Spec)\.[A-Za-z]+$")


def is_unread_test_file(path: str) -> bool:
    """Whether `path` is named as a test but written in a language the inventory does not
    parse (C#, Go, Java, Ruby…): its tests exist, evalflow cannot read them, so the run's
    readable tests are not all its tests."""
    normalised = normalise_path(path)
    if _language_entry(normalised) is not None:
        return False
    return bool(TEST_NAMED.search(normalised) or _TEST_CAMEL.search(normalised))


def parse_test_file(
    path: str, text: str, conventions: LevelConventions | None = None
) -> list[TestCase]:
    """Test cases of one file (notes dropped; use `scan_test_file` to keep them)."""
    return scan_test_file(path, text, conventions).cases


def scan_test_file(
    path: str, text: str, conventions: LevelConventions | None = None
) -> InventoryResult:
    """Test cases and notes of one file. Text holding NUL bytes is treated as binary and
    skipped with a note; syntax errors keep whatever parsed and add a note."""
    conventions = conventions or LevelConventions()
    normalised = normalise_path(path)
    entry = _language_entry(normalised)
    if entry is None:
        note = InventoryNote(
            path=normalised, line=None, kind="unsupported", message="not a Python/JS/TS file"
        )
        return InventoryResult(notes=[note])
    if "\x00" in text:
        note = InventoryNote(
            path=normalised,
            line=None,
            kind="binary",
            message="file contains NUL bytes; skipped as binary",
        )
        return InventoryResult(notes=[note])
    language, grammar = entry
    source = text.encode("utf-8", errors="replace")
    helpers = _helper_pattern(conventions.assertion_helpers)
    if language == "python":
        scan = scan_python(
            source,
            conventions.python_function_prefixes,
            conventions.python_class_prefixes,
            helpers,
        )
    else:
        scan = scan_js(source, grammar, helpers)
    return _result_from_scan(normalised, language, scan, conventions)


@lru_cache(maxsize=64)
def _helper_pattern(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    try:
        return re.compile("|".join(f"(?:{p})" for p in patterns))
    except re.error as error:
        raise InputError(
            f"assertion_helpers holds an invalid regular expression: {error}",
            where="LevelConventions.assertion_helpers",
            fix="write each entry as a Python regular expression, e.g. `check_.*`",
        ) from error


def _result_from_scan(
    path: str, language: TestLanguage, scan: FileScan, conventions: LevelConventions
) -> InventoryResult:
    notes = [
        InventoryNote(path=path, line=n.line, kind=n.kind, message=n.message) for n in scan.notes
    ]
    facts = _FileFacts(
        path=path,
        language=language,
        imports=list(dict.fromkeys(scan.imports)),
        level=_file_level(path, scan.import_targets, conventions),
    )
    cases: list[TestCase] = []
    seen: dict[str, int] = {}
    for raw in sorted(scan.tests, key=lambda t: (t.start_line, t.def_line)):
        function_id = "::".join((path, *raw.suite, raw.name))
        seen[function_id] = seen.get(function_id, 0) + 1
        if seen[function_id] > 1:
            function_id = f"{function_id}#{seen[function_id]}"
        expanded, truncated = _expand_rows(raw, conventions.max_rows_per_test)
        if truncated:
            notes.append(
                InventoryNote(
                    path=path,
                    line=raw.def_line,
                    kind="rows_truncated",
                    message=f"{raw.name} has more than {conventions.max_rows_per_test} rows; "
                    "only the first ones are listed",
                )
            )
        cases.extend(
            _case(facts, raw, function_id, row_index, rows, conventions)
            for row_index, rows in expanded
        )
    notes.sort(key=lambda n: (n.line or 0, n.kind))
    return InventoryResult(cases=cases, notes=notes)


def _expand_rows(
    raw: RawTest, limit: int
) -> tuple[list[tuple[int | None, tuple[RawRow, ...]]], bool]:
    if not raw.dims:
        return [(None, ())], False
    combos = list(itertools.islice(itertools.product(*raw.dims), limit + 1))
    truncated = len(combos) > limit
    return list(enumerate(combos[:limit])), truncated


@dataclass(frozen=True, slots=True)
class _FileFacts:
    """What every case of one file shares."""

    path: str
    language: TestLanguage
    imports: list[str]
    level: tuple[TestLevel, str]


def _case(
    facts: _FileFacts,
    raw: RawTest,
    function_id: str,
    row_index: int | None,
    rows: tuple[RawRow, ...],
    conventions: LevelConventions,
) -> TestCase:
    markers = raw.markers.union(*(r.markers for r in rows)) if rows else raw.markers
    level, reason = _level(markers, facts.level, conventions)
    assertions = raw.scope.assertions
    lines = sorted({n for a in assertions for n in range(a.line, a.end_line + 1)})
    mock_lines = sorted(
        {
            n
            for a in assertions
            if a.kind is AssertionKind.MOCK
            for n in range(a.line, a.end_line + 1)
        }
    )
    decisive = [a for a in assertions if a.kind is not AssertionKind.NEUTRAL]
    row_lines = [r.line for r in rows]
    return TestCase(
        test_id=function_id if row_index is None else f"{function_id}[{row_index}]",
        function_id=function_id,
        path=facts.path,
        suite=list(raw.suite),
        name=raw.name,
        language=facts.language,
        start_line=raw.start_line,
        end_line=raw.end_line,
        def_line=raw.def_line,
        row_index=row_index,
        row_line=row_lines[-1] if row_lines else None,
        row_lines=row_lines,
        level=level,
        level_reason=reason,
        asserts=bool(lines),
        assert_lines=lines,
        mock_assert_lines=mock_lines,
        mock_only=bool(decisive) and all(a.kind is AssertionKind.MOCK for a in decisive),
        skipped=raw.skipped or any(r.skipped for r in rows),
        imports=list(facts.imports),
    )


def _level(
    markers: frozenset[str], file_level: tuple[TestLevel, str], conventions: LevelConventions
) -> tuple[TestLevel, str]:
    for marker in conventions.e2e_markers:
        if marker in markers:
            return "e2e", f"marker:{marker}"
    for marker in conventions.unit_markers:
        if marker in markers:
            return "unit", f"marker:{marker}"
    return file_level


def _file_level(
    path: str, import_targets: list[str], conventions: LevelConventions
) -> tuple[TestLevel, str]:
    """The level every unmarked test of a file gets: by path, then by import."""
    for glob in conventions.e2e_path_globs:
        if glob_matches(path, glob):
            return "e2e", f"path:{glob}"
    for target in import_targets:
        for module in conventions.e2e_imports:
            if target == module or target.startswith((f"{module}.", f"{module}/")):
                return "e2e", f"import:{target}"
    return "unit", "default"


def build_inventory(
    files: Iterable[tuple[str, str]],
    conventions: LevelConventions | None = None,
    added_lines: Mapping[str, set[int]] | None = None,
    new_files: Iterable[str] = frozenset(),
) -> InventoryResult:
    """The inventory of many `(path, text)` files; non-test files are ignored.

    Files are processed in path order, so the result does not depend on input order. When
    `added_lines` or `new_files` is given every case is classified as feature or
    pre-existing (`classify_feature_tests`); otherwise `is_feature` stays None.
    """
    conventions = conventions or LevelConventions()
    by_path: dict[str, str] = {}
    for path, text in files:
        normalised = normalise_path(path)
        if normalised in by_path:
            raise InputError(
                f"file {normalised} was passed twice",
                where="build_inventory",
                fix="pass each repository path once",
            )
        by_path[normalised] = text
    cases: list[TestCase] = []
    notes: list[InventoryNote] = []
    for path in sorted(by_path):
        if not is_test_file(path, conventions):
            continue
        result = scan_test_file(path, by_path[path], conventions)
        cases.extend(result.cases)
        notes.extend(result.notes)
    new = frozenset(new_files)
    if added_lines is not None or new:
        cases = classify_feature_tests(cases, added_lines, new)
    return InventoryResult(cases=cases, notes=notes)


def classify_feature_tests(
    cases: Iterable[TestCase],
    added_lines: Mapping[str, set[int]] | None,
    new_files: Iterable[str],
) -> list[TestCase]:
    """Mark each case feature (added by the change) or pre-existing.

    A case is a feature test when its file is new in the diff, or the diff added its
    definition line (`def`/`it(` line) or the line of any table row it combines. Without
    `added_lines` only new files count as feature.
    """
    new = {normalise_path(p) for p in new_files}
    added = {normalise_path(p): lines for p, lines in (added_lines or {}).items()}
    classified: list[TestCase] = []
    for case in cases:
        lines = added.get(case.path, set())
        feature = (
            case.path in new
            or case.def_line in lines
            or any(line in lines for line in case.row_lines)
        )
        classified.append(case.model_copy(update={"is_feature": feature}))
    return classified


def find_enclosing_test(cases: Iterable[TestCase], path: str, line: int) -> TestCase | None:
    """The innermost test case whose range holds `path:line`; for a parametrised function
    its first row. None when the line is outside every test."""
    normalised = normalise_path(path)
    best: TestCase | None = None
    for case in cases:
        if case.path != normalised or not case.start_line <= line <= case.end_line:
            continue
        if best is None or _inner_first(case) < _inner_first(best):
            best = case
    return best


def _inner_first(case: TestCase) -> tuple[int, int, int]:
    return (case.end_line - case.start_line, -case.start_line, case.row_index or 0)


def rows_of(cases: Iterable[TestCase], case: TestCase) -> list[TestCase]:
    """All rows of the function `case` belongs to, in row order."""
    rows = [c for c in cases if c.function_id == case.function_id]
    return sorted(rows, key=lambda c: c.row_index or 0)


class TestIndex:
    """`find_enclosing_test`/`rows_of` for repeated lookups: cases indexed once by path
    and function."""

    __test__: ClassVar[bool] = False

    def __init__(self, cases: Iterable[TestCase]) -> None:
        self._by_function: dict[str, list[TestCase]] = {}
        for case in cases:
            self._by_function.setdefault(case.function_id, []).append(case)
        self._by_path: dict[str, list[TestCase]] = {}
        for rows in self._by_function.values():
            rows.sort(key=lambda c: c.row_index or 0)
            self._by_path.setdefault(rows[0].path, []).append(rows[0])

    def enclosing(self, path: str, line: int) -> TestCase | None:
        """Same answer as `find_enclosing_test` over the indexed cases."""
        return find_enclosing_test(self._by_path.get(normalise_path(path), ()), path, line)

    def rows(self, case: TestCase) -> list[TestCase]:
        """All rows of the function `case` belongs to."""
        return list(self._by_function.get(case.function_id, ()))


_FRAME_DTYPES: dict[str, str] = {
    "test_id": "str",
    "function_id": "str",
    "path": "str",
    "suite": "object",
    "name": "str",
    "language": "str",
    "start_line": "int64",
    "end_line": "int64",
    "def_line": "int64",
    "row_index": "Int64",
    "row_line": "Int64",
    "row_lines": "object",
    "level": "str",
    "level_reason": "str",
    "asserts": "bool",
    "assert_lines": "object",
    "mock_assert_lines": "object",
    "mock_only": "bool",
    "skipped": "bool",
    "imports": "object",
    "is_feature": "boolean",
}


def inventory_frame(cases: Iterable[TestCase]) -> pd.DataFrame:
    """The `test_case` table: one row per case, one snake_case column per model field
    (list fields stay Python lists), rows in inventory order."""
    rows = [case.model_dump() for case in cases]
    return pd.DataFrame(
        {
            column: pd.Series([row[column] for row in rows], dtype=dtype)
            for column, dtype in _FRAME_DTYPES.items()
        }
    )


@dataclass(frozen=True)
class FailedTest:
    """A test a gate's output reports as failing or erroring at head: its file (when the
    runner names it) and its name path (suite names, then the test's own name)."""

    path: str | None
    names: tuple[str, ...]


# pytest's summary (`FAILED tests/x.py::Class::test_y[row] - msg`, `ERROR ...`), vitest's
# (` FAIL  src/x.test.ts > suite > name`) and jest's failure headings (`● suite › name`).
_PYTEST_FAILED = re.compile(r"^(?:FAILED|ERROR) (?P<path>[^\s:]+)::(?P<names>\S+)")
_VITEST_FAILED = re.compile(r"^\s*FAIL\s+(?P<path>\S+)\s+>\s+(?P<names>.+?)\s*$")
_JEST_FAILED = re.compile(r"^\s*●\s+(?P<names>.+›.+?)\s*$")


def failed_tests(output: str) -> frozenset[FailedTest]:
    """The failing tests a unit/e2e gate's output names (pytest, vitest, jest)."""
    found: set[FailedTest] = set()
    for line in output.splitlines():
        if m := _PYTEST_FAILED.match(line):
            names = tuple(re.sub(r"\[.*\]$", "", n) for n in m["names"].split("::"))
            found.add(FailedTest(m["path"], names))
        elif m := _VITEST_FAILED.match(line):
            found.add(FailedTest(m["path"], tuple(n.strip() for n in m["names"].split(" > "))))
        elif m := _JEST_FAILED.match(line):
            found.add(FailedTest(None, tuple(n.strip() for n in m["names"].split(" › "))))
    return frozenset(found)


def fails_at_head(case: TestCase, failed: frozenset[FailedTest]) -> bool:
    """Whether a gate reported `case` failing: same test name (and suites, when the runner
    gives them) in a file whose path ends with the reported one (runners report paths
    relative to where they ran)."""
    for test in failed:
        if test.names[-1] != case.name:
            continue
        if test.path is not None and not (
            case.path == test.path or case.path.endswith("/" + test.path.lstrip("./"))
        ):
            continue
        suites = test.names[:-1]
        if test.path is None and suites and tuple(case.suite[-len(suites) :]) != suites:
            continue
        return True
    return False
