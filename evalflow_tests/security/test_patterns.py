"""Patterns from input run in linear time: baseline probes, the judge's grep, the engine itself.

`(a+)+$` is the classic catastrophic-backtracking pattern: Python's `re` needs about 2^n steps
on `'a' * n + 'b'` (a 35-character line never finishes), RE2 a single linear pass.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from evalflow.cli import main
from evalflow.domain.baseline import error_location
from evalflow.domain.models import Probe
from evalflow.domain.patterns import MAX_PATTERN_CHARS, UntrustedPatternError, compile_untrusted
from evalflow.judges.repo_tools import RepoTools
from evalflow.repo.snapshot import RepoSnapshot, SourceFile

EVIL = "(a+)+$"
# Far past the length at which backtracking would take longer than the universe's age.
LONG_LINE = "a" * 100_000 + "b"


def test_catastrophic_pattern_runs_in_linear_time() -> None:
    regex = compile_untrusted(EVIL)
    started = time.perf_counter()
    assert regex.search(LONG_LINE) is None
    assert regex.search("a" * 100_000) is not None
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [(r"(a)\1", r"\1"), ("(?=x)y", "(?="), ("(?<!x)y", "(?<"), ("(unclosed", "missing )")],
)
def test_syntax_re2_cannot_run_is_refused_with_the_reason(pattern: str, reason: str) -> None:
    with pytest.raises(UntrustedPatternError) as refused:
        compile_untrusted(pattern)
    message = str(refused.value)
    assert repr(pattern) in message and reason in message and "RE2" in message


def test_oversized_pattern_is_refused() -> None:
    with pytest.raises(UntrustedPatternError, match="characters long"):
        compile_untrusted("a" * (MAX_PATTERN_CHARS + 1))


def test_ignore_case_and_python_style_syntax() -> None:
    assert compile_untrusted(r"(?P<word>\bgreet\b)", ignore_case=True).search("GREET(x)")
    assert compile_untrusted(r"\bgreet\b").search("GREET(x)") is None


def test_probe_refuses_a_pattern_re2_cannot_run() -> None:
    with pytest.raises(ValidationError, match="linear-time regex engine"):
        Probe(kind="impl", pattern=r"def (\w+).*\1")
    assert Probe(kind="impl", pattern=EVIL).pattern == EVIL  # RE2 runs it in linear time


def test_error_location_names_checks_by_id_and_probes_by_position() -> None:
    data = {"acs": [{"id": "S1-AC1", "checks": [{"id": "S1-AC1-I1", "probes": [{}, {}]}]}]}
    loc = ("acs", 0, "checks", 0, "probes", 1, "pattern")
    assert error_location(data, loc) == "acs[S1-AC1].checks[S1-AC1-I1].probes[2].pattern"
    assert error_location({"x": 1}, ("y", 3)) == "y.3"
    assert error_location({}, ()) == "(top level)"


def _baseline_check(capsys, baseline: Path) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        main(["baseline", "check", str(baseline)])
    _, err = capsys.readouterr()
    return int(done.value.code or 0), err


def test_baseline_check_names_the_check_and_probe_re2_refuses(mini: Path, capsys) -> None:
    baseline = mini / "_ac-baseline.yaml"
    text = baseline.read_text()
    assert "pattern: 'def bye\\('" in text
    baseline.write_text(text.replace("pattern: 'def bye\\('", "pattern: '(?<=def )bye'"))
    code, err = _baseline_check(capsys, baseline)
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "checks[S2-AC1-I1].probes[1].pattern" in err and "(?<=def )bye" in err
    assert "Traceback" not in err


def test_baseline_check_accepts_a_backtracking_pattern_re2_runs(mini: Path, capsys) -> None:
    baseline = mini / "_ac-baseline.yaml"
    text = baseline.read_text().replace("pattern: 'def bye\\('", f"pattern: '{EVIL}'")
    baseline.write_text(text)
    code, err = _baseline_check(capsys, baseline)
    assert code == 0, err


def _grep_tools() -> RepoTools:
    files = {"app/evil.txt": LONG_LINE + "\n", "app/ok.py": "aaaa\n"}
    snapshot = RepoSnapshot(commit="c0", files={p: SourceFile(p, t) for p, t in files.items()})
    return RepoTools(snapshot, ("app/evil.txt",))


def test_grep_tool_runs_a_catastrophic_pattern_fast() -> None:
    tools = _grep_tools()
    started = time.perf_counter()
    out = tools.grep(EVIL, "**")
    assert time.perf_counter() - started < 1.0
    assert not out.is_error and out.text == "app/ok.py:1: aaaa"
    assert tools.searches[-1].pattern == EVIL and tools.searches[-1].hits == 1


def test_grep_tool_refuses_unsupported_syntax_as_a_tool_error() -> None:
    tools = _grep_tools()
    out = tools.grep(r"(a)\1", "**")
    assert out.is_error and "RE2" in out.text and "backreferences" in out.text
    assert tools.searches == []
