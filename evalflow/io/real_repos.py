"""Safe local copies of the real-world validation repositories (docs/validity.md).

Owns one thing: turning a vendored git bundle (`data/real_repos/<name>/<name>.bundle`) or a
fetched mirror (a bare git directory) into a git repository evalflow can score, without ever
trusting the source. The source is hostile: its config, hooks and attributes must not act, and
nothing of it is executed. So every clone runs with the system and global git config disabled,
hooks pointed at an empty path, `--no-local` (objects are copied, never hard-linked to the
source) and `--no-checkout` (no file of the repository is written to disk; evalflow reads
commits through git objects only). The pinned commit must be present, or the copy is refused.

    python -m evalflow.io.real_repos            # unpack every vendored bundle (idempotent)
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from evalflow.errors import EvalflowError, InputError
from evalflow.repo.git import scrubbed_env

DATA_DIR = Path(__file__).resolve().parents[2] / "data" / "real_repos"
# Vendored bundles and the commit each must contain (the newest one the benchmarks use).
VENDORED: dict[str, str] = {"hello_spec_kit": "3f8dc1a6f2bdabda2a109071c94a637f2c24de3f"}
_GIT_TIMEOUT_S = 300


def _safe_env() -> dict[str, str]:
    # No system or user config can inject hooks, filters, fsmonitor or credential helpers.
    return scrubbed_env(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "LC_ALL": "C",
        }
    )


def _run_git(*args: str, where: str, env: dict[str, str] | None = None) -> str:
    try:
        done = subprocess.run(
            ["git", "-c", "core.hooksPath=/dev/null", *args],
            capture_output=True,
            env={**_safe_env(), **(env or {})},
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError as exc:
        raise InputError("git is not installed", fix="install git and retry") from exc
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InputError(
            f"git {args[0]} failed: {lines[-1] if lines else 'exit ' + str(done.returncode)}",
            where=where,
        )
    return _text(done.stdout)


def _text(out: bytes) -> str:
    return out.decode("utf-8", "replace").strip()


def has_commit(repo: Path, sha: str) -> bool:
    """Whether `repo` (a clone made here) holds commit `sha`."""
    try:
        _run_git("-C", str(repo), "cat-file", "-e", f"{sha}^{{commit}}", where=str(repo))
    except InputError:
        return False
    return True


def safe_clone(source: Path, dest: Path, *, pin: str) -> Path:
    """Clone a bundle or bare mirror at `source` into `dest` safely (see the module docstring).

    Idempotent: an existing `dest` that holds `pin` is reused. The clone is built in a temporary
    sibling and renamed into place, so an interrupted run never leaves a half clone behind.
    """
    if dest.exists() and has_commit(dest, pin):
        return dest
    if not source.exists():
        raise InputError(
            "real repository source not found",
            where=str(source),
            fix="fetch the repository (see its fetch.md) or restore the vendored bundle",
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        target = staging / "repo"
        _run_git(
            "clone",
            "--quiet",
            "--no-local",
            "--no-checkout",
            "--no-hardlinks",
            str(source),
            str(target),
            where=str(source),
        )
        if not has_commit(target, pin):
            raise InputError(
                f"pinned commit {pin} is not in the repository",
                where=str(source),
                fix="fetch the repository again, or update the pinned commit in fetch.md",
            )
        if dest.exists():
            shutil.rmtree(dest)
        target.rename(dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest


# Fixed identity and dates: a derived repository's commits get the same SHAs on every machine.
_DERIVED_ENV = {
    "GIT_AUTHOR_NAME": "evalflow",
    "GIT_AUTHOR_EMAIL": "evalflow@localhost",
    "GIT_COMMITTER_NAME": "evalflow",
    "GIT_COMMITTER_EMAIL": "evalflow@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}


def _inside_only(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    # The `data` filter, except that an entry it refuses (a link out of the tree, a device) is
    # left out instead of aborting the copy: evalflow never follows such a link anyway.
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        return None


def derived_clone(source: Path, dest: Path, *, commits: tuple[str, ...], paths: tuple[str, ...]):
    """A repository holding only `paths` (git pathspecs) of each of `commits`, one commit each.

    For a fetched mirror that lacks some blobs (the fetch tool leaves out its largest files, e.g.
    a committed `node_modules/`), a plain clone fails; the files a benchmark needs are still
    there. `git archive` reads exactly the pathspecs' blobs; the tar is unpacked through the
    `data` filter (an absolute path, a link out of the tree or a device is left out) and
    committed with a fixed identity and date, so the derived SHAs are the same everywhere.
    Returns `dest` and the derived commit of each source commit, in order.
    """
    if not source.exists():
        raise InputError(
            "real repository source not found",
            where=str(source),
            fix="fetch the repository (see its fetch.md)",
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        repo, tree = staging / "repo", staging / "tree"
        _run_git("init", "--quiet", str(repo), where=str(dest))
        derived: list[str] = []
        for commit in commits:
            archive = subprocess.run(
                ["git", "--git-dir", str(source), "archive", "--format=tar", commit, "--", *paths],
                capture_output=True,
                env=_safe_env(),
                timeout=_GIT_TIMEOUT_S,
                check=False,
            )
            if archive.returncode != 0:
                raise InputError(
                    f"git archive of {commit} failed: {_text(archive.stderr)[-200:]}",
                    where=str(source),
                )
            shutil.rmtree(tree, ignore_errors=True)
            tree.mkdir()
            with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
                tar.extractall(tree, filter=_inside_only)
            work = ("--git-dir", str(repo / ".git"), "--work-tree", str(tree))
            # An empty index first: every file is hashed again (stat data of a re-extracted file
            # can equal the previous commit's and hide a same-size change).
            _run_git(*work, "read-tree", "--empty", where=str(dest))
            _run_git(*work, "add", "--all", ".", where=str(dest))
            _run_git(
                *work,
                "commit",
                "--quiet",
                "--allow-empty",
                "-m",
                commit,
                where=str(dest),
                env=_DERIVED_ENV,
            )
            derived.append(
                _run_git("--git-dir", str(repo / ".git"), "rev-parse", "HEAD", where=str(dest))
            )
        if dest.exists():
            shutil.rmtree(dest)
        repo.rename(dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest, derived


def vendored_checkout(name: str) -> Path:
    """The scoreable clone of vendored bundle `name`: `data/real_repos/<name>/checkout`."""
    if name not in VENDORED:
        raise InputError(
            f"unknown vendored repository {name!r}",
            fix=f"one of: {', '.join(sorted(VENDORED))}",
        )
    folder = DATA_DIR / name
    return safe_clone(folder / f"{name}.bundle", folder / "checkout", pin=VENDORED[name])


def main() -> int:
    try:
        for name in sorted(VENDORED):
            print(f"{name}: {vendored_checkout(name)}")
    except EvalflowError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
