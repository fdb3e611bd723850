"""The read-only guard: proves the evaluated repository is unchanged by an evaluation.

It records HEAD, `git status --porcelain` and a content hash of every tracked and untracked
file before scoring, and compares after. Any difference is a `ReadOnlyViolationError`
(SPEC core rule 5): evalflow never edits the target, not even by accident.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from evalflow.errors import ReadOnlyViolationError
from evalflow.repo.git import git


class RepoState(BaseModel):
    model_config = ConfigDict(frozen=True)

    head: str
    status: str
    content_sha256: str


def capture_state(repo: Path) -> RepoState:
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    status = git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all").decode(
        "utf-8", "replace"
    )
    digest = hashlib.sha256()
    listing = git(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for raw in sorted(set(listing.split(b"\0")) - {b""}):
        path = repo / raw.decode("utf-8", "replace")
        digest.update(raw + b"\0")
        if path.is_symlink():
            digest.update(b"link:" + str(path.readlink()).encode())
        elif path.is_file():
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        else:
            digest.update(b"missing")
    return RepoState(head=head, status=status, content_sha256=digest.hexdigest())


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
