"""The whole-file pre-search of the heuristic judge never hides a line's match (issue 33)."""

from __future__ import annotations

import pytest

from evalflow.domain.patterns import MAX_PATTERN_CHARS, compile_untrusted
from evalflow.judges.heuristic import _whole_text

TEXT = "def add(x):\n    return x + 1\n\nclass Todo:\n  title = 'Buy'\r\nend_marker\n"

PATTERNS = [
    r"^class\s+Todo",
    r"return x \+ 1$",
    r"^\s*title",
    r"\bTodo\b",
    r"\Bodo",
    r"(?i)BUY",
    r"'$",
    r"^end_marker$",
    r"^$",
    r"x\s+\+",
    r"[^a]dd",
    r"\Aclass",
    r"(?-m)^class",
    r"(?i-m)^\s*title",
    r"nothing here",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_file_the_whole_search_rejects_has_no_matching_line(pattern: str) -> None:
    per_line = compile_untrusted(pattern)
    in_a_line = any(per_line.search(line) for line in TEXT.split("\n"))
    whole = _whole_text(pattern)
    if whole is None:  # searched line by line only
        assert pattern.startswith(r"\A") or "-m)" in pattern
        return
    assert (whole.search(TEXT) is not None) or not in_a_line


def test_the_patterns_that_mean_otherwise_in_a_whole_text_are_searched_by_line() -> None:
    assert _whole_text(r"\Aclass") is None
    assert _whole_text(r"foo\z") is None
    assert _whole_text(r"(?-m)^x") is None
    assert _whole_text(r"^x") is not None
    # A pattern at the length limit cannot take the flag: it is searched line by line.
    assert _whole_text("x" * MAX_PATTERN_CHARS) is None
