"""Builders of hostile repositories: each function adds one attack and returns what it armed.

An attack is a program the repository asks git (or a gate) to run. Every program is a shell
script that, if it ever runs, writes ``<markers>/<name>`` (with the environment it saw, so a
leaked secret is visible) — a test proves containment by finding no marker at all.

Attacks that live in the tree (``.gitattributes``) must be committed, so they are text to put
in the commit (`HOSTILE_ATTRIBUTES`); attacks in ``.git`` are armed on a built repository
(`arm_config`, `arm_hooks`, `arm_all`). Arming never changes a commit, so a hostile repository
and its clean twin built from the same sources have the same SHAs and must score the same.
"""

from __future__ import annotations

import shlex
import shutil
import stat
import subprocess
from contextlib import suppress
from pathlib import Path

from evalflow.repo.git import run_bounded

# Committed in the tree: every path goes through filter "x" and every .py diffs through "x".
HOSTILE_ATTRIBUTES = "* filter=x\n*.py diff=x\n"

# Config keys whose value git runs as a program, one marker name each.
PROGRAM_KEYS = {
    "core.fsmonitor": "fsmonitor",
    "core.pager": "pager",
    "core.editor": "editor",
    "core.sshCommand": "ssh",
    "core.askPass": "askpass",
    "core.alternateRefsCommand": "alternate-refs",
    "filter.x.clean": "filter-clean",
    "filter.x.smudge": "filter-smudge",
    "filter.x.process": "filter-process",
    "diff.external": "diff-external",
    "diff.x.textconv": "textconv",
    "diff.x.command": "diff-command",
    "merge.x.driver": "merge-driver",
    "credential.helper": "credential",
    "gpg.program": "gpg",
    "sequence.editor": "sequence-editor",
    "uploadpack.packObjectsHook": "pack-objects-hook",
    "pager.diff": "pager-diff",
    "pager.status": "pager-status",
}
# Keys set through an included file (include.path), so includes are attacked on their own.
INCLUDED_KEYS = {"core.fsmonitor": "included-fsmonitor", "diff.external": "included-diff"}
HOOKS = (
    "post-checkout",
    "post-index-change",
    "reference-transaction",
    "pre-auto-gc",
    "post-merge",
    "pre-commit",
    "fsmonitor-watchman",
    "push-to-checkout",
    "post-rewrite",
)


_NAIVE_ENV = {
    "PATH": "/usr/bin:/bin",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t.invalid",
}
# A hostile filter-process never answers, so git waits on it forever: every git child a test
# starts is bounded, and its whole process group killed, so a hang fails in seconds.
NAIVE_TIMEOUT_S = 10


