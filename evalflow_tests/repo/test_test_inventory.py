"""Inventory API: file selection, lookups, feature classification, notes and the frame."""

from __future__ import annotations

import textwrap

import pandas as pd
import pytest

from evalflow.errors import InputError
from evalflow.repo.test_inventory import (
    InventoryResult,
    LevelConventions,
    TestCase,
    TestIndex,
    added_lines_from_unified_diff,
    build_inventory,
    classify_feature_tests,
    find_enclosing_test,
    glob_matches,
    inventory_frame,
    is_test_file,
    parse_test_file,
    rows_of,
    scan_test_file,
)
from evalflow.repo.tests_common import parser_for, query_for

PY_PATH = "tests/test_orders.py"
PY_SRC = textwrap.dedent(
    """\
    import pytest


    @pytest.mark.parametrize(
        "n",
        [
            1,
            2,
        ],
    )
    def test_rows(n):
        assert n


    class TestOrders:
        def test_create(self):
            order = create()
            assert order.id


    def test_plain():
        run()
    """
)
TS_PATH = "web/cart.spec.ts"
TS_SRC = textwrap.dedent(
    """\
    describe("cart", () => {
      it("adds", () => {
        expect(add()).toBe(1);
      });
    });
    """
)


def _cases() -> list[TestCase]:
    return build_inventory([(PY_PATH, PY_SRC), (TS_PATH, TS_SRC)]).cases


def test_is_test_file_defaults() -> None:
    yes = [
        "tests/test_orders.py",
        "pkg/orders_test.py",
        "tests/unit/helpers.py",
        "test_top.py",
        "src/cart.test.ts",
        "src/cart.spec.jsx",
        "src/__tests__/cart.js",
        "src/cart.test.mjs",
        "src/cart.test.cjs",
        "src/Cart.test.tsx",
        "cypress/e2e/login.cy.ts",
        "./tests/test_dot.py",
    ]
    no = [
        "src/orders.py",
        "src/cart.ts",
        "node_modules/pkg/index.test.js",
        ".venv/lib/site-packages/pkg/tests/test_x.py",
        "tests/data.json",
        "README.md",
        "src/tests.py",
    ]
    assert [p for p in yes if not is_test_file(p)] == []
    assert [p for p in no if is_test_file(p)] == []
    custom = LevelConventions(python_test_globs=["check_*.py"])
    assert is_test_file("check_x.py", custom) and not is_test_file("test_x.py", custom)


def test_glob_semantics() -> None:
    assert glob_matches("tests/e2e/test_x.py", "**/e2e/**")
    assert glob_matches("e2e/test_x.py", "**/e2e/**")
    assert glob_matches("a/b/tests/e2e_flows/test_x.py", "**/tests/e2e*")
    assert not glob_matches("tests/unit/test_e2e_helpers.py", "**/tests/e2e*")
    assert glob_matches("src/app.e2e.test.ts", "*.e2e.*")
    assert glob_matches("pkg/tests/t.py", "pkg/*/t.py")
    assert not glob_matches("pkg/a/b/t.py", "pkg/*/t.py")
    assert glob_matches("docs/e2e", "**/e2e/**") is False


def test_find_enclosing_test_and_rows() -> None:
    cases = _cases()
    inside = find_enclosing_test(cases, PY_PATH, 12)
    assert inside is not None and inside.test_id == f"{PY_PATH}::test_rows[0]"
    decorator = find_enclosing_test(cases, f"./{PY_PATH}", 5)
    assert decorator is not None and decorator.function_id == f"{PY_PATH}::test_rows"
    assert [c.test_id for c in rows_of(cases, inside)] == [
        f"{PY_PATH}::test_rows[0]",
        f"{PY_PATH}::test_rows[1]",
    ]
    method = find_enclosing_test(cases, PY_PATH, 18)
    assert method is not None and method.test_id == f"{PY_PATH}::TestOrders::test_create"
    assert find_enclosing_test(cases, PY_PATH, 13) is None
    assert find_enclosing_test(cases, PY_PATH, 15) is None
    assert find_enclosing_test(cases, "tests/other.py", 12) is None
    ts = find_enclosing_test(cases, TS_PATH, 3)
    assert ts is not None and ts.test_id == f"{TS_PATH}::cart::adds"
    assert find_enclosing_test(cases, TS_PATH, 1) is None
    index = TestIndex(cases)
    for path, line in [(PY_PATH, 12), (PY_PATH, 5), (PY_PATH, 18), (PY_PATH, 13), (TS_PATH, 3)]:
        assert index.enclosing(path, line) == find_enclosing_test(cases, path, line)
    assert index.rows(inside) == rows_of(cases, inside)


def test_classify_feature_tests_by_new_file_def_line_and_row_line() -> None:
    cases = _cases()
    diff = textwrap.dedent(
        """\
        diff --git a/tests/test_orders.py b/tests/test_orders.py
        --- a/tests/test_orders.py
        +++ b/tests/test_orders.py
        @@ -7,0 +8 @@
        +        2,
        @@ -19,0 +21,2 @@
        +def test_plain():
        +    run()
        """
    )
    added = added_lines_from_unified_diff(diff)
    feature = {c.test_id: c.is_feature for c in classify_feature_tests(cases, added, {TS_PATH})}
    assert feature == {
        f"{PY_PATH}::test_rows[0]": False,
        f"{PY_PATH}::test_rows[1]": True,
        f"{PY_PATH}::TestOrders::test_create": False,
        f"{PY_PATH}::test_plain": True,
        f"{TS_PATH}::cart::adds": True,
    }
    only_new = classify_feature_tests(cases, None, {PY_PATH})
    assert [c.is_feature for c in only_new] == [True, True, True, True, False]
    assert all(c.is_feature is None for c in cases)


