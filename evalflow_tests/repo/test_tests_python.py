"""Python test discovery, parametrize rows, assertions, mocks, skips and levels."""

from __future__ import annotations

import textwrap

import pytest

from evalflow.errors import InputError
from evalflow.repo.test_inventory import (
    LevelConventions,
    TestCase,
    parse_test_file,
    scan_test_file,
)

PATH = "tests/test_sample.py"


def _src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _line(src: str, needle: str, occurrence: int = 1) -> int:
    hits = [i + 1 for i, line in enumerate(src.splitlines()) if needle in line]
    return hits[occurrence - 1]


def _by_id(cases: list[TestCase]) -> dict[str, TestCase]:
    return {c.test_id: c for c in cases}


def test_plain_functions_with_ranges_and_async() -> None:
    src = _src(
        """
        import pytest


        def helper():
            return 1


        def test_plain():
            value = helper()
            assert value == 1


        async def test_async_thing():
            result = await thing()
            assert result


        @pytest.fixture
        def test_client():
            return object()
        """
    )
    cases = _by_id(parse_test_file(PATH, src))
    assert set(cases) == {f"{PATH}::test_plain", f"{PATH}::test_async_thing"}
    plain = cases[f"{PATH}::test_plain"]
    assert (plain.start_line, plain.end_line) == (_line(src, "def test_plain"), _line(src, "== 1"))
    assert plain.def_line == plain.start_line
    assert plain.assert_lines == [_line(src, "value == 1")]
    assert plain.language == "python"
    assert plain.row_index is None and plain.row_line is None and plain.row_lines == []
    assert plain.suite == [] and plain.name == "test_plain"
    assert plain.imports == ["pytest"]
    assert cases[f"{PATH}::test_async_thing"].asserts


def test_class_methods_nested_and_uncollected_classes() -> None:
    src = _src(
        """
        class TestOuter:
            def test_a(self):
                assert True

            def helper(self):
                return 2

            class TestInner:
                def test_b(self):
                    assert 1

            class Inner:
                def test_hidden(self):
                    assert 1


        class Helper:
            def test_not_collected(self):
                assert 1


        class TestWithInit:
            def __init__(self):
                self.x = 1

            def test_never(self):
                assert self.x
        """
    )
    result = scan_test_file(PATH, src)
    ids = [c.test_id for c in result.cases]
    assert ids == [f"{PATH}::TestOuter::test_a", f"{PATH}::TestOuter::TestInner::test_b"]
    assert result.cases[1].suite == ["TestOuter", "TestInner"]
    assert [n.kind for n in result.notes] == ["uncollected_class"]
    assert result.notes[0].line == _line(src, "class TestWithInit")


def test_unittest_subclasses_including_local_bases() -> None:
    src = _src(
        """
        import unittest


        class Base(unittest.TestCase):
            def check(self, value):
                self.assertEqual(value, 3)


        class WidgetChecks(Base):
            def test_size(self):
                self.check(3)

            def test_fails_explicitly(self):
                self.fail("boom")

            def test_raises(self):
                with self.assertRaises(ValueError):
                    int("x")

            def helper_test(self):
                pass
        """
    )
    cases = _by_id(parse_test_file(PATH, src))
    assert set(cases) == {
        f"{PATH}::WidgetChecks::test_size",
        f"{PATH}::WidgetChecks::test_fails_explicitly",
        f"{PATH}::WidgetChecks::test_raises",
    }
    size = cases[f"{PATH}::WidgetChecks::test_size"]
    assert size.assert_lines == [_line(src, "self.check(3)")]
    assert cases[f"{PATH}::WidgetChecks::test_fails_explicitly"].asserts
    raises = cases[f"{PATH}::WidgetChecks::test_raises"]
    # The whole `with` block is asserted to raise.
    assert raises.assert_lines == [_line(src, "assertRaises"), _line(src, 'int("x")')]


