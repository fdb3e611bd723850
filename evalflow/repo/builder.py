"""Deterministic builder: plain source trees → a git repository whose SHAs never change.

A source directory holds `build.yaml`:

    commits:
      - {tree: ../base, message: "Starting point", tag: base}
      - {tree: tree, message: "speckit: implement the PRD", tag: head, delete: [old.py]}

Each commit overlays its tree on the previous one (and deletes the listed paths). Author,
committer, dates, file modes and line endings are fixed, so the same sources always give the
same commit SHAs — the demo's results are reproducible byte for byte. The built repository
lives under the warehouse; a stamp with the sources' hash makes rebuilding idempotent.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from evalflow.domain.yaml_text import load_yaml
from evalflow.errors import InputError
from evalflow.repo.git import child_timeout, run_bounded, scrubbed_env
from evalflow.repo.limits import budget_spent

_EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z: every built commit is dated from here
_STAMP = ".evalflow-build"


class _Commit(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tree: str
    message: str
    tag: str
    delete: list[str] = []


class BuildSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    commits: list[_Commit]


def _load_spec(source: Path) -> BuildSpec:
    path = source / "build.yaml"
    if not path.is_file():
        raise InputError(
            "no build.yaml in the source tree", where=str(source), fix="add build.yaml (see docs)"
        )
    try:
        return BuildSpec.model_validate(load_yaml(path.read_text(encoding="utf-8")))
    except (yaml.YAMLError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        raise InputError(f"invalid build.yaml: {first}", where=str(path)) from exc


def _tree_files(tree: Path) -> list[Path]:
    return sorted(p for p in tree.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def sources_digest(source: Path) -> str:
    """Hash of build.yaml and every file of every tree it names."""
    spec = _load_spec(source)
    digest = hashlib.sha256((source / "build.yaml").read_bytes())
    for commit in spec.commits:
        tree = (source / commit.tree).resolve()
        for path in _tree_files(tree):
            digest.update(path.relative_to(tree).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _git(dest: Path, *args: str, when: int) -> None:
    stamp = f"{when} +0000"
    env = scrubbed_env(
        {
            "GIT_AUTHOR_NAME": "evalflow demo",
            "GIT_AUTHOR_EMAIL": "demo@evalflow.invalid",
            "GIT_COMMITTER_NAME": "evalflow demo",
            "GIT_COMMITTER_EMAIL": "demo@evalflow.invalid",
            "GIT_AUTHOR_DATE": stamp,
            "GIT_COMMITTER_DATE": stamp,
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
    )
    timeout_s, by_budget = child_timeout(str(dest))
    try:
        done = run_bounded(
            [
                "git",
                "-c",
                "core.autocrlf=false",
                "-c",
                "commit.gpgsign=false",
                "-C",
                str(dest),
                *args,
            ],
            env=env,
            cwd=dest,
            timeout_s=timeout_s,
        )
    except subprocess.TimeoutExpired as exc:
        if by_budget:
            raise budget_spent(str(dest)) from exc
        raise InputError(
            f"git {args[0]} did not finish within {timeout_s:g} s while building the demo "
            "repository",
            where=str(dest),
            fix="raise EVALFLOW_GIT_TIMEOUT_S",
        ) from exc
    if done.returncode != 0:
        raise InputError(
            f"git {args[0]} failed while building the demo repository: "
            f"{done.stderr.decode(errors='replace').strip()}",
            where=str(dest),
        )


def build_repo(source: Path, dest: Path) -> Path:
    """Build (or reuse, when the sources are unchanged) the repository at `dest`."""
    spec = _load_spec(source)
    digest = sources_digest(source)
    stamp = dest / ".git" / _STAMP
    if stamp.is_file() and stamp.read_text() == digest:
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    _git(dest, "init", "--quiet", "--initial-branch=main", when=_EPOCH)
    for i, commit in enumerate(spec.commits):
        tree = (source / commit.tree).resolve()
        if not tree.is_dir():
            raise InputError("commit tree not found", where=str(tree), fix="fix build.yaml")
        for path in _tree_files(tree):
            target = dest / path.relative_to(tree)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes().replace(b"\r\n", b"\n"))
            target.chmod(0o644)
        for name in commit.delete:
            (dest / name).unlink(missing_ok=True)
        when = _EPOCH + 3600 * i
        _git(dest, "add", "--all", when=when)
        _git(dest, "commit", "--quiet", "--allow-empty", "-m", commit.message, when=when)
        _git(dest, "tag", commit.tag, when=when)
    stamp.write_text(digest)
    return dest
