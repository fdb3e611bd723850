"""The read-only repository layer: builder, diff surface, snapshot, guard, git errors."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalflow.errors import InputError, ReadOnlyViolationError
from evalflow.repo.builder import build_repo
from evalflow.repo.diff_surface import diff_surface, unified_diff
from evalflow.repo.git import require_repo, resolve_commit, scrubbed_env
from evalflow.repo.guard import capture_state, verify_unchanged
from evalflow.repo.snapshot import WORKTREE, load_snapshot, load_worktree_snapshot


def _commit_all(repo: Path) -> None:
    """Commit like a user would (evalflow itself never writes to an evaluated repository)."""
    for args in (["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, timeout=30)


def test_builder_gives_fixed_shas(make_repo) -> None:
    first = make_repo({"a.py": "x = 1\n"}, {"a.py": "x = 2\n", "b.py": "y = 1\n"})
    second = make_repo({"a.py": "x = 1\n"}, {"a.py": "x = 2\n", "b.py": "y = 1\n"})
    assert resolve_commit(first, "head") == resolve_commit(second, "head")
    assert resolve_commit(first, "base") != resolve_commit(first, "head")


def test_builder_is_idempotent(tmp_path: Path, make_repo) -> None:
    repo = make_repo({}, {"a.py": "1\n"})
    source = tmp_path / "src0"
    stamp_before = (repo / ".git" / ".evalflow-build").stat().st_mtime_ns
    build_repo(source, repo)
    assert (repo / ".git" / ".evalflow-build").stat().st_mtime_ns == stamp_before


def test_diff_surface_statuses(make_repo) -> None:
    repo = make_repo(
        {"keep.py": "a\n", "old.py": "one\ntwo\nthree\nfour\n", "gone.py": "z\n"},
        {
            "keep.py": "a\nb\n",
            "new.py": "n\n",
            "renamed.py": "one\ntwo\nthree\nfour\n",
            "bin.dat": "\0\1\2",
        },
        delete=("old.py", "gone.py"),
    )
    base, head = resolve_commit(repo, "base"), resolve_commit(repo, "head")
    surface = {f.path: f for f in diff_surface(repo, base, head)}
    assert surface["keep.py"].status == "modified" and surface["keep.py"].added_lines == 1
    assert surface["new.py"].status == "added"
    assert surface["renamed.py"].status == "renamed"
    assert surface["renamed.py"].old_path == "old.py"
    assert surface["gone.py"].status == "deleted"
    assert surface["bin.dat"].binary
    assert "+b" in unified_diff(repo, base, head)


def test_worktree_includes_untracked(make_repo) -> None:
    repo = make_repo({}, {"a.py": "1\n"})
    (repo / "untracked.py").write_text("u = 1\n")
    head = resolve_commit(repo, "head")
    surface = {f.path: f.status for f in diff_surface(repo, resolve_commit(repo, "base"), WORKTREE)}
    assert surface["untracked.py"] == "untracked"
    snap = load_worktree_snapshot(repo, head)
    assert "untracked.py" in snap and snap.commit.endswith(WORKTREE)


def test_snapshot_skips_binary_huge_and_decodes_latin1(make_repo) -> None:
    repo = make_repo({}, {"ok.py": "print(1)\n"})
    (repo / "blob.bin").write_bytes(b"\0\1\2\3")
    (repo / "huge.txt").write_text("x" * 2000)
    (repo / "latin.txt").write_bytes("café\n".encode("latin-1"))
    _commit_all(repo)
    snap = load_snapshot(repo, resolve_commit(repo, "HEAD"), max_file_bytes=1000)
    assert "ok.py" in snap and "blob.bin" not in snap and "huge.txt" not in snap
    assert snap.lines("latin.txt")[0] == "caf\ufffd"
    notes = "\n".join(snap.notes)
    assert "blob.bin: skipped, binary" in notes
    assert "huge.txt: skipped" in notes
    assert "latin.txt: not UTF-8" in notes


def test_guard_catches_a_write(make_repo) -> None:
    repo = make_repo({}, {"a.py": "1\n"})
    before = capture_state(repo)
    verify_unchanged(repo, before)
    (repo / "a.py").write_text("2\n")
    with pytest.raises(ReadOnlyViolationError, match="file contents changed"):
        verify_unchanged(repo, before)


def test_guard_catches_a_new_file_and_a_commit(make_repo) -> None:
    repo = make_repo({}, {"a.py": "1\n"})
    before = capture_state(repo)
    (repo / "new.txt").write_text("n\n")
    with pytest.raises(ReadOnlyViolationError, match="git status changed"):
        verify_unchanged(repo, before)


def test_git_errors_are_one_line(tmp_path: Path, make_repo) -> None:
    with pytest.raises(InputError, match="repository not found"):
        require_repo(tmp_path / "missing")
    (tmp_path / "plain").mkdir()
    with pytest.raises(InputError, match="not a git repository"):
        require_repo(tmp_path / "plain")
    repo = make_repo({}, {"a.py": "1\n"})
    with pytest.raises(InputError, match="unknown commit 'nope'"):
        resolve_commit(repo, "nope")


def test_scrubbed_env_is_an_allow_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    monkeypatch.setenv("MY_DB_PASSWD", "hunter2")
    monkeypatch.setenv("DATABASE_URL", "postgres://u:pw@h/db")
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("LC_TIME", "C")
    env = scrubbed_env({"EXTRA": "given"})
    assert not {"ANTHROPIC_API_KEY", "MY_DB_PASSWD", "DATABASE_URL"} & set(env)
    assert env["LANG"] == "C.UTF-8" and env["LC_TIME"] == "C" and env["EXTRA"] == "given"
    assert "PATH" in env


def test_a_killed_runs_git_workspace_is_removed_by_the_next_run(make_repo, tmp_path: Path) -> None:
    repo = make_repo({"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": os.pathsep.join(sys.path)}
    code = f"from evalflow.repo.git import resolve_commit; resolve_commit({str(repo)!r}, 'head')"
    # The control: a run killed before its exit handlers leaves its workspace behind.
    killed = subprocess.run(
        [sys.executable, "-c", code + "; import os; os.kill(os.getpid(), 9)"],
        env=env, timeout=60, check=False,
    )  # fmt: skip
    assert killed.returncode == -9
    (orphan,) = temp.glob("evalflow-git-*")
    assert (orphan / "mirrors").is_dir()
    subprocess.run([sys.executable, "-c", code], env=env, timeout=60, check=True)
    assert list(temp.glob("evalflow-git-*")) == []


def test_git_state_lives_in_the_warehouse_and_a_killed_runs_is_removed(
    mini: Path, tmp_path: Path
) -> None:
    """Mirrors and scratch indexes go under <warehouse>/tmp, never $TMPDIR; the next run
    removes a killed run's workspace (its lock is free), one whose process is gone before it
    took its lock and an older version's in $TMPDIR, and keeps a live one (its lock is held)."""
    temp, warehouse = tmp_path / "temp", tmp_path / "wh"
    (temp / "evalflow-git-999999999-old" / "mirrors").mkdir(parents=True)  # an older version's
    # Per-process mirrors (not the host's, `test_git.py`): the workspace must hold one.
    env = {
        **os.environ,
        "TMPDIR": str(temp),
        "PYTHONPATH": os.pathsep.join(sys.path),
        "EVALFLOW_MIRROR_DIR": "off",
    }
    code = (
        "from pathlib import Path; from evalflow.io.evaluation import open_snapshot, prepare_run;"
        "from evalflow.repo.guard import capture_state;"
        f"p = prepare_run(Path({str(mini / 'runs' / 'good.yaml')!r}), Path({str(warehouse)!r}));"
        "open_snapshot(p); capture_state(p.repo)"
    )
    killed = subprocess.run(
        [sys.executable, "-c", code + "; import os; os.kill(os.getpid(), 9)"],
        env=env, timeout=120, check=False,
    )  # fmt: skip
    assert killed.returncode == -9
    (orphan,) = (warehouse / "tmp").glob("evalflow-git-*")
    assert (orphan / "mirrors").is_dir() and any((orphan / "mirrors").iterdir())
    unlocked = warehouse / "tmp" / "evalflow-git-999999999-x"  # died before taking its lock
    live = warehouse / "tmp" / f"evalflow-git-{os.getpid()}-live"
    for leftover in (unlocked, live):
        (leftover / "mirrors").mkdir(parents=True)
    lock = os.open(live / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        subprocess.run([sys.executable, "-c", code], env=env, timeout=120, check=True)
        assert [p.name for p in (warehouse / "tmp").iterdir()] == [live.name]
    finally:
        os.close(lock)
    assert list(temp.iterdir()) == []


def test_every_git_child_is_bounded_by_the_configured_time(
    make_repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo({"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})
    monkeypatch.setenv("EVALFLOW_GIT_TIMEOUT_S", "0.000001")
    with pytest.raises(InputError, match=r"did not finish within 1e-06 s.*EVALFLOW_GIT_TIMEOUT_S"):
        resolve_commit(repo, "head")
    with pytest.raises(InputError, match="did not finish"):  # not "not a git repository"
        require_repo(repo)
    for bad in ("abc", "0", "-5", "inf", "nan"):
        monkeypatch.setenv("EVALFLOW_GIT_TIMEOUT_S", bad)
        with pytest.raises(InputError, match=r"EVALFLOW_GIT_TIMEOUT_S=.* is not a number in"):
            resolve_commit(repo, "head")
    monkeypatch.setenv("EVALFLOW_GIT_TIMEOUT_S", "60")
    assert len(resolve_commit(repo, "head")) == 40
