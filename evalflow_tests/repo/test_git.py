"""The host's mirror directory (`evalflow.repo.git.mirror_dir`): one mirror per repository
path, reused by every later process and warehouse, fetched only when the repository moved,
locked while made or fetched, evicted when its repository is gone."""

from __future__ import annotations

import fcntl
import os
import subprocess
from pathlib import Path

import pytest

from evalflow.errors import InputError
from evalflow.repo import git as git_layer
from evalflow.repo.git import (
    mirror_dir,
    require_repo,
    resolve_commit,
    throwaway_workspace,
    use_work_root,
)


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh mirror directory, and a counter of the fetches into any mirror."""
    root = tmp_path / "mirrors"
    monkeypatch.setenv("EVALFLOW_MIRROR_DIR", str(root))
    monkeypatch.setattr(git_layer, "_HOST_ROOTS", {})
    return root


@pytest.fixture
def fetches(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    seen: list[Path] = []
    real = git_layer._fetch

    def counting(top: Path, mirror: Path, advert: bytes) -> None:
        seen.append(mirror)
        real(top, mirror, advert)

    monkeypatch.setattr(git_layer, "_fetch", counting)
    return seen


def _new_process(warehouse: Path) -> None:
    """What a new `score` process starts from: no workspace, another warehouse."""
    with throwaway_workspace():
        pass
    use_work_root(warehouse)


def _commit(repo: Path, name: str) -> None:
    (repo / name).write_text("changed = True\n")
    for args in (["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, timeout=30)


def test_an_unchanged_repository_is_fetched_once_for_every_warehouse(
    make_repo, host: Path, fetches: list[Path], tmp_path: Path
) -> None:
    repo = make_repo({"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})
    heads = []
    for n in range(3):
        _new_process(tmp_path / f"warehouse{n}")
        heads.append(resolve_commit(require_repo(repo), "head"))
    assert len(set(heads)) == 1
    (mirror,) = host.glob("*.git")
    assert fetches == [mirror]  # the control: the first process fetched
    assert (mirror / "evalflow-mirror").read_text() == str(repo.resolve())
    assert not any((tmp_path / "warehouse2" / "tmp").glob("evalflow-git-*/mirrors/*"))
    _commit(repo, "b.py")
    _new_process(tmp_path / "warehouse3")
    moved = resolve_commit(require_repo(repo), "HEAD")
    assert moved not in heads and fetches == [mirror, mirror]


def test_off_keeps_one_mirror_per_process_in_its_workspace(
    make_repo, host: Path, fetches: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALFLOW_MIRROR_DIR", "off")
    assert mirror_dir() is None
    repo = make_repo({"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})
    for n in range(2):
        _new_process(tmp_path / f"warehouse{n}")
        resolve_commit(require_repo(repo), "head")
    assert len(fetches) == 2 and not host.exists()
    assert all(tmp_path / "warehouse1" / "tmp" in m.parents for m in fetches[1:])


def test_a_mirror_whose_repository_is_gone_is_evicted_unless_in_use(
    make_repo, host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept, gone, used = (make_repo({"a.py": f"x = {n}\n"}, {"a.py": "y = 1\n"}) for n in range(3))
    _new_process(tmp_path / "warehouse0")
    for repo in (kept, gone, used):
        require_repo(repo)
    made = {p.read_text(): p.parent for p in host.glob("*.git/evalflow-mirror")}
    mirrors = {repo: made[str(repo.resolve())] for repo in (kept, gone, used)}
    _new_process(tmp_path / "warehouse1")  # this process's shared locks are released
    holder = os.open(host / f"{mirrors[used].stem}.use", os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_SH)  # another process still reads `used`'s mirror
    try:
        for repo in (gone, used):
            subprocess.run(["rm", "-rf", str(repo)], check=True, timeout=30)
        monkeypatch.setattr(git_layer, "_HOST_ROOTS", {})
        require_repo(kept)
        assert mirrors[kept].is_dir() and mirrors[used].is_dir()
        assert not mirrors[gone].exists()
    finally:
        os.close(holder)


def test_a_mirror_directory_others_may_write_is_refused(
    make_repo, host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo({"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})
    host.mkdir(mode=0o700)
    require_repo(repo)  # the control
    host.chmod(0o777)
    monkeypatch.setattr(git_layer, "_HOST_ROOTS", {})
    _new_process(tmp_path / "warehouse")
    with pytest.raises(InputError, match="writable by another user"):
        resolve_commit(repo, "head")


def test_a_relative_mirror_directory_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALFLOW_MIRROR_DIR", "mirrors")
    with pytest.raises(InputError, match="not an absolute path"):
        mirror_dir()


def test_the_default_mirror_directory_is_the_users_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALFLOW_MIRROR_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "/srv/cache")
    assert mirror_dir() == Path("/srv/cache/evalflow/mirrors")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert mirror_dir() == Path.home() / ".cache" / "evalflow" / "mirrors"


def test_an_unwritable_default_falls_back_to_per_process_mirrors_and_a_set_one_is_refused(
    make_repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo({"a.py": "x = 1\n"}, {"a.py": "x = 2\n"})
    blocked = tmp_path / "file"
    blocked.write_text("not a directory\n")
    monkeypatch.delenv("EVALFLOW_MIRROR_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    monkeypatch.setattr(git_layer, "_HOST_ROOTS", {})
    _new_process(tmp_path / "warehouse0")
    assert len(resolve_commit(repo, "head")) == 40
    assert any((tmp_path / "warehouse0" / "tmp").glob("evalflow-git-*/mirrors/*.git"))
    monkeypatch.setenv("EVALFLOW_MIRROR_DIR", str(blocked / "mirrors"))
    _new_process(tmp_path / "warehouse1")
    with pytest.raises(InputError, match="cannot make the mirror directory"):
        resolve_commit(repo, "head")


def test_what_commits_pin_is_read_once_per_workspace_and_the_bounds_checked_every_time(
    make_repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalflow.errors import LimitExceededError
    from evalflow.repo import diff_surface as surface_module
    from evalflow.repo.diff_surface import diff_surface
    from evalflow.repo.snapshot import WORKTREE, check_tree, load_snapshot

    repo = make_repo({"a.py": "x = 1\n"}, {"a.py": "x = 2\n", "b.py": "y = 1\n"})
    base, head = resolve_commit(repo, "base"), resolve_commit(repo, "head")
    diffs: list[str] = []
    real = surface_module._diff_surface

    def counting(repo: Path, base: str, head: str) -> list:
        diffs.append(head)
        return real(repo, base, head)

    monkeypatch.setattr(surface_module, "_diff_surface", counting)
    _new_process(tmp_path / "warehouse0")
    first = diff_surface(repo, base, head)
    assert diff_surface(repo, base, head) == first and diffs == [head]
    diff_surface(repo, base, WORKTREE)  # the working tree moves: never kept
    diff_surface(repo, base, WORKTREE)
    assert diffs == [head, WORKTREE, WORKTREE]
    snapshot = load_snapshot(repo, head)
    assert load_snapshot(repo, head) is snapshot
    monkeypatch.setenv("EVALFLOW_MAX_FILES", "1")
    with pytest.raises(LimitExceededError):
        check_tree(repo, head)
    with pytest.raises(LimitExceededError):
        load_snapshot(repo, head)
    monkeypatch.delenv("EVALFLOW_MAX_FILES")
    _new_process(tmp_path / "warehouse1")  # a new process reads again
    assert diff_surface(repo, base, head) == first and diffs == [head, WORKTREE, WORKTREE, head]
    assert load_snapshot(repo, head) is not snapshot


def test_commit_memo_keeps_the_newest_entries_of_a_kind(tmp_path: Path) -> None:
    from evalflow.repo.git import commit_memo

    _new_process(tmp_path / "warehouse")
    calls: list[str] = []
    for name in ("a", "b", "c", "a"):
        commit_memo(("kind", name), lambda name=name: calls.append(name), keep=2)
    commit_memo(("other", "a"), lambda: calls.append("other"), keep=2)
    assert calls == ["a", "b", "c", "a", "other"]  # "a" had been dropped for "c"
    commit_memo(("kind", "c"), lambda: calls.append("c again"), keep=2)
    assert calls[-1] == "other"


def test_a_mirror_directory_removed_while_the_process_lives_is_made_again(
    make_repo, host: Path, tmp_path: Path
) -> None:
    first, second = (make_repo({"a.py": f"x = {n}\n"}, {"a.py": "y = 1\n"}) for n in range(2))
    _new_process(tmp_path / "warehouse")
    require_repo(first)
    git_layer.remove_tree(host)
    assert len(resolve_commit(second, "head")) == 40
    assert any(host.glob("*.git/evalflow-mirror"))
