"""Bounds on repository content (issue 30 item 2): each hostile tree, its bound lowered by its
variable so the test stays small, ends in one error naming the bound — never a hang, never a
verdict — and a file above the size bound is skipped and listed, not read."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
import yaml

from evalflow.errors import InputError, LimitExceededError
from evalflow.io import evaluation
from evalflow.io.evaluation import open_snapshot, prepare_run
from evalflow.repo import snapshot as snapshot_module
from evalflow.repo.git import resolve_commit
from evalflow.repo.guard import capture_state
from evalflow.repo.limits import BOUNDS
from evalflow.repo.snapshot import load_snapshot, load_worktree_snapshot

GIT_S = 120


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "gc.auto=0",
         *args],
        check=True, capture_output=True, timeout=GIT_S,
    )  # fmt: skip


def hostile_repo(root: Path, files: dict[str, bytes]) -> Path:
    """A repository whose commit `head` adds `files` on top of `base` (a README)."""
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("hostile\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    _git(root, "tag", "base")
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "head")
    _git(root, "tag", "head")
    return root


def _never(*args: object) -> None:
    raise AssertionError("not reached")


def _every_reader_refuses(repo: Path, match: str) -> None:
    head = resolve_commit(repo, "head")
    for read in (
        lambda: load_snapshot(repo, head),
        lambda: load_worktree_snapshot(repo, head),
        lambda: capture_state(repo),
    ):
        with pytest.raises(LimitExceededError, match=match) as error:
            read()
        assert "\n" not in error.value.one_line() and "not scored" in error.value.what


def test_many_files_are_refused_naming_the_bound(tmp_path: Path, mini: Path, monkeypatch) -> None:
    repo = hostile_repo(tmp_path / "r", {f"d{i % 50}/f{i}.py": b"x = 1\n" for i in range(5_000)})
    monkeypatch.setenv("EVALFLOW_MAX_FILES", "1000")
    started = time.monotonic()
    refused = r"has 5001 files at .*limit is 1000 files .*EVALFLOW_MAX_FILES"
    _every_reader_refuses(repo, refused)
    # prepare_run refuses before diffing the hostile tree (200,000 added files: 15 s).
    monkeypatch.setattr(evaluation, "diff_surface", _never)
    with pytest.raises(LimitExceededError, match=refused):
        prepare_run(_manifest(tmp_path, mini, repo=str(repo)), tmp_path / "wh")
    assert time.monotonic() - started < 60
    monkeypatch.setenv("EVALFLOW_MAX_FILES", "5001")  # the control: at the bound, read
    assert len(load_snapshot(repo, resolve_commit(repo, "head")).files) == 5_001


def test_a_deep_path_is_refused_naming_the_bound(tmp_path: Path, monkeypatch) -> None:
    deep = "/".join(["d"] * 299) + "/f.py"
    repo = hostile_repo(tmp_path / "r", {deep: b"x = 1\n", "ok.py": b"y = 2\n"})
    monkeypatch.setenv("EVALFLOW_MAX_PATH_DEPTH", "100")
    _every_reader_refuses(repo, r"d/d/d.*… at .* is 300 directory levels deep.*MAX_PATH_DEPTH")
    monkeypatch.setenv("EVALFLOW_MAX_PATH_DEPTH", "300")
    assert deep in load_snapshot(repo, resolve_commit(repo, "head"))


def test_a_big_file_is_skipped_and_listed_not_read(tmp_path: Path, monkeypatch) -> None:
    big = b"x = 1\n" * (10_000_000 // 6)
    repo = hostile_repo(tmp_path / "r", {"big.py": big, "ok.py": b"y = 2\n"})
    monkeypatch.setenv("EVALFLOW_MAX_FILE_BYTES", "1000000")
    asked: list[bytes] = []
    real_git = snapshot_module.git

    def recording_git(repo: Path, *args: str, input_bytes: bytes | None = None) -> bytes:
        asked.append(input_bytes or b"")
        return real_git(repo, *args, input_bytes=input_bytes)

    monkeypatch.setattr(snapshot_module, "git", recording_git)
    head = resolve_commit(repo, "head")
    big_sha = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "head:big.py"],
        check=True, capture_output=True, timeout=GIT_S,
    ).stdout.strip()  # fmt: skip
    for snap in (load_snapshot(repo, head), load_worktree_snapshot(repo, head)):
        assert "big.py" not in snap and "ok.py" in snap
        assert f"big.py: skipped, {len(big)} bytes is above the 1000000-byte limit" in snap.notes
    assert not any(big_sha in data for data in asked)  # its blob was never asked for
    capture_state(repo)  # the guard compares it by size and time, without hashing 10 MB


def test_total_bytes_read_are_bounded(tmp_path: Path, monkeypatch) -> None:
    repo = hostile_repo(tmp_path / "r", {f"f{i}.py": b"#" * 800 + b"\n" for i in range(3)})
    monkeypatch.setenv("EVALFLOW_MAX_READ_BYTES", "2000")
    _every_reader_refuses(repo, r"\d+ bytes; the limit is 2000 bytes read .*MAX_READ_BYTES")


def _manifest(tmp_path: Path, mini: Path, **fields: str) -> Path:
    path = mini / "runs" / "hostile.yaml"
    doc = {"benchmark": "mini", "framework": "hostile", "run": "r1", "base": "base"}
    path.write_text(yaml.safe_dump({**doc, "head": "head", **fields}), encoding="utf-8")
    return path


def test_prepare_run_has_a_wall_clock_budget(tmp_path: Path, mini: Path, monkeypatch) -> None:
    repo = hostile_repo(tmp_path / "r", {"a.py": b"x = 1\n"})
    monkeypatch.setenv("EVALFLOW_PREPARE_TIMEOUT_S", "1e-9")
    built = mini / "runs" / "good.yaml"  # `source:`: the build's git children are bounded too
    spent = r"preparing the run .* in time; the limit is 1e-09 seconds .*PREPARE_TIMEOUT_S"
    for manifest in (_manifest(tmp_path, mini, repo=str(repo)), built):
        with pytest.raises(LimitExceededError, match=spent):
            prepare_run(manifest, tmp_path / "wh")
    monkeypatch.setenv("EVALFLOW_PREPARE_TIMEOUT_S", "60")
    prepared = prepare_run(_manifest(tmp_path, mini, repo=str(repo)), tmp_path / "wh")
    assert "a.py" in open_snapshot(prepared)


@pytest.mark.parametrize("bound", BOUNDS, ids=lambda b: b.env)
@pytest.mark.parametrize("bad", ["lots", "0", "-1", "inf", "nan", "1e400"])
def test_a_bad_bound_is_one_line(monkeypatch, bound, bad: str) -> None:
    monkeypatch.setenv(bound.env, bad)
    with pytest.raises(InputError, match=rf"{bound.env}=.* is not a") as error:
        bound.value()
    assert "\n" not in error.value.one_line()


def test_a_fractional_count_is_refused(monkeypatch) -> None:
    monkeypatch.setenv("EVALFLOW_MAX_FILES", "1.5")
    with pytest.raises(InputError, match="is not a whole number"):
        BOUNDS[1].value()


@pytest.mark.slow
def test_a_run_over_a_bound_is_not_scored_in_one_line(
    tmp_path: Path, mini: Path, warehouse_dir: Path, monkeypatch, capsys
) -> None:
    """End to end: the step that meets the bound fails, the run is not scored, and the CLI
    says which bound in one line with exit 2 — not 'a bug in evalflow' (exit 3)."""
    from evalflow.cli import main

    files = {f"d{i % 20}/f{i}.py": b"x = 1\n" for i in range(1_200)}
    manifest = _manifest(tmp_path, mini, repo=str(hostile_repo(tmp_path / "r", files)))
    monkeypatch.setenv("EVALFLOW_MAX_FILES", "1000")
    with pytest.raises(SystemExit) as done:
        main(["score", str(manifest)])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert done.value.code == 2, err
    assert len(errors) == 1 and "EVALFLOW_MAX_FILES" in errors[0], err
    assert "has 1201 files" in errors[0] and "bug in evalflow" not in err, err
    assert "Traceback" not in err
