"""The diff surface: the files this implementation changed, the first scope of every search.

`git diff --name-status base..head` (or base..working tree, plus untracked files, when a
working tree is evaluated), with per-file change status and line counts. Also the added
lines per file, which separate feature tests from pre-existing ones. Commits are compared in
evalflow's mirror of the repository, a working tree through git with the mirror's config and a
private index holding HEAD (`evalflow.repo.git`); every diff runs with
``--no-ext-diff --no-textconv``, so no program the repository names ever runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from evalflow.repo.git import commit_memo, git, is_sha, worktree
from evalflow.repo.snapshot import WORKTREE

ChangeStatus = Literal["added", "modified", "deleted", "renamed", "copied", "type", "untracked"]
_STATUS = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "T": "type",
}


class DiffFile(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    status: ChangeStatus
    old_path: str | None = None
    added_lines: int | None = None
    deleted_lines: int | None = None
    binary: bool = False


def _range_args(base: str, head: str) -> list[str]:
    return [base] if head == WORKTREE else [base, head]


@contextmanager
def _runner(repo: Path, head: str) -> Iterator[Callable[..., bytes]]:
    """git on the mirror for two commits, on the working tree for `WORKTREE`."""
    if head == WORKTREE:
        with worktree(repo) as run:
            yield run
    else:
        yield lambda *args: git(repo, *args)


def diff_surface(repo: Path, base: str, head: str) -> list[DiffFile]:
    """Changed files between two full SHAs (`head` may be `WORKTREE`), sorted by path.

    Between two commits it is computed once per process (`commit_memo`): every step of a
    run prepares it, and a whole history's rename detection takes seconds."""
    if not (is_sha(base) and is_sha(head)):
        return _diff_surface(repo, base, head)
    return list(
        commit_memo(
            ("diff_surface", str(repo), base, head), lambda: _diff_surface(repo, base, head)
        )
    )


def _diff_surface(repo: Path, base: str, head: str) -> list[DiffFile]:
    rng = _range_args(base, head)
    with _runner(repo, head) as run:
        fields = run("diff", "--name-status", "-z", "-M", *rng).split(b"\0")
        counts = _numstat(run("diff", "--numstat", "-z", "-M", *rng))
        others = (
            run("ls-files", "-z", "--others", "--exclude-standard").split(b"\0")
            if head == WORKTREE
            else []
        )
    entries: dict[str, DiffFile] = {}
    i = 0
    while i < len(fields) and fields[i]:
        code = fields[i].decode()
        if code[0] in "RC":
            old, new = fields[i + 1].decode(), fields[i + 2].decode()
            entries[new] = DiffFile(path=new, status=_STATUS[code[0]], old_path=old)  # type: ignore[arg-type]
            i += 3
        else:
            path = fields[i + 1].decode()
            entries[path] = DiffFile(path=path, status=_STATUS.get(code[0], "modified"))  # type: ignore[arg-type]
            i += 2
    surface = [
        entry.model_copy(
            update={
                "added_lines": counts.get(path, (None, None, False))[0],
                "deleted_lines": counts.get(path, (None, None, False))[1],
                "binary": counts.get(path, (None, None, False))[2],
            }
        )
        for path, entry in entries.items()
    ]
    surface += [DiffFile(path=p.decode(), status="untracked") for p in others if p]
    return sorted(surface, key=lambda f: f.path)


def _numstat(raw: bytes) -> dict[str, tuple[int | None, int | None, bool]]:
    out = raw.split(b"\0")
    counts: dict[str, tuple[int | None, int | None, bool]] = {}
    i = 0
    while i < len(out) and out[i]:
        added, deleted, path = out[i].decode().split("\t", 2)
        if not path:  # a rename: the old and new paths follow as separate fields
            path = out[i + 2].decode()
            i += 3
        else:
            i += 1
        binary = added == "-"
        counts[path] = (None if binary else int(added), None if binary else int(deleted), binary)
    return counts


def unified_diff(repo: Path, base: str, head: str) -> str:
    """`git diff --unified=0` text, the input of the added-lines parser."""
    with _runner(repo, head) as run:
        out = run("diff", "--unified=0", "-M", "--no-color", *_range_args(base, head))
    return out.decode("utf-8", "replace")