def _git(repo: Path, *args: str) -> None:
    done = run_bounded(
        ["git", "-C", str(repo), *args], env=_NAIVE_ENV, cwd=repo, timeout_s=NAIVE_TIMEOUT_S
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {args[0]} failed: {done.stderr.decode(errors='replace')}")


def naive_git(repo: Path, *args: str) -> bytes:
    """Run git inside `repo` as a user would (its config honoured); a hang is cut short.

    The control of an attack: the markers it leaves (or the output) prove the attack is live
    outside evalflow.
    """
    # The filter-process attack blocks git; its marker is already written when it times out.
    with suppress(subprocess.TimeoutExpired):
        return run_bounded(
            ["git", "-C", str(repo), *args], env=_NAIVE_ENV, cwd=repo, timeout_s=NAIVE_TIMEOUT_S
        ).stdout
    return b""


def marker_script(path: Path, markers: Path, name: str) -> Path:
    """An executable that, when run, records that it ran and the environment it saw."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "#!/bin/sh\n"
        f"mkdir -p '{markers}'\n"
        f"env > '{markers}/{name}'\n"
        # Pass data through, so a filter or pager that ran would also "work".
        "cat 2>/dev/null\n"
        "exit 0\n"
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def arm_config(repo: Path, markers: Path, keys: dict[str, str] | None = None) -> list[str]:
    """Set each program-valued config key of the repository's ``.git/config`` to a marker."""
    armed = []
    for key, name in (keys or PROGRAM_KEYS).items():
        script = marker_script(repo / ".git" / "evil" / f"{name}.sh", markers, name)
        _git(repo, "config", key, str(script))
        armed.append(name)
    return armed


def arm_include(repo: Path, markers: Path) -> list[str]:
    """``include.path`` and ``includeIf.gitdir:`` pulling in a file that sets more programs."""
    included = repo / ".git" / "evil" / "included.config"
    included.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for key, name in INCLUDED_KEYS.items():
        script = marker_script(repo / ".git" / "evil" / f"{name}.sh", markers, name)
        section, _, option = key.rpartition(".")
        lines.append(f"[{section}]\n\t{option} = {script}\n")
    included.write_text("".join(lines))
    _git(repo, "config", "include.path", str(included))
    _git(repo, "config", "includeIf.gitdir:/.path", str(included))
    return list(INCLUDED_KEYS.values())


def arm_hooks(repo: Path, markers: Path) -> list[str]:
    """Hooks in ``.git/hooks`` and in a ``core.hooksPath`` directory."""
    other = repo / ".git" / "evil-hooks"
    for hook in HOOKS:
        marker_script(repo / ".git" / "hooks" / hook, markers, f"hook-{hook}")
        marker_script(other / hook, markers, f"hookspath-{hook}")
    _git(repo, "config", "core.hooksPath", str(other))
    return [f"hook-{h}" for h in HOOKS] + [f"hookspath-{h}" for h in HOOKS]


def arm_all(repo: Path, markers: Path) -> list[str]:
    """Every git attack above on one repository."""
    return arm_config(repo, markers) + arm_include(repo, markers) + arm_hooks(repo, markers)


def fired(markers: Path) -> list[str]:
    """The attacks whose program ran (empty when everything was contained)."""
    return sorted(p.name for p in markers.iterdir()) if markers.is_dir() else []


# --- hostile gate commands (run inside the gate sandbox) ----------------------------------

ESCAPE_MARKER = "evalflow-escaped"


def escape_gate(targets: dict[str, Path]) -> str:
    """A gate command that tries to create ``<target>/evalflow-escaped-<name>`` in each target.

    It prints ``wrote <name>`` for each write that succeeded and always exits 0, so a test can
    assert on the host side that nothing appeared, and on the gate side which writes worked.
    """
    tries = [
        f"(: > '{path}/{ESCAPE_MARKER}-{name}') 2>/dev/null && echo 'wrote {name}'"
        for name, path in targets.items()
    ]
    return "; ".join([*tries, "exit 0"])


def fork_bomb(count: int, tag: int) -> str:
    """Start `count` background ``sleep <tag>`` processes (the tag lets a test find them)."""
    return f"i=0; while [ $i -lt {count} ]; do sleep {tag} & i=$((i + 1)); done; wait"


def fill_disk(path: str, mib: int) -> str:
    """Write `mib` MiB of zeros to `path` (``$TMPDIR/…``: the gate's tmpfs)."""
    return f"dd if=/dev/zero of={path} bs=1M count={mib} 2>&1; echo dd-exit=$?; exit 1"


def connect_gate(port: int) -> str:
    """Try a TCP connection to 127.0.0.1:`port` and send a marker; print what happened."""
    script = (
        "import socket\n"
        "try:\n"
        f"    s = socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
        "    s.sendall(b'evalflow-escaped')\n"
        "    print('connected')\n"
        "except OSError as exc:\n"
        "    print('blocked', exc)\n"
    )
    return f"python3 -c {shlex.quote(script)}"


def host_socket_gate(port: int, unix_path: str, abstract_name: str) -> str:
    """Connect to a host service on TCP 127.0.0.1, a Unix socket path and an abstract Unix
    socket, directly and (TCP) through the registry relay's CONNECT; print what happened."""
    script = (
        "import socket\n"
        "def attempt(name, family, address, request=b''):\n"
        "    try:\n"
        "        s = socket.socket(family)\n"
        "        s.settimeout(3)\n"
        "        s.connect(address)\n"
        "        s.sendall(request or b'evalflow-escaped')\n"
        "        answer = s.recv(200) if request else b''\n"
        "        print(name, 'refused' if b' 403 ' in answer else 'connected')\n"
        "    except OSError as exc:\n"
        "        print(name, 'blocked', exc)\n"
        f"attempt('tcp', socket.AF_INET, ('127.0.0.1', {port}))\n"
        f"attempt('unix', socket.AF_UNIX, {unix_path!r})\n"
        f"attempt('abstract', socket.AF_UNIX, '\\0' + {abstract_name!r})\n"
        "attempt('relay', socket.AF_INET, ('127.0.0.1', 3128),\n"
        f"        b'CONNECT 127.0.0.1:{port} HTTP/1.1\\r\\n\\r\\n')\n"
    )
    return f"python3 -c {shlex.quote(script)}"


def environ_gate() -> str:
    """Dump every environment this gate can read: its own and every visible /proc/*/environ."""
    return (
        "env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < \"$f\"; done 2>/dev/null; exit 0"
    )


# --- another repository inside the evaluated one ------------------------------------------


def submodule_repo(root: Path, markers: Path, *, embedded: bool) -> Path:
    """A repository (tags base, head) whose head adds a populated submodule ``sub``.

    The submodule's own config defines ``filter.x.clean`` (a marker) and its committed
    ``.gitattributes`` routes every file through it; a file is left stat-dirty, so any git that
    checks the submodule for changes runs the filter. `embedded`: ``sub/.git`` is a directory
    (a clone in place); otherwise a gitfile into ``.git/modules/sub`` (``git submodule add``).
    """
    source = root / "sub-src"
    source.mkdir(parents=True)
    _git(source, "init", "-q")
    (source / "f.txt").write_text("one\n")
    (source / ".gitattributes").write_text("* filter=x\n")
    _git(source, "add", ".")
    _git(source, "commit", "-qm", "sub")
    repo = root / "super"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "app.py").write_text("x = 1\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    _git(repo, "tag", "base")
    if embedded:
        _git(repo, "clone", "-q", str(source), "sub")
        _git(repo, "add", "sub")
    else:
        _git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "sub")
    _git(repo, "commit", "-qm", "head")
    _git(repo, "tag", "head")
    script = marker_script(root / "evil" / "sub-filter.sh", markers, "submodule-filter")
    _git(repo / "sub", "config", "filter.x.clean", str(script))
    (repo / "sub" / "f.txt").write_text("two\n")  # dirty, so a status must clean it
    return repo


