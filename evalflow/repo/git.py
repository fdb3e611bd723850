"""Read-only git access to an evaluated repository.

Everything here reads through git objects (`rev-parse`, `diff`, `ls-tree`, `cat-file`) so the
working tree is never touched, and every git call runs with optional locks disabled so even
`git status` cannot rewrite the index (SPEC core rule 5). Child processes get a scrubbed
environment: no API keys or tokens ever reach them.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from evalflow.errors import InputError

_SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")
_GIT_TIMEOUT_S = 120


def scrubbed_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The parent environment without anything that looks like a secret."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not any(marker in name.upper() for marker in _SECRET_MARKERS)
    }
    env.update(extra or {})
    return env


def git(repo: Path, *args: str, input_bytes: bytes | None = None) -> bytes:
    """Run one git command in `repo`; raise `InputError` with git's own message on failure."""
    env = scrubbed_env({"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args],
            input=input_bytes,
            capture_output=True,
            env=env,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError as exc:
        raise InputError("git is not installed", fix="install git and retry") from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InputError(
            f"git {args[0]} failed: {message[-1] if message else 'exit ' + str(done.returncode)}",
            where=str(repo),
        )
    return done.stdout


def require_repo(repo: Path) -> Path:
    """The repository's top level, or a clear error when `repo` is missing or not a git repo."""
    if not repo.exists():
        raise InputError(
            "repository not found", where=str(repo), fix="check the manifest's 'repo' path"
        )
    if not repo.is_dir():
        raise InputError("repository path is not a directory", where=str(repo))
    try:
        top = git(repo, "rev-parse", "--show-toplevel").decode().strip()
    except InputError as exc:
        raise InputError(
            "not a git repository",
            where=str(repo),
            fix="point 'repo' at a git checkout (or use 'source' for a plain tree)",
        ) from exc
    return Path(top)


def resolve_commit(repo: Path, rev: str) -> str:
    """Full SHA of `rev`, or a one-line error naming the unknown revision."""
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").decode().strip()
    except InputError as exc:
        raise InputError(
            f"unknown commit {rev!r}",
            where=str(repo),
            fix="check the manifest's base/head (run `git log --oneline` in the repository)",
        ) from exc