def test_parametrize_rows_each_count_with_row_lines() -> None:
    src = _src(
        """
        import pytest


        @pytest.mark.parametrize(
            ("a", "expected"),
            [
                (1, 2),
                (2, 3),
                (5, 6),
            ],
        )
        def test_inc(a, expected):
            assert a + 1 == expected
        """
    )
    cases = parse_test_file(PATH, src)
    assert [c.test_id for c in cases] == [f"{PATH}::test_inc[{i}]" for i in range(3)]
    assert [c.row_line for c in cases] == [
        _line(src, "(1, 2)"),
        _line(src, "(2, 3)"),
        _line(src, "(5, 6)"),
    ]
    assert all(c.function_id == f"{PATH}::test_inc" for c in cases)
    assert all(c.start_line == _line(src, "@pytest.mark.parametrize") for c in cases)
    assert all(c.def_line == _line(src, "def test_inc") for c in cases)


def test_stacked_parametrize_is_a_cartesian_product_in_pytest_order() -> None:
    src = _src(
        """
        import pytest


        @pytest.mark.parametrize("x", [0, 1])
        @pytest.mark.parametrize(
            "y",
            [
                20,
                30,
                40,
            ],
        )
        def test_grid(x, y):
            assert x < y
        """
    )
    cases = parse_test_file(PATH, src)
    assert len(cases) == 6
    x_line = _line(src, '"x", [0, 1]')
    y_lines = [_line(src, "20,"), _line(src, "30,"), _line(src, "40,")]
    # pytest runs x=0/y=20, x=1/y=20, x=0/y=30, ...: the decorator nearest `def` varies slowest.
    assert [c.row_lines for c in cases] == [
        [y_lines[0], x_line],
        [y_lines[0], x_line],
        [y_lines[1], x_line],
        [y_lines[1], x_line],
        [y_lines[2], x_line],
        [y_lines[2], x_line],
    ]
    assert [c.row_index for c in cases] == list(range(6))


def test_pytest_param_marks_skip_and_level_per_row() -> None:
    src = _src(
        """
        import pytest


        @pytest.mark.parametrize(
            "n",
            [
                1,
                pytest.param(2, marks=pytest.mark.skip(reason="slow")),
                pytest.param(3, marks=[pytest.mark.e2e], id="three"),
                pytest.param(4, id="four"),
            ],
        )
        def test_rows(n):
            assert n
        """
    )
    cases = parse_test_file(PATH, src)
    assert [c.skipped for c in cases] == [False, True, False, False]
    assert [c.level for c in cases] == ["unit", "unit", "e2e", "unit"]
    assert cases[2].level_reason == "marker:e2e"


def test_parametrize_tables_by_name_unresolved_and_empty() -> None:
    src = _src(
        """
        import pytest

        CASES = [
            ("a", 1),
            ("b", 2),
        ]
        MORE = [*CASES, ("c", 3)]


        @pytest.mark.parametrize("name,value", CASES)
        def test_named(name, value):
            assert value


        @pytest.mark.parametrize("name,value", MORE)
        def test_splat(name, value):
            assert value


        @pytest.mark.parametrize("n", [i for i in range(4)])
        def test_computed(n):
            assert n >= 0


        @pytest.mark.parametrize("n", [])
        def test_empty(n):
            assert n
        """
    )
    result = scan_test_file(PATH, src)
    by_function: dict[str, list[TestCase]] = {}
    for case in result.cases:
        by_function.setdefault(case.name, []).append(case)
    assert [c.row_line for c in by_function["test_named"]] == [
        _line(src, '("a", 1)'),
        _line(src, '("b", 2)'),
    ]
    assert len(by_function["test_splat"]) == 3
    computed = by_function["test_computed"]
    assert len(computed) == 1 and computed[0].row_index == 0
    assert [n.kind for n in result.notes] == ["unresolved_rows"]
    assert result.notes[0].line == _line(src, "[i for i in range(4)]")
    empty = by_function["test_empty"]
    assert len(empty) == 1 and empty[0].skipped