FOREIGN_SECRET = "another-project-secret-6d1f"
FOREIGN_VECTORS = ("gitfile", "git-symlink", "alternates", "commondir", "objects-symlink")


def foreign_repo(root: Path, vector: str) -> tuple[Path, str]:
    """A repository that reads another one's objects through `vector`, and the revision under
    which plain git shows that other repository's ``secret.txt``."""
    other = root / "other"
    other.mkdir(parents=True)
    _git(other, "init", "-q", "--initial-branch=main")
    (other / "secret.txt").write_text(FOREIGN_SECRET + "\n")
    _git(other, "add", ".")
    _git(other, "commit", "-qm", "other")
    repo = root / "hostile"
    repo.mkdir()
    if vector == "gitfile":
        (repo / ".git").write_text(f"gitdir: {other / '.git'}\n")
        return repo, "HEAD"
    if vector == "git-symlink":
        (repo / ".git").symlink_to(other / ".git")
        return repo, "HEAD"
    if vector == "commondir":
        (repo / ".git").mkdir()
        (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        (repo / ".git" / "commondir").write_text(f"{other / '.git'}\n")
        return repo, "HEAD"
    _git(repo, "init", "-q", "--initial-branch=main")
    (repo / "app.py").write_text("x = 1\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "own")
    stolen = (other / ".git" / "refs" / "heads" / "main").read_text()
    (repo / ".git" / "refs" / "heads" / "stolen").write_text(stolen)
    objects = repo / ".git" / "objects"
    if vector == "alternates":
        (objects / "info" / "alternates").write_text(f"{other / '.git' / 'objects'}\n")
    else:  # objects-symlink: this repository's objects are the other's (own ones copied in)
        _git(other, "fetch", "-q", str(repo), "main:own")
        shutil.rmtree(objects)
        objects.symlink_to(other / ".git" / "objects")
    return repo, "stolen"
