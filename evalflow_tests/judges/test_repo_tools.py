"""The read-only repository tools: scope, ordering, refusals, bounds and recorded searches."""

from __future__ import annotations

import time

import pytest

from evalflow.judges.repo_tools import (
    TOOL_DEFINITIONS,
    TOOL_NAMES,
    RepoTools,
    ToolLimits,
    blob_sha,
)
from evalflow.repo.snapshot import RepoSnapshot, SourceFile


def snapshot() -> RepoSnapshot:
    files = {
        "app/core.py": "def greet(name):\n    return f'Hello, {name}'\n",
        "lib/old.py": "def greet_old():\n    pass\n",
        "tests/test_core.py": "def test_greet():\n    assert greet('a')\n",
        "empty.txt": "",
    }
    return RepoSnapshot(
        commit="c0",
        files={p: SourceFile(p, t) for p, t in files.items()},
        notes=("assets/logo.png: skipped, binary file", "vendor/link: skipped, symbolic link"),
    )


def tools(**limits: int) -> RepoTools:
    return RepoTools(snapshot(), ("tests/test_core.py", "app/core.py"), ToolLimits(**limits))


def test_tool_definitions_cover_the_three_tools() -> None:
    assert {"list_files", "grep", "read_file"} == TOOL_NAMES
    for tool in TOOL_DEFINITIONS:
        assert tool["input_schema"]["additionalProperties"] is False


def test_list_files_marks_diff_files_and_lists_them_first() -> None:
    t = tools()
    out = t.list_files("**/*.py")
    assert out.text.splitlines() == [
        "tests/test_core.py [diff]",
        "app/core.py [diff]",
        "lib/old.py",
    ]
    assert t.searches[-1].hits == 3 and t.searches[-1].pattern == "**/*.py"


def test_grep_searches_the_diff_surface_first_with_path_line_text() -> None:
    t = tools()
    out = t.grep(r"greet", "**")
    assert out.text.splitlines() == [
        "tests/test_core.py:1: def test_greet():",
        "tests/test_core.py:2:     assert greet('a')",
        "app/core.py:1: def greet(name):",
        "lib/old.py:1: def greet_old():",
    ]
    assert not out.is_error and out.search is not None and out.search.hits == 4
    assert "diff surface then repository" in out.search.scope


def test_grep_path_glob_and_no_match() -> None:
    t = tools()
    assert t.grep("greet", "lib/**").text == "lib/old.py:1: def greet_old():"
    none = t.grep("absent_symbol", "**")
    assert "no line matches" in none.text and not none.is_error
    assert t.searches[-1].hits == 0


def test_grep_invalid_regex_is_a_tool_error_not_a_search() -> None:
    t = tools()
    out = t.grep("(unclosed", "**")
    assert out.is_error and "invalid regular expression" in out.text
    assert t.searches == []


def test_grep_output_is_bounded_with_a_truncation_note() -> None:
    out = tools(max_matches=2).grep("e", "**")
    lines = out.text.splitlines()
    assert len(lines) == 3 and lines[-1].startswith("[truncated: ")
    assert out.search is not None and out.search.hits > 2


def test_read_file_numbers_lines_and_bounds_the_range() -> None:
    t = tools()
    out = t.read_file("app/core.py", 1, 2)
    assert out.text.splitlines() == [
        "app/core.py lines 1-2 of 2",
        "1: def greet(name):",
        "2:     return f'Hello, {name}'",
    ]
    assert t.searches[-1].pattern == "read app/core.py:1-2" and t.searches[-1].hits == 2
    clipped = t.read_file("app/core.py", 2, 99)
    assert clipped.text.splitlines()[-1] == "2:     return f'Hello, {name}'"
    assert t.read_file("app/core.py", 5, 9).is_error
    assert "0 lines" in t.read_file("empty.txt", 1, 1).text


def test_read_file_truncates_long_ranges_with_a_continue_hint() -> None:
    snap = RepoSnapshot(
        commit="c0", files={"big.py": SourceFile("big.py", "x = 1\n" * 50)}, notes=()
    )
    out = RepoTools(snap, (), ToolLimits(max_lines=10)).read_file("big.py", 1, 50)
    assert out.text.splitlines()[-1] == (
        "[truncated at line 10; call read_file with start=11 to go on]"
    )


@pytest.mark.parametrize(
    "path", ["../etc/passwd", "/etc/passwd", "app/../../secret", "C:\\x.py", "~/.ssh/id_rsa"]
)
def test_path_traversal_is_refused(path: str) -> None:
    t = tools()
    for result in (t.read_file(path, 1, 2), t.list_files(path), t.grep("x", path)):
        assert result.is_error and "refused" in result.text
    assert t.searches == []


def test_unknown_and_skipped_files_are_refused_with_the_reason() -> None:
    t = tools()
    unknown = t.read_file("app/ghost.py", 1, 1)
    assert unknown.is_error and "no such text file" in unknown.text
    binary = t.read_file("assets/logo.png", 1, 1)
    assert binary.is_error and "binary file" in binary.text
    link = t.read_file("vendor/link", 1, 1)
    assert link.is_error and "symbolic link" in link.text


def test_call_dispatches_and_validates_arguments() -> None:
    t = tools()
    assert t.call("read_file", {"path": "app/core.py", "start": 1, "end": 1}).text.endswith(
        "1: def greet(name):"
    )
    assert t.call("read_file", {"path": "app/core.py"}).search is not None
    assert t.call("grep", {"pattern": 3}).is_error
    assert t.call("read_file", {"path": "app/core.py", "start": "1"}).is_error
    assert t.call("rm", {}).is_error
    assert t.call("grep", "not an object").is_error
    assert t.call("list_files", {}).search is not None


def test_a_grep_program_above_the_re2_bound_is_refused_at_once(monkeypatch) -> None:
    """`((.*a){30}){30}` compiles to ~10,000 RE2 instructions: 39 s per 100 KB line, beyond
    any per-call time check between lines. Refused before it runs, naming the bound."""
    long_line = RepoSnapshot(commit="c0", files={"a.txt": SourceFile("a.txt", "ab" * 50_000)})
    tool = RepoTools(long_line, ("a.txt",))
    started = time.monotonic()
    out = tool.grep("((.*a){30}){30}", "**")
    assert time.monotonic() - started < 1.0
    assert (
        out.is_error and "RE2 instructions" in out.text and "EVALFLOW_TOOL_RE2_PROGRAM" in out.text
    )
    assert tool.searches == []
    monkeypatch.setenv("EVALFLOW_TOOL_RE2_PROGRAM", "20")  # lowered: a modest program too
    assert tool.grep("(.*a){6}", "**").is_error
    monkeypatch.delenv("EVALFLOW_TOOL_RE2_PROGRAM")
    assert tool.grep("(.*a){6}", "**").text.startswith("a.txt:1: abab")


def test_read_file_records_the_git_blob_id_of_each_file_read() -> None:
    import subprocess

    text = "def greet(name):\n    return f'Hello, {name}'\n"
    tools = RepoTools(RepoSnapshot("c", {"a.py": SourceFile("a.py", text)}), ())
    tools.grep("greet", "**")
    assert tools.read == {}  # a search is not a read
    tools.read_file("a.py", 1, 1)
    git = subprocess.run(
        ["git", "hash-object", "--stdin"],
        input=text.encode(),
        capture_output=True,
        check=True,
        timeout=60,
    )
    assert tools.read == {"a.py": git.stdout.decode().strip()} == {"a.py": blob_sha(text)}