def test_class_level_parametrize_multiplies_methods() -> None:
    src = _src(
        """
        import pytest


        @pytest.mark.parametrize("backend", ["memory", "disk"])
        class TestStore:
            @pytest.mark.parametrize("key", ["a", "b", "c"])
            def test_put(self, backend, key):
                assert key
        """
    )
    cases = parse_test_file(PATH, src)
    assert len(cases) == 6
    assert cases[0].test_id == f"{PATH}::TestStore::test_put[0]"


def test_executed_only_test_does_not_assert() -> None:
    src = _src(
        """
        def test_runs_only():
            service = make_service()
            service.process(order_id=3)
            print(service.state)
        """
    )
    (case,) = parse_test_file(PATH, src)
    assert not case.asserts
    assert case.assert_lines == []
    assert not case.mock_only


def test_mock_only_and_mixed_assertions() -> None:
    src = _src(
        """
        from unittest import mock


        def test_mock_only():
            repo = mock.Mock()
            handle(repo)
            repo.save.assert_called_once_with(3)
            assert repo.delete.called
            assert repo.load.call_count == 2


        def test_mixed():
            repo = mock.Mock()
            result = handle(repo)
            repo.save.assert_called_once()
            assert result.status == "done"


        def test_unittest_style_mock(self_like):
            self_like.assertTrue(repo.save.called)


        def test_awaited():
            client.send.assert_awaited_once_with("x")
            client.close.assert_not_called()
        """
    )
    cases = {c.name: c for c in parse_test_file(PATH, src)}
    only = cases["test_mock_only"]
    assert only.mock_only and only.asserts
    assert (
        only.mock_assert_lines
        == only.assert_lines
        == [
            _line(src, "assert_called_once_with(3)"),
            _line(src, "delete.called"),
            _line(src, "call_count == 2"),
        ]
    )
    mixed = cases["test_mixed"]
    assert not mixed.mock_only
    assert mixed.mock_assert_lines == [_line(src, "save.assert_called_once()")]
    assert mixed.assert_lines == [_line(src, "assert_called_once()"), _line(src, '"done"')]
    assert cases["test_unittest_style_mock"].mock_only
    assert cases["test_awaited"].mock_only


def test_pytest_raises_warns_and_fail_count_as_assertions() -> None:
    src = _src(
        """
        import pytest
        from pytest import raises


        def test_with_raises():
            with pytest.raises(ValueError, match="bad"):
                parse("x")


        def test_raises_call_form():
            pytest.raises(KeyError, lookup, "missing")


        def test_bare_raises_and_warns():
            with raises(TypeError):
                call()
            with pytest.warns(UserWarning):
                warn()


        def test_fail():
            if broken():
                pytest.fail("broken")


        def test_not_an_assertion():
            job.fail()
            other.raises()
        """
    )
    cases = {c.name: c for c in parse_test_file(PATH, src)}
    assert cases["test_with_raises"].assert_lines == [
        _line(src, "pytest.raises(ValueError"),
        _line(src, 'parse("x")'),
    ]
    assert cases["test_raises_call_form"].assert_lines == [_line(src, "pytest.raises(KeyError")]
    assert len(cases["test_bare_raises_and_warns"].assert_lines) == 4
    assert cases["test_fail"].asserts
    assert not cases["test_not_an_assertion"].asserts
    assert not any(c.mock_only for c in cases.values())


def test_assertion_helpers_by_name_and_local_helpers() -> None:
    src = _src(
        """
        from pandas.testing import assert_frame_equal
        from unittest import mock


        def _check_ok(response):
            assert response.status_code == 200


        def _check_twice(response):
            _check_ok(response)


        def _check_saved(repo):
            repo.save.assert_called_once()


        def _build():
            return 1


        def test_frame():
            assert_frame_equal(left(), right())


        def test_via_helper_chain():
            response = call()
            _check_twice(response)


        def test_via_mock_helper():
            _check_saved(repo)


        def test_non_asserting_helper():
            _build()


        class TestMethods:
            def _expect_empty(self, value):
                assert not value

            def test_uses_method_helper(self):
                self._expect_empty([])
        """
    )
    cases = {c.name: c for c in parse_test_file(PATH, src)}
    assert cases["test_frame"].asserts and not cases["test_frame"].mock_only
    chain = cases["test_via_helper_chain"]
    assert chain.assert_lines == [_line(src, "_check_twice(response)", 2)]
    assert not chain.mock_only
    assert cases["test_via_mock_helper"].mock_only
    assert not cases["test_non_asserting_helper"].asserts
    assert cases["test_uses_method_helper"].asserts


