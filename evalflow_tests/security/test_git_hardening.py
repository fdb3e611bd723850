"""Git on a hostile repository runs none of its programs, leaks no secret, and scores the same.

Each test builds a hostile repository and its clean twin from the same sources (same SHAs),
runs one evalflow entry point on both, and asserts no marker was written and the results match.
A control test first proves the attacks are live when git is run naively.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

import evalflow.repo.git as git_layer
from evalflow.cli import main
from evalflow.errors import ReadOnlyViolationError
from evalflow.gates.runner import _clone
from evalflow.repo.builder import build_repo
from evalflow.repo.diff_surface import diff_surface, unified_diff
from evalflow.repo.git import clone_for_gate, git_env, resolve_commit, scrubbed_env
from evalflow.repo.guard import capture_state, verify_unchanged
from evalflow.repo.snapshot import WORKTREE, load_snapshot, load_worktree_snapshot
from evalflow_tests.mini_benchmark import make_mini
from evalflow_tests.security.hostile import (
    FOREIGN_SECRET,
    FOREIGN_VECTORS,
    HOSTILE_ATTRIBUTES,
    arm_all,
    fired,
    foreign_repo,
    naive_git,
    submodule_repo,
)

SECRETS = {"ANTHROPIC_API_KEY": "sk-ant-hostile-0123456789", "MY_DB_PASSWD": "hunter2-passwd"}
BASE = {"app/core.py": "def greet(name):\n    return name\n", "README.md": "start\n"}
HEAD = {
    "app/core.py": 'def greet(name):\n    return f"Hello, {name}"\n',
    "tests/test_core.py": "from app.core import greet\n\nassert greet('a')\n",
    "data.txt": "plain\n",
    ".gitattributes": HOSTILE_ATTRIBUTES,
}


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def twins(make_repo: Callable[..., Path], tmp_path: Path) -> tuple[Path, Path, Path]:
    """(clean, hostile, markers): the same commits; only the hostile one's .git is armed."""
    clean = make_repo(BASE, HEAD)
    hostile = make_repo(BASE, HEAD)
    markers = tmp_path / "markers"
    assert arm_all(hostile, markers)
    for repo in (clean, hostile):  # a dirty working tree, so WORKTREE mode has work to do
        (repo / "app" / "core.py").write_text('def greet(name):\n    return f"Hi, {name}"\n')
        (repo / "untracked.py").write_text("x = 1\n")
    return clean, hostile, markers


def _contained(markers: Path) -> None:
    assert fired(markers) == [], f"hostile programs ran: {fired(markers)}"


def test_the_attacks_are_live_when_git_runs_in_the_repository(twins) -> None:
    _, hostile, markers = twins
    naive_git(hostile, "status")
    # The diff-helper control on its own: the filter-process attack blocks git until the
    # control's time limit, so on a loaded machine the diff never reached its helper.
    naive_git(hostile, "-c", "filter.x.process=", "diff", "base")
    ran = fired(markers)
    assert "fsmonitor" in ran or "included-fsmonitor" in ran
    assert "filter-clean" in ran or "filter-process" in ran
    assert "diff-external" in ran or "included-diff" in ran


def test_commit_reads_run_nothing_and_match_the_clean_twin(twins, secrets) -> None:
    clean, hostile, markers = twins
    results = []
    for repo in (clean, hostile):
        base, head = resolve_commit(repo, "base"), resolve_commit(repo, "head")
        snap = load_snapshot(repo, head)
        results.append(
            (
                base,
                head,
                {f.path: f.text for f in snap},
                snap.notes,
                diff_surface(repo, base, head),
                unified_diff(repo, base, head),
            )
        )
    _contained(markers)
    assert results[0] == results[1]
    assert '+    return f"Hello, {name}"' in results[1][5]


def test_worktree_reads_run_nothing_and_match_the_clean_twin(twins, secrets) -> None:
    clean, hostile, markers = twins
    results = []
    for repo in (clean, hostile):
        base, head = resolve_commit(repo, "base"), resolve_commit(repo, "HEAD")
        snap = load_worktree_snapshot(repo, head)
        results.append(
            (
                {f.path: f.text for f in snap},
                diff_surface(repo, base, WORKTREE),
                unified_diff(repo, base, WORKTREE),
            )
        )
    _contained(markers)
    assert results[0] == results[1]
    files, surface, text = results[1]
    assert files["app/core.py"].endswith('f"Hi, {name}"\n') and "untracked.py" in files
    assert {f.path: f.status for f in surface}["untracked.py"] == "untracked"
    assert "Hi, {name}" in text


