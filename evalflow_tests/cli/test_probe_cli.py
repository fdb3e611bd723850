"""`evalflow probe test`: each probe's matching lines as the heuristic judge reads them
(scope, disqualifier, enclosing test and assertion) and the verdict it would give."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from evalflow.cli import main

PRD = "# PRD: P\n\n## Story S1: Emit (P0)\n- S1-AC1: Signup emits an event with the userId.\n"
BASELINE = """\
benchmark: p
prd: prd.md
acs:
  - id: S1-AC1
    text: Signup emits an event with the userId.
    checks:
      - id: S1-AC1-I1
        kind: I
        proposition: the emitted payload carries userId
        probes:
          - {kind: impl, pattern: '"userId"\\s*:', path_globs: ['app/**'],
             within: {payload_of: emit}}
      - id: S1-AC1-T1
        kind: T
        level: unit
        proposition: a test asserts the userId of the event
        probes: [{kind: test-assert, pattern: 'userId', path_globs: ['tests/**']}]
"""
APP = (
    "def emit(name, payload):\n    return payload\n\n\n"
    "def signup(uid):\n"
    '    doc = {"userId": uid}\n'
    '    return emit("signup", {"userId": uid})\n'
)
TEST = (
    "from app.core import signup\n\n\n"
    "def test_signup():\n"
    "    event = signup(7)  # userId is 7\n"
    '    assert event["userId"] == 7\n'
)


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


@pytest.fixture
def bench(tmp_path: Path, make_repo: Callable[..., Path]) -> tuple[Path, Path]:
    (tmp_path / "prd.md").write_text(PRD)
    (tmp_path / "_ac-baseline.yaml").write_text(BASELINE)
    repo = make_repo({}, {"app/core.py": APP, "tests/test_core.py": TEST})
    return tmp_path / "_ac-baseline.yaml", repo


def test_impl_probe_shows_scope_per_line_and_verdict(bench, capsys) -> None:
    baseline, repo = bench
    args = ("probe", "test", str(baseline), "S1-AC1-I1", "--repo", str(repo))
    code, out, err = run_cli(capsys, *args, "--head", "head", "--base", "base")
    assert code == 0, err
    # The pattern is printed as written in single-quoted YAML, without doubled escapes.
    assert "probe 1: impl '\"userId\"\\s*:' in app/** within payload_of=emit" in out
    assert '- app/core.py:6 (diff) [outside within scope]  doc = {"userId": uid}' in out
    assert "+ app/core.py:7 (diff) [in within scope]" in out
    assert out.rstrip().endswith("verdict: MET: every probe matched production code: app/core.py:7")


def test_test_probe_names_the_test_and_the_assertion_line(bench, capsys) -> None:
    baseline, repo = bench
    args = ("probe", "test", str(baseline), "S1-AC1-T1", "--repo", str(repo), "--json")
    code, out, err = run_cli(capsys, *args, "--head", "head", "--base", "base")
    assert code == 0, err
    report = json.loads(out)
    matches = report["probes"][0]["matches"]
    assert [(m["line"], m["asserts"], m["counts"]) for m in matches] == [
        (5, False, False),
        (6, True, True),
    ]
    assert matches[1]["test"] == "tests/test_core.py::test_signup"
    assert report["verdict"]["status"] == "MET"


def test_without_base_the_test_is_outside_the_diff_surface(bench, capsys) -> None:
    baseline, repo = bench
    args = ("probe", "test", str(baseline), "S1-AC1-T1", "--repo", str(repo), "--head", "head")
    code, out, _ = run_cli(capsys, *args)
    assert code == 0
    assert "diff surface: none (no --base)" in out
    assert "verdict: UNSCORED" in out and "note: without --base" in out


def test_unknown_check_and_bad_repo_are_one_line_input_errors(bench, tmp_path, capsys) -> None:
    baseline, repo = bench
    code, _, err = run_cli(capsys, "probe", "test", str(baseline), "S9", "--repo", str(repo))
    assert code == 2 and "no check 'S9' in the baseline" in err and "S1-AC1-I1" in err
    assert len(err.strip().splitlines()) == 1
    plain = tmp_path / "plain"
    plain.mkdir()
    code, _, err = run_cli(
        capsys, "probe", "test", str(baseline), "S1-AC1-I1", "--repo", str(plain)
    )
    assert code == 2 and "not a git repository" in err


PROPOSED = BASELINE.replace(
    "probes: [{kind: test-assert, pattern: 'userId', path_globs: ['tests/**']}]",
    "probes: [{kind: test-assert, pattern: 'userId', path_globs: ['tests/**'], proposed: true}]",
)


def test_proposals_table_shows_each_proposed_probe_in_every_run(
    tmp_path: Path, make_repo: Callable[..., Path], capsys
) -> None:
    (tmp_path / "prd.md").write_text(PRD)
    baseline = tmp_path / "_ac-baseline.yaml"
    baseline.write_text(PROPOSED)
    asserted = make_repo({}, {"app/core.py": APP, "tests/test_core.py": TEST})
    other = make_repo({}, {"app/core.py": APP, "tests/test_core.py": TEST.replace("userId", "uid")})
    args = ("probe", "test", str(baseline), "--repo", str(asserted), "--repo", str(other))
    code, out, err = run_cli(capsys, *args, "--head", "head")
    assert code == 0, err
    assert "diff surface: whole head tree (no --base)" in out
    # Only the proposed probe's check is listed (S1-AC1-I1 carries an accepted probe).
    assert "S1-AC1-I1" not in out
    assert "S1-AC1-T1 (T): a test asserts the userId of the event [run 1 MET, run 2 " in out
    assert "  probe 1: test-assert 'userId' (proposed)" in out
    assert "    run 1: tests/test_core.py:6" in out
    assert "    run 2: no match" in out
    code, out, _ = run_cli(capsys, *args, "--head", "head", "--json")
    report = json.loads(out)
    assert report["verdicts"] == {"S1-AC1-T1": ["MET", "UNMET"]}
    assert [len(r) for r in report["probes"][0]["runs"]] == [2, 0]


def test_named_check_over_several_repos_is_a_table_too(
    tmp_path: Path, make_repo: Callable[..., Path], capsys
) -> None:
    (tmp_path / "prd.md").write_text(PRD)
    baseline = tmp_path / "_ac-baseline.yaml"
    baseline.write_text(BASELINE)
    repo = make_repo({}, {"app/core.py": APP, "tests/test_core.py": TEST})
    args = ("probe", "test", str(baseline), "S1-AC1-I1", "--repo", str(repo), "--repo", str(repo))
    code, out, err = run_cli(capsys, *args, "--head", "head", "--base", "base", "--base", "base")
    assert code == 0, err
    assert "diff surface: diff to --base" in out
    assert out.count("app/core.py:7") == 2
    code, _, err = run_cli(capsys, "probe", "test", str(baseline), "--repo", str(repo))
    assert code == 2 and "no proposed probes in the baseline" in err
    code, _, err = run_cli(capsys, *args, "--head", "a", "--head", "b", "--head", "c")
    assert code == 2 and "3 --head for 2 --repo" in err