def test_skip_markers() -> None:
    src = _src(
        """
        import sys
        import unittest

        import pytest


        @pytest.mark.skip(reason="later")
        def test_skip():
            assert 1


        @pytest.mark.skip
        def test_skip_bare():
            assert 1


        @pytest.mark.skipif(True, reason="always")
        def test_skipif_true():
            assert 1


        @pytest.mark.skipif(sys.platform == "win32", reason="posix")
        def test_skipif_conditional():
            assert 1


        def test_skip_in_body():
            \"\"\"Docstring first.\"\"\"
            pytest.skip("not ready")
            assert 1


        @pytest.mark.xfail
        def test_xfail_runs():
            assert 0


        @pytest.mark.skip
        class TestSkippedClass:
            def test_inner(self):
                assert 1


        class Legacy(unittest.TestCase):
            @unittest.skip("old")
            def test_old(self):
                self.assertTrue(True)
        """
    )
    skipped = {c.name: c.skipped for c in parse_test_file(PATH, src)}
    assert skipped == {
        "test_skip": True,
        "test_skip_bare": True,
        "test_skipif_true": True,
        "test_skipif_conditional": False,
        "test_skip_in_body": True,
        "test_xfail_runs": False,
        "test_inner": True,
        "test_old": True,
    }


def test_module_pytestmark_skips_everything() -> None:
    src = _src(
        """
        import pytest

        pytestmark = [pytest.mark.skip(reason="flaky"), pytest.mark.slow]


        def test_one():
            assert 1
        """
    )
    (case,) = parse_test_file(PATH, src)
    assert case.skipped


def test_level_by_marker_class_module_and_unit_override() -> None:
    src = _src(
        """
        import pytest


        @pytest.mark.integration
        def test_marked():
            assert 1


        @pytest.mark.e2e
        class TestFlows:
            def test_flow(self):
                assert 1


        def test_plain():
            assert 1
        """
    )
    cases = {c.name: c for c in parse_test_file(PATH, src)}
    assert (cases["test_marked"].level, cases["test_marked"].level_reason) == (
        "e2e",
        "marker:integration",
    )
    assert cases["test_flow"].level == "e2e"
    assert (cases["test_plain"].level, cases["test_plain"].level_reason) == ("unit", "default")

    module_marked = _src(
        """
        import pytest

        pytestmark = pytest.mark.e2e


        def test_any():
            assert 1


        @pytest.mark.unit
        def test_unit_in_e2e_dir():
            assert 1
        """
    )
    levels = {c.name: c.level for c in parse_test_file("tests/e2e/test_m.py", module_marked)}
    # The module's e2e mark applies to both; an e2e marker beats a unit marker.
    assert levels == {"test_any": "e2e", "test_unit_in_e2e_dir": "e2e"}
    unit_only = _src(
        """
        import pytest


        @pytest.mark.unit
        def test_unit_in_e2e_dir():
            assert 1
        """
    )
    (case,) = parse_test_file("tests/e2e/test_m.py", unit_only)
    assert (case.level, case.level_reason) == ("unit", "marker:unit")


