"""Unified-diff parsing: added new-side lines, new/deleted/renamed/binary files."""

from __future__ import annotations

import textwrap

from evalflow.repo.diff_lines import added_lines_from_unified_diff, parse_unified_diff


def _diff(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


MODIFIED = _diff(
    """
    diff --git a/tests/test_orders.py b/tests/test_orders.py
    index 83db48f..bf269f4 100644
    --- a/tests/test_orders.py
    +++ b/tests/test_orders.py
    @@ -3,0 +4,2 @@ import pytest
    +def test_new():
    +    assert 1
    @@ -10 +12 @@ def test_old():
    -    assert x == 1
    +    assert x == 2
    @@ -20,2 +21,0 @@
    -    removed()
    -    removed_too()
    """
)


def test_modified_file_added_lines_unified_zero() -> None:
    assert added_lines_from_unified_diff(MODIFIED) == {"tests/test_orders.py": {4, 5, 12}}
    parsed = parse_unified_diff(MODIFIED)
    assert parsed.new_files == set() and parsed.deleted_files == set()
    assert parsed.renamed == {}


def test_new_deleted_renamed_and_binary_files() -> None:
    text = _diff(
        """
        diff --git a/tests/test_new.py b/tests/test_new.py
        new file mode 100644
        index 0000000..e69de29
        --- /dev/null
        +++ b/tests/test_new.py
        @@ -0,0 +1,3 @@
        +def test_a():
        +    assert 1
        +
        diff --git a/tests/test_gone.py b/tests/test_gone.py
        deleted file mode 100644
        index e69de29..0000000
        --- a/tests/test_gone.py
        +++ /dev/null
        @@ -1,2 +0,0 @@
        -def test_b():
        -    assert 1
        diff --git a/tests/old_name.py b/tests/test_moved.py
        similarity index 90%
        rename from tests/old_name.py
        rename to tests/test_moved.py
        index 1111111..2222222 100644
        --- a/tests/old_name.py
        +++ b/tests/test_moved.py
        @@ -7 +7,2 @@ def test_c():
        -    assert 1
        +    assert 2
        +    assert 3
        diff --git a/tests/pure_old.py b/tests/test_pure.py
        similarity index 100%
        rename from tests/pure_old.py
        rename to tests/test_pure.py
        diff --git a/fixtures/logo.png b/fixtures/logo.png
        new file mode 100644
        index 0000000..3f2b7c1
        Binary files /dev/null and b/fixtures/logo.png differ
        """
    )
    parsed = parse_unified_diff(text)
    assert parsed.added == {
        "tests/test_new.py": {1, 2, 3},
        "tests/test_moved.py": {7, 8},
        "tests/test_pure.py": set(),
        "fixtures/logo.png": set(),
    }
    assert parsed.new_files == {"tests/test_new.py", "fixtures/logo.png"}
    assert parsed.deleted_files == {"tests/test_gone.py"}
    assert parsed.renamed == {
        "tests/test_moved.py": "tests/old_name.py",
        "tests/test_pure.py": "tests/pure_old.py",
    }
    assert parsed.binary_files == {"fixtures/logo.png"}


def test_no_newline_marker_and_header_lookalike_content() -> None:
    text = _diff(
        """
        diff --git a/src/a.test.ts b/src/a.test.ts
        --- a/src/a.test.ts
        +++ b/src/a.test.ts
        @@ -5 +5,3 @@
        -it("old", () => {})
        \\ No newline at end of file
        +++ counter;
        +--- separator
        +it("new", () => {})
        \\ No newline at end of file
        diff --git a/src/b.test.ts b/src/b.test.ts
        --- a/src/b.test.ts
        +++ b/src/b.test.ts
        @@ -1,0 +2 @@
        +test("b", () => {})
        """
    )
    assert added_lines_from_unified_diff(text) == {
        "src/a.test.ts": {5, 6, 7},
        "src/b.test.ts": {2},
    }


def test_context_lines_and_quoted_paths() -> None:
    text = _diff(
        """
        diff --git "a/tests/t\\303\\251st_caf\\303\\251.py" "b/tests/t\\303\\251st_caf\\303\\251.py"
        --- "a/tests/t\\303\\251st_caf\\303\\251.py"
        +++ "b/tests/t\\303\\251st_caf\\303\\251.py"
        @@ -1,4 +1,5 @@
         import pytest
        -
        +
        +def test_x():
             pass

        """
    )
    assert added_lines_from_unified_diff(text) == {"tests/tést_café.py": {2, 3}}


def test_plain_diff_without_git_headers() -> None:
    text = _diff(
        """
        --- tests/test_a.py\t2024-01-01 00:00:00.000000000 +0000
        +++ tests/test_a.py\t2024-01-02 00:00:00.000000000 +0000
        @@ -1 +1,2 @@
         def test_a():
        +    assert 1
        --- /dev/null\t1970-01-01 00:00:00.000000000 +0000
        +++ tests/test_b.py\t2024-01-02 00:00:00.000000000 +0000
        @@ -0,0 +1 @@
        +def test_b(): assert 1
        """
    )
    parsed = parse_unified_diff(text)
    assert parsed.added == {"tests/test_a.py": {2}, "tests/test_b.py": {1}}
    assert parsed.new_files == {"tests/test_b.py"}


def test_mode_change_and_pure_rename_use_header_paths() -> None:
    text = _diff(
        """
        diff --git a/tests/with space.py b/tests/with space.py
        old mode 100644
        new mode 100755
        diff --git a/x.py b/y.py
        similarity index 100%
        rename from x.py
        rename to y.py
        """
    )
    parsed = parse_unified_diff(text)
    assert parsed.added == {"tests/with space.py": set(), "y.py": set()}
    assert parsed.renamed == {"y.py": "x.py"}


def test_empty_diff() -> None:
    parsed = parse_unified_diff("")
    assert parsed.added == {} and parsed.new_files == set()


def test_whole_file_hunks_are_taken_at_once_and_mixed_ones_line_by_line() -> None:
    new_file = "".join(f"+line {n}\n" for n in range(1, 5001))
    text = (
        _diff(
            """
        diff --git a/big.py b/big.py
        new file mode 100644
        --- /dev/null
        +++ b/big.py
        @@ -0,0 +1,5000 @@
        """
        )
        + new_file
        + _diff(
            """
        diff --git a/a.py b/a.py
        --- a/a.py
        +++ b/a.py
        @@ -2,2 +2,2 @@
        -old
        \\ No newline at end of file
        +new
        +++ b/looks-like-a-header
        @@ -9 +9,2 @@
         context
        +added
        """
        )
    )
    added = added_lines_from_unified_diff(text)
    assert added["big.py"] == set(range(1, 5001))
    # The marker between the sides and a context line leave the fast path: counted by line.
    assert added["a.py"] == {2, 3, 10}