def test_guard_runs_nothing_and_still_sees_every_change(twins, secrets) -> None:
    clean, hostile, markers = twins
    before = capture_state(hostile)
    assert verify_unchanged(hostile, before) == before
    assert capture_state(clean) == before
    (hostile / "data.txt").write_text("changed\n")
    with pytest.raises(ReadOnlyViolationError, match="file contents changed"):
        verify_unchanged(hostile, before)
    (hostile / "data.txt").write_text("plain\n")
    (hostile / "new.txt").write_text("n\n")
    with pytest.raises(ReadOnlyViolationError, match="git status changed"):
        verify_unchanged(hostile, before)
    (hostile / "new.txt").unlink()
    # Move HEAD by hand (running git in the hostile repository would fire its programs).
    (hostile / ".git" / "HEAD").write_text(resolve_commit(hostile, "base") + "\n")
    with pytest.raises(ReadOnlyViolationError, match="HEAD moved"):
        verify_unchanged(hostile, before)
    _contained(markers)


def test_guard_and_worktree_snapshot_never_follow_symlinks_out(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo({}, {"src/a.py": "a = 1\n", "b.py": "b = 1\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.py").write_text("SECRET = 'outside'\n")
    (outside / "passwd").write_text("root:x:0:0\n")
    (repo / "src" / "a.py").unlink()
    (repo / "src").rmdir()
    (repo / "src").symlink_to(outside)  # a tracked directory replaced by a link out
    (repo / "b.py").unlink()
    (repo / "b.py").symlink_to(outside / "passwd")
    snap = load_worktree_snapshot(repo, resolve_commit(repo, "HEAD"))
    assert all("outside" not in f.text and "root:" not in f.text for f in snap)
    assert "b.py: skipped, symbolic link" in snap.notes
    before = capture_state(repo)
    (outside / "a.py").write_text("SECRET = 'changed outside'\n")
    (outside / "passwd").write_text("changed\n")
    assert verify_unchanged(repo, before) == before  # nothing outside was ever read


def test_gate_clone_comes_from_the_mirror_and_runs_no_filter_or_hook(
    twins, secrets, tmp_path: Path
) -> None:
    _, hostile, markers = twins
    head = resolve_commit(hostile, "head")
    dest = tmp_path / "gate" / "clone"
    _clone(hostile, head, dest)
    _contained(markers)
    assert (dest / "app" / "core.py").read_text() == HEAD["app/core.py"]
    assert (dest / ".gitattributes").read_text() == HOSTILE_ATTRIBUTES
    config = (dest / ".git" / "config").read_text()
    assert "evil" not in config and "remote" not in config
    assert not any((dest / ".git").glob("hooks/*"))
    other = tmp_path / "gate2"
    clone_for_gate(hostile, resolve_commit(hostile, "base"), other)
    assert not (other / "tests").exists()
    _contained(markers)


@pytest.mark.slow
def test_score_on_a_hostile_repository_runs_nothing_and_scores_the_same(
    tmp_path: Path, warehouse_dir: Path, secrets, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = make_mini(tmp_path)
    markers = tmp_path / "markers"
    finals = {}
    for name, armed in (("clean", False), ("hostile", True)):
        repo = build_repo(bench / "sources" / "partial", tmp_path / f"repo-{name}")
        if armed:
            arm_all(repo, markers)
            (repo / ".gitattributes").write_text(HOSTILE_ATTRIBUTES)
        manifest = {
            "benchmark": "mini",
            "framework": name,
            "run": "r1",
            "repo": str(repo),
            "base": "base",
            "head": "head",
        }
        path = bench / "runs" / f"{name}.yaml"
        path.write_text(yaml.safe_dump(manifest))
        with pytest.raises(SystemExit) as done:
            main(["score", str(path), "--json"])
        out, err = capsys.readouterr()
        assert done.value.code in (0, None), err
        finals[name] = json.loads(out)[0]["final"]
    _contained(markers)
    assert finals["hostile"] == finals["clean"] == 0.36


def test_git_children_get_only_allow_listed_variables(
    twins, secrets, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://u:pw-in-url@h/db")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='/tmp/evil'")
    monkeypatch.setenv("GIT_DIR", "/somewhere/else")
    seen: list[dict[str, str]] = []
    real_popen = subprocess.Popen

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(dict(kwargs["env"]))
        return real_popen(*args, **kwargs)

    monkeypatch.setattr(git_layer.subprocess, "Popen", spy)
    _, hostile, markers = twins
    head = resolve_commit(hostile, "head")
    load_snapshot(hostile, head)
    diff_surface(hostile, resolve_commit(hostile, "base"), WORKTREE)
    verify_unchanged(hostile, capture_state(hostile))
    _contained(markers)
    allowed = set(git_env()) | {"GIT_INDEX_FILE"}
    assert seen
    for env in seen:
        assert {n for n in env if n not in allowed and not n.startswith("LC_")} == set()
        assert "GIT_CONFIG_PARAMETERS" not in env and "GIT_DIR" not in env
        for value in (*SECRETS.values(), "pw-in-url"):
            assert all(value not in v for v in env.values())
    assert not {"ANTHROPIC_API_KEY", "MY_DB_PASSWD", "DATABASE_URL"} & set(scrubbed_env())


@pytest.mark.parametrize("embedded", [False, True], ids=["gitfile", "embedded-git-dir"])
def test_a_populated_submodule_is_opaque(tmp_path: Path, secrets, embedded: bool) -> None:
    """A submodule's own config never runs: not in status, diffs, snapshots or the guard."""
    markers = tmp_path / "markers"
    repo = submodule_repo(tmp_path, markers, embedded=embedded)
    naive_git(repo, "status")  # the control: plain git runs the submodule's filter
    assert fired(markers) == ["submodule-filter"]
    for marker in markers.iterdir():
        marker.unlink()
    base, head = resolve_commit(repo, "base"), resolve_commit(repo, "head")
    assert "sub" not in load_snapshot(repo, head).files
    assert "sub/f.txt" not in load_worktree_snapshot(repo, head).files
    for upto in (head, WORKTREE):
        paths = [f.path for f in diff_surface(repo, base, upto)]
        assert paths == ([] if embedded else [".gitmodules"])
        assert "Subproject commit" not in unified_diff(repo, base, upto)
    before = capture_state(repo)
    (repo / "sub" / "f.txt").write_text("three\n")  # inside the opaque entry: not looked at
    assert verify_unchanged(repo, before) == before
    _contained(markers)


@pytest.mark.slow
@pytest.mark.parametrize("head", ["head", "WORKTREE"])
def test_score_of_a_repository_with_a_hostile_submodule_runs_nothing(
    tmp_path: Path, warehouse_dir: Path, secrets, capsys: pytest.CaptureFixture[str], head: str
) -> None:
    bench = make_mini(tmp_path)
    markers = tmp_path / "markers"
    repo = submodule_repo(tmp_path / "attack", markers, embedded=False)
    path = bench / "runs" / "sub.yaml"
    manifest = {"benchmark": "mini", "framework": "sub", "run": "r1", "repo": str(repo)}
    path.write_text(yaml.safe_dump({**manifest, "base": "base", "head": head}))
    with pytest.raises(SystemExit) as done:
        main(["score", str(path), "--json"])
    _, err = capsys.readouterr()
    assert done.value.code in (0, None), err
    _contained(markers)


@pytest.mark.parametrize("vector", FOREIGN_VECTORS)
def test_a_repository_reading_another_ones_data_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], vector: str
) -> None:
    repo, rev = foreign_repo(tmp_path, vector)
    # The control: plain git reads the other repository's file through this one.
    assert FOREIGN_SECRET in naive_git(repo, "show", f"{rev}:secret.txt").decode()
    bench = make_mini(tmp_path / "bench")
    argv = ["probe", "test", str(bench / "_ac-baseline.yaml"), "S1-AC1-I1", "--repo", str(repo)]
    with pytest.raises(SystemExit) as done:
        main([*argv, "--head", rev])
    out, err = capsys.readouterr()
    assert done.value.code == 2 and "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert "another repository" in line or "symbolic link" in line, line
    assert "git clone --no-local" in line and FOREIGN_SECRET not in out + err


@pytest.mark.slow
def test_score_refuses_a_gitfile_repository_with_one_error_line(
    tmp_path: Path, warehouse_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, rev = foreign_repo(tmp_path, "gitfile")
    bench = make_mini(tmp_path / "bench")
    manifest = bench / "runs" / "foreign.yaml"
    manifest.write_text(
        yaml.safe_dump(
            {"benchmark": "mini", "framework": "f", "run": "r1", "repo": str(repo),
             "base": rev, "head": rev}
        )
    )  # fmt: skip
    with pytest.raises(SystemExit) as done:
        main(["score", str(manifest)])
    out, err = capsys.readouterr()
    assert done.value.code == 2 and "Traceback" not in out + err
    line = err.strip().splitlines()[-1]  # after score's progress lines: the one error line
    assert (
        line.startswith("error: ")
        and ".git is a file pointing at another repository's data" in line
    )
    assert FOREIGN_SECRET not in out + err