def test_level_by_path_and_import() -> None:
    plain = "def test_x():\n    assert 1\n"
    assert parse_test_file("tests/e2e/test_orders.py", plain)[0].level == "e2e"
    assert parse_test_file("tests/integration/db/test_repo.py", plain)[0].level == "e2e"
    assert parse_test_file("tests/e2e_checkout/test_pay.py", plain)[0].level == "e2e"
    assert parse_test_file("pkg/orders.e2e.py", plain)[0].level == "e2e"
    assert parse_test_file("tests/unit/test_orders.py", plain)[0].level == "unit"
    by_import = {
        "from fastapi.testclient import TestClient\n": "import:fastapi.testclient",
        "import httpx\n": "import:httpx",
        "from starlette import testclient\n": "import:starlette.testclient",
        "import psycopg.rows as rows\n": "import:psycopg.rows",
    }
    for header, reason in by_import.items():
        (case,) = parse_test_file("tests/test_api.py", header + plain)
        assert (case.level, case.level_reason) == ("e2e", reason)
    (case,) = parse_test_file("tests/test_api.py", "import httpx_mock_helpers\n" + plain)
    assert case.level == "unit"
    # An in-memory database is a unit test's tool, not a sign of an e2e test.
    (case,) = parse_test_file("tests/test_repo.py", "import sqlite3\n" + plain)
    assert case.level == "unit"
    custom = LevelConventions(e2e_imports=["myapp.testing"], e2e_path_globs=[])
    (case,) = parse_test_file("tests/e2e/test_x.py", "import myapp.testing\n" + plain, custom)
    assert case.level_reason == "import:myapp.testing"


def test_imports_are_module_level_only() -> None:
    src = _src(
        """
        import os, sys as system
        from . import conftest
        from ..helpers import build
        try:
            import ujson as json
        except ImportError:
            import json


        def test_x():
            import requests
            assert os and system and build and json
        """
    )
    (case,) = parse_test_file(PATH, src)
    assert case.imports == ["os", "sys", ".", "..helpers", "ujson", "json"]
    assert case.level == "unit"


def test_redefined_test_keeps_last_definition_with_note() -> None:
    src = _src(
        """
        def test_dup():
            assert 1


        def test_dup():
            pass
        """
    )
    result = scan_test_file(PATH, src)
    (case,) = result.cases
    assert case.def_line == _line(src, "def test_dup", 2)
    assert not case.asserts
    assert [(n.kind, n.line) for n in result.notes] == [("shadowed_test", 1)]


def test_multi_line_assertions_cover_all_their_lines() -> None:
    src = _src(
        """
        def _check(payload):
            assert payload


        def test_payload():
            payload = build()
            assert payload == {
                "user_id": 1,
                "trial_ends_at": "2025-01-01",
            }
            self_check = _check(
                payload,
            )
            print("not asserted")
        """
    )
    (case,) = parse_test_file(PATH, src)
    start = _line(src, "assert payload == {")
    call = _line(src, "self_check = _check(")
    assert case.assert_lines == [start, start + 1, start + 2, start + 3, call, call + 1, call + 2]
    assert _line(src, '"trial_ends_at"') in case.assert_lines
    assert _line(src, "not asserted") not in case.assert_lines


def test_assert_word_in_helper_names_and_configured_helpers() -> None:
    src = _src(
        """
        from numpy.testing import assert_allclose
        from helpers import check_plot_works, xp_assert_close


        def test_xp():
            xp_assert_close(a(), b())


        def test_np():
            assert_allclose(a(), b())


        def test_not_assert_word():
            assertion_count(3)


        def test_project_helper():
            check_plot_works(plot)
        """
    )
    default = {c.name: c.asserts for c in parse_test_file(PATH, src)}
    assert default == {
        "test_xp": True,
        "test_np": True,
        "test_not_assert_word": False,
        "test_project_helper": False,
    }
    configured = LevelConventions(assertion_helpers=["_?check_.*"])
    assert {c.name: c.asserts for c in parse_test_file(PATH, src, configured)} == {
        **default,
        "test_project_helper": True,
    }


def test_invalid_assertion_helper_pattern_is_an_input_error() -> None:
    with pytest.raises(InputError, match="assertion_helpers"):
        parse_test_file(
            PATH, "def test_x():\n    pass\n", LevelConventions(assertion_helpers=["("])
        )
