"""Globs from untrusted input match in linear time, pathological ones are refused, and judge
tool calls are bounded in time."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import ValidationError

from evalflow.domain.globs import glob_match, glob_problem
from evalflow.domain.models import Probe
from evalflow.judges.repo_tools import RepoTools
from evalflow.repo.snapshot import RepoSnapshot, SourceFile

STAR_A = "app/" + "*a" * 30 + "*b"  # backtracking re: minutes per path
DEEP = "**/" * 10 + "y"
CHILD_TIMEOUT_S = 30


def _child(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE)


def test_pathological_globs_match_in_linear_time() -> None:
    code = (
        "from evalflow.domain.globs import glob_match\n"
        f"assert not glob_match('app/' + 'a' * 60, {STAR_A!r})\n"
        f"assert not glob_match('/'.join(['d'] * 60) + '/x', {DEEP!r})\n"
    )
    child = _child(code)
    try:
        _, err = child.communicate(timeout=CHILD_TIMEOUT_S)
    finally:
        child.kill()
    assert child.returncode == 0, err.decode()


def test_the_glob_semantics_are_unchanged() -> None:
    cases = {
        ("app/x/y.py", "app/**/*.py"): True,
        ("app/y.py", "app/**/*.py"): True,
        ("app/x/y.py", "app/*.py"): False,
        ("test_a.py", "**/test_*.py"): True,
        ("a/c", "a?c"): False,
        ("abc", "a?c"): True,
        ("x/a/b", "x/**"): True,
        ("a.py\nb", "*.py"): False,
        ("a(b).py", "a(b).py"): True,
    }
    assert {case: glob_match(*case) for case in cases} == cases


@pytest.mark.parametrize("glob", [STAR_A, DEEP + "*a" * 3, "x" * 400])
def test_a_baseline_probe_with_a_pathological_glob_is_refused(glob: str) -> None:
    assert glob_problem(glob)
    with pytest.raises(ValidationError, match="glob"):
        Probe(kind="impl", pattern="x", path_globs=(glob,))
    Probe(kind="impl", pattern="x", path_globs=("src/**/test_*.py", "**"))


def _tools() -> RepoTools:
    files = {f"app/f{i}.py": SourceFile(f"app/f{i}.py", "a" * 2000 + "\n") for i in range(50)}
    return RepoTools(RepoSnapshot(commit="c", files=files), diff_paths=())


def test_judge_tools_refuse_pathological_globs_and_stop_at_the_time_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tools = _tools()
    for result in (tools.list_files(STAR_A), tools.grep("x", DEEP + "*a" * 3)):
        assert result.is_error and "refused" in result.text and "wildcards" in result.text
    monkeypatch.setenv("EVALFLOW_TOOL_CALL_S", "1e-9")
    for result in (tools.grep("(.*a){3}", "**"), tools.list_files("**")):
        assert result.is_error and "per-call limit" in result.text
