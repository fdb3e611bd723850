"""The read-only guard: proves the evaluated repository is unchanged by an evaluation.

It records HEAD, the working tree's status against HEAD and a content hash of every tracked
and untracked file before scoring, and compares after. Any difference is a
`ReadOnlyViolationError` (SPEC core rule 5): evalflow never edits the target, not even by
accident. HEAD comes from a fetch into evalflow's mirror, status and the file list from git on
the working tree with the mirror's config and a private index (`evalflow.repo.git.worktree`),
and contents are read without following any symlink (`evalflow.repo.worktree_fs`): checking the
repository runs none of its code and reads nothing outside it. The snapshot's bounds hold here
too (file count, path depth, bytes read); a file above `EVALFLOW_MAX_FILE_BYTES` is compared by
size and modification time, not hashed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from evalflow.errors import ReadOnlyViolationError
from evalflow.repo.git import git, require_repo, worktree
from evalflow.repo.limits import MAX_FILE_BYTES, MAX_READ_BYTES
from evalflow.repo.snapshot import check_listing
from evalflow.repo.worktree_fs import fingerprint


class RepoState(BaseModel):
    model_config = ConfigDict(frozen=True)

    head: str
    status: str
    content_sha256: str


def capture_state(repo: Path) -> RepoState:
    top = require_repo(repo)  # fetches the mirror, so its HEAD is the repository's HEAD now
    head = git(top, "rev-parse", "--verify", "HEAD^{commit}").decode().strip()
    with worktree(top, index_from=head) as run:
        listing = run("ls-files", "-z", "--cached", "--others", "--exclude-standard")
        raws = sorted(set(listing.split(b"\0")) - {b""})
        check_listing([raw.decode("utf-8", "replace") for raw in raws], str(top), head[:12])
        status = run("status", "--porcelain=v1", "-z", "--untracked-files=all")
    limit, total_limit = int(MAX_FILE_BYTES.value()), MAX_READ_BYTES.value()
    digest = hashlib.sha256()
    total = 0
    for raw in raws:
        digest.update(raw + b"\0")
        print_, read = fingerprint(top, raw.decode("utf-8", "surrogateescape"), limit)
        digest.update(print_)
        total += read
        if total > total_limit:
            raise MAX_READ_BYTES.exceeded(f"checking the repository reads {total} bytes", str(top))
    return RepoState(
        head=head, status=status.decode("utf-8", "replace"), content_sha256=digest.hexdigest()
    )


def changes(before: RepoState, after: RepoState) -> list[str]:
    """What differs between two states, in words (empty when identical)."""
    found = []
    if before.head != after.head:
        found.append(f"HEAD moved {before.head[:12]} → {after.head[:12]}")
    if before.status != after.status:
        found.append("git status changed")
    if before.content_sha256 != after.content_sha256:
        found.append("file contents changed")
    return found


def verify_unchanged(repo: Path, before: RepoState) -> RepoState:
    """Raise when the repository differs from `before`; return the state after."""
    after = capture_state(repo)
    found = changes(before, after)
    if found:
        raise ReadOnlyViolationError(
            f"the evaluated repository changed during evaluation: {'; '.join(found)}",
            where=str(repo),
            fix="revert the change and score the original (SPEC core rule 5)",
        )
    return after