def test_build_inventory_filters_sorts_and_classifies() -> None:
    files = [
        (TS_PATH, TS_SRC),
        ("src/orders.py", "def test_not_in_a_test_file():\n    assert 1\n"),
        (PY_PATH, PY_SRC),
    ]
    result = build_inventory(files, added_lines={PY_PATH: {21}}, new_files=frozenset())
    assert isinstance(result, InventoryResult)
    assert [c.path for c in result.cases] == [PY_PATH] * 4 + [TS_PATH]
    assert [c.test_id for c in result.cases if c.is_feature] == [f"{PY_PATH}::test_plain"]
    unclassified = build_inventory(files)
    assert all(c.is_feature is None for c in unclassified.cases)
    assert build_inventory(list(reversed(files))).cases == unclassified.cases
    with pytest.raises(InputError, match="passed twice"):
        build_inventory([(PY_PATH, PY_SRC), (f"./{PY_PATH}", PY_SRC)])


def test_nul_bytes_skip_the_file_with_a_note() -> None:
    result = build_inventory(
        [("tests/test_bin.py", "def test_x():\x00\n    assert 1\n"), (PY_PATH, PY_SRC)]
    )
    assert {c.path for c in result.cases} == {PY_PATH}
    assert [(n.path, n.kind, n.line) for n in result.notes] == [
        ("tests/test_bin.py", "binary", None)
    ]


def test_syntax_error_keeps_parsable_tests_and_notes_first_error_line() -> None:
    py = "def test_ok():\n    assert 1\n\n\ndef test_broken(:\n    assert 2\n"
    result = scan_test_file("tests/test_broken.py", py)
    assert "test_ok" in [c.name for c in result.cases]
    assert [(n.kind, n.line) for n in result.notes] == [("syntax_error", 5)]
    assert result.notes[0].path == "tests/test_broken.py"
    ts = "it('ok', () => { expect(1).toBe(1); });\n\nit('bad', () => { expect(1).toBe( ; });\n"
    result = scan_test_file("src/x.test.ts", ts)
    assert result.cases[0].name == "ok" and result.cases[0].asserts
    assert [(n.kind, n.line) for n in result.notes] == [("syntax_error", 3)]


def test_unsupported_extension_note_and_empty_inputs() -> None:
    result = scan_test_file("tests/test_x.rb", "def test_x; end")
    assert result.cases == [] and result.notes[0].kind == "unsupported"
    assert parse_test_file("tests/test_empty.py", "") == []
    assert build_inventory([]).cases == []


def test_inventory_frame_matches_model_fields() -> None:
    result = build_inventory([(PY_PATH, PY_SRC), (TS_PATH, TS_SRC)], new_files={TS_PATH})
    frame = inventory_frame(result.cases)
    assert list(frame.columns) == list(TestCase.model_fields)
    assert len(frame) == len(result.cases)
    assert frame["row_index"].dtype == "Int64"
    assert frame["is_feature"].dtype == "boolean"
    assert frame["asserts"].dtype == bool
    assert frame.loc[0, "assert_lines"] == result.cases[0].assert_lines
    empty = inventory_frame([])
    assert list(empty.columns) == list(TestCase.model_fields) and len(empty) == 0
    assert empty["start_line"].dtype == "int64"
    again = inventory_frame(
        build_inventory([(TS_PATH, TS_SRC), (PY_PATH, PY_SRC)], new_files={TS_PATH}).cases
    )
    pd.testing.assert_frame_equal(frame, again)


def test_parsers_and_queries_are_cached() -> None:
    assert parser_for("python") is parser_for("python")
    assert parser_for("tsx") is not parser_for("typescript")
    assert query_for("python", "(assert_statement) @a") is query_for(
        "python", "(assert_statement) @a"
    )


def test_row_cap_adds_a_note() -> None:
    src = textwrap.dedent(
        """\
        import pytest


        @pytest.mark.parametrize("a", [1, 2, 3])
        @pytest.mark.parametrize("b", [1, 2, 3])
        def test_grid(a, b):
            assert a
        """
    )
    result = scan_test_file(PY_PATH, src, LevelConventions(max_rows_per_test=4))
    assert len(result.cases) == 4
    assert [n.kind for n in result.notes] == ["rows_truncated"]


def test_failed_tests_are_read_from_pytest_vitest_and_jest_output() -> None:
    from evalflow.repo.test_inventory import FailedTest, failed_tests

    output = "\n".join(
        [
            "FAILED tests/e2e/test_api.py::test_redirect - assert 302 == 301",
            "ERROR tests/unit/test_x.py::TestBox::test_rows[a-1] - ImportError",
            " FAIL  src/links.test.ts > links > redirects with 301",
            "  ● links › counts a click",
            "1 failed, 3 passed in 0.2s",
        ]
    )
    assert failed_tests(output) == {
        FailedTest("tests/e2e/test_api.py", ("test_redirect",)),
        FailedTest("tests/unit/test_x.py", ("TestBox", "test_rows")),
        FailedTest("src/links.test.ts", ("links", "redirects with 301")),
        FailedTest(None, ("links", "counts a click")),
    }
