"""Git on an untrusted repository, hardened in one place: evalflow never runs git inside it.

An evaluated repository was written by an AI agent, so its ``.git`` directory is hostile: its
config can name programs git runs (``core.fsmonitor``, ``filter.*``, ``diff.external``,
``diff.*.textconv``, ``core.pager``, hooks, ``include.path`` …). Git's own security boundary
(gitsecurityboundary(7), git-upload-pack(1) SECURITY) is that *cloning* an untrusted repository
with ``--no-local`` is safe — only upload-pack reads it, and upload-pack is designed to ignore
dangerous repository config and run no hooks — while most other commands must not run in an
untrusted ``.git``. So this module owns:

- **the mirror**: one evalflow-owned bare repository per evaluated repository path
  (``git init --bare`` with an empty template, config written by evalflow, then
  ``git fetch --prune <repo> +refs/*:refs/* +HEAD:refs/evalflow/HEAD``, a ``--no-local``
  transfer through upload-pack). Every read — ``rev-parse``, ``ls-tree``, ``cat-file``, diffs,
  the gates' clones — runs with ``--git-dir=<mirror>``. The mirror is refreshed only when
  ``git ls-remote`` (upload-pack again) shows the repository's refs or HEAD moved since its
  last fetch. Mirrors live in the host's mirror directory (`mirror_dir`), kept between runs
  and shared by every warehouse and process of the user (made and fetched under a lock per
  mirror, evicted once their repository is gone), or with ``EVALFLOW_MIRROR_DIR=off`` in the
  process's workspace.
- **the working tree** (WORKTREE mode, the guard): ``git --git-dir=<mirror> --work-tree=<repo>``
  with ``GIT_INDEX_FILE`` a throw-away index built from a commit by ``read-tree``, so the
  repository's own index, config, fsmonitor and hooks are never read; ``.gitattributes`` filters
  name drivers that evalflow's config does not define, so none runs.
- **the process**: every git child starts in an empty evalflow-owned directory (which is also
  ``HOME``), with an allow-listed environment (no secret can reach it), no system or global
  config, hooks and fsmonitor off on the command line, ``safe.bareRepository=explicit``, only
  the ``file`` transport, ``--no-ext-diff --no-textconv`` on every diff, and a timeout.

The workspace (empty home, temporary indexes, per-process mirrors, and through `scratch_dir`
the gates' sandboxes) is a per-process directory under the warehouse's work directory
(`use_work_root`; the system temp directory only for commands without a warehouse), locked
by its process while it lives and removed at exit — and, when a run was killed, by the next
run, which finds its lock free.
Callers pass the evaluated repository's path; none ever sees the mirror.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from multiprocessing import util as mp_util
from pathlib import Path
from typing import Any

from evalflow.errors import GitTimeoutError, InputError, LimitExceededError
from evalflow.repo.limits import GIT_TIMEOUT_S, budget_spent, remaining_s
from evalflow.repo.worktree_fs import read_regular

# After a kill, how long to wait for the pipes to close (a process that left the group may
# still hold them; evalflow does not wait on it).
_REAP_S = 5
# The only parent variables a child process may see; everything else (API keys, passwords,
# DATABASE_URL, GIT_DIR, GIT_CONFIG_PARAMETERS …) is dropped by not being on the list.
_PASSED_NAMES = frozenset({"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "USER", "LOGNAME"})
_GIT_PASSED_NAMES = frozenset({"PATH", "LANG", "LANGUAGE", "TZ"})
_PASSED_PREFIXES = ("LC_",)
# Command-line config is git's "protected" scope: it wins over anything a config file says.
_HARDENING = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "core.untrackedCache=false",
    "-c", "core.pager=cat",
    "-c", "safe.bareRepository=explicit",
    "-c", "protocol.allow=never",
    "-c", "protocol.file.allow=always",
    "-c", "submodule.recurse=false",
    "-c", "diff.ignoreSubmodules=all",
    "-c", "status.submoduleSummary=false",
    "-c", "fetch.recurseSubmodules=false",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
)  # fmt: skip
# Written into every mirror's own config, so even a git run by hand on it is inert.
_MIRROR_CONFIG = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.logAllRefUpdates", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("fetch.writeCommitGraph", "false"),
)
_HEAD_REF = "refs/evalflow/HEAD"
_MAX_EXCLUDE_BYTES = 1_000_000


def _passed(name: str, names: frozenset[str]) -> bool:
    return name in names or name.startswith(_PASSED_PREFIXES)


def scrubbed_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The allow-listed part of the parent environment (PATH, HOME, LANG/LC_*, TZ, TMPDIR, user).

    An allow-list, not a deny-list by name: a secret under any name never reaches a child.
    """
    env = {name: value for name, value in os.environ.items() if _passed(name, _PASSED_NAMES)}
    env.update(extra or {})
    return env


@dataclass
class _Mirror:
    path: Path
    advert: bytes = b""
    shared: bool = False  # in the host's mirror directory (`mirror_dir`), not the workspace


@dataclass
class _Workspace:
    """evalflow's private git state for this process (a forked child makes its own)."""

    pid: int
    root: Path
    held: int  # the descriptor holding the workspace's lock
    mirrors: dict[Path, _Mirror] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)
    # Shared locks on the host mirrors this process uses (`_open_mirror`), held until it ends.
    in_use: dict[Path, int] = field(default_factory=dict)
    # What is read from commits (immutable) once per workspace: see `commit_memo`.
    memo: dict[tuple[str, ...], Any] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def template(self) -> Path:
        return self.root / "template"


# One workspace per (process, work root): a process that scores into two warehouses (tests)
# keeps each one's mirrors where that warehouse is.
_STATE: dict[tuple[int, Path], _Workspace] = {}
_STATE_LOCK = threading.Lock()
_WORK_ROOT: list[Path] = []
_PREFIX = "evalflow-git-"
_LOCK = "lock"


def use_work_root(path: Path) -> None:
    """Keep this process's git workspaces under `path` (the warehouse's work directory) from
    now on, not in the system temp directory: a killed run's mirrors then stay with the
    warehouse, where the next run finds and removes them."""
    with _STATE_LOCK:
        _WORK_ROOT[:] = [Path(path).resolve() / "tmp"]


def remove_tree(path: Path) -> None:
    """Delete `path` even when a gate left unwritable directories in it."""
    try:
        shutil.rmtree(path)
    except FileNotFoundError:
        return
    except OSError:
        for current, dirs, _ in os.walk(path):
            for name in dirs:
                with suppress(OSError):
                    (Path(current) / name).chmod(0o700)
        shutil.rmtree(path, ignore_errors=True)


def _remove_workspace(ws: _Workspace) -> None:
    if os.getpid() == ws.pid:
        remove_tree(ws.root)


def _orphaned(entry: Path) -> bool:
    """Whether the workspace at `entry` belongs to no running process.

    Its owner holds an exclusive lock on `entry/lock` for its whole life (forked children
    share it), so a lock that can be taken is an orphan's — whatever its process id, which
    another machine sharing the warehouse, or a reused pid, would make meaningless. A
    workspace without a lock file yet is one being made: orphaned only if its process is gone.
    """
    try:
        fd = os.open(entry / _LOCK, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        pid = entry.name.removeprefix(_PREFIX).split("-", 1)[0]
        if not pid.isdigit():
            return False
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False  # alive, another user's
        return False
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # held: its process runs
    finally:
        os.close(fd)
    return True


def _remove_orphans(parent: Path) -> None:
    """Remove the workspaces of evalflow processes that were killed (atexit never ran)."""
    for entry in parent.glob(f"{_PREFIX}*-*"):
        if entry.is_dir() and not entry.is_symlink() and _orphaned(entry):
            remove_tree(entry)


def _workspace() -> _Workspace:
    with _STATE_LOCK:
        parent = _WORK_ROOT[0] if _WORK_ROOT else Path(tempfile.gettempdir())
        key = (os.getpid(), parent)
        ws = _STATE.get(key)
        if ws is None or not ws.root.is_dir():  # a test may have removed its warehouse
            parent.mkdir(parents=True, exist_ok=True)
            # The system temp directory too: where versions before the warehouse kept them.
            for place in {parent, Path(tempfile.gettempdir())}:
                _remove_orphans(place)
            root = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-", dir=parent))
            # Held until the process ends, however it ends (or throwaway_workspace ends it).
            lock = os.open(root / _LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            fcntl.flock(lock, fcntl.LOCK_EX)
            ws = _Workspace(os.getpid(), root, lock)
            for sub in ("home", "template", "mirrors", "index"):
                (ws.root / sub).mkdir(mode=0o700)
            atexit.register(_remove_workspace, ws)
            # A multiprocessing worker leaves through os._exit, which skips atexit.
            mp_util.Finalize(None, _remove_workspace, args=(ws,), exitpriority=0)
            _STATE[key] = ws
        return ws


_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def is_sha(rev: str) -> bool:
    """Whether `rev` is a full object name (SHA-1 or SHA-256), not a ref that can move."""
    return _SHA.fullmatch(rev) is not None


def commit_memo(key: tuple[str, ...], compute: Callable[[], Any], *, keep: int = 8) -> Any:
    """`compute()`, once per `key` and workspace: for what depends only on commits (a diff
    between two SHAs, a tree's listing, a snapshot), which every step of a run reads again.

    `key` names the repository and full SHAs (never a ref or the working tree). The `keep`
    newest entries of the key's kind (``key[0]``) stay: a long-lived process holds a bounded
    amount."""
    ws = _workspace()
    with ws.lock:
        if key in ws.memo:
            ws.memo[key] = ws.memo.pop(key)  # the newest again
            return ws.memo[key]
    value = compute()
    with ws.lock:
        ws.memo[key] = value
        kind = [k for k in ws.memo if k[0] == key[0]]
        for old in kind[: max(0, len(kind) - keep)]:
            del ws.memo[old]
    return value


def scratch_dir(name: str) -> Path:
    """The folder `name` of this process's workspace, for throw-away state beside git's (the
    gates' sandboxes and clones): under the warehouse's work directory once `use_work_root`
    ran, removed at exit and, after a killed run, by the next run with the rest."""
    path = _workspace().root / name
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def _terminated(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


@contextmanager
def throwaway_workspace() -> Iterator[None]:
    """Remove this process's git workspaces when the block ends, however it ends: for the
    commands that read a repository without a warehouse (`init`, `baseline draft`, `baseline
    lint --repo`, `probe test --repo`), whose workspace lies in the system temp directory.
    An exception or Ctrl-C reaches the ``finally``; SIGTERM, which would skip it and the
    ``atexit`` removal alike, is turned into ``SystemExit(143)`` while the block runs (when
    nobody else handles it). Also a decorator (`contextmanager` gives that)."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main else None
    if previous == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminated)
    try:
        yield
    finally:
        if previous == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        with _STATE_LOCK:
            for key, ws in list(_STATE.items()):
                if key[0] == os.getpid():
                    del _STATE[key]
                    remove_tree(ws.root)
                    os.close(ws.held)
                    for fd in ws.in_use.values():
                        os.close(fd)


def git_env() -> dict[str, str]:
    """The whole environment of every git child: allow-listed names plus git's hardening."""
    ws = _workspace()
    env = {name: value for name, value in os.environ.items() if _passed(name, _GIT_PASSED_NAMES)}
    env.update(
        {
            "HOME": str(ws.home),
            "XDG_CONFIG_HOME": str(ws.home / ".config"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_NO_LAZY_FETCH": "1",
            # Repository discovery never climbs out of the empty home to a planted /tmp/.git.
            "GIT_CEILING_DIRECTORIES": str(ws.root),
            "LC_ALL": "C",
        }
    )
    return env


def run_bounded(
    argv: Sequence[str],
    *,
    env: dict[str, str],
    cwd: Path,
    timeout_s: float,
    input_bytes: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run `argv` in a process group of its own, killed as a whole on timeout or interrupt.

    ``subprocess.run`` kills only the direct child: a grandchild (a filter, a pager) holding
    the output pipe keeps ``communicate`` waiting forever. Raises ``TimeoutExpired``.
    """
    with subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE if input_bytes is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,
    ) as proc:
        try:
            out, err = proc.communicate(input_bytes, timeout=timeout_s)
        except BaseException:  # timeout, SIGTERM/SIGINT turned into an exception
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            with suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=_REAP_S)
            raise
    return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)


def git_timeout_s() -> float:
    """Seconds each git child may run: `EVALFLOW_GIT_TIMEOUT_S`, default 120."""
    return GIT_TIMEOUT_S.value()


def child_timeout(where: str) -> tuple[float, bool]:
    """Seconds the next git child may run, and whether the enclosing budget (not the
    per-child bound) set them; a spent budget raises its error naming the bound."""
    timeout_s = git_timeout_s()
    left = remaining_s()
    if left is None or left >= timeout_s:
        return timeout_s, False
    if left <= 0:
        raise budget_spent(where)
    return left, True


def _run(
    args: Sequence[str],
    *,
    where: Path,
    input_bytes: bytes | None = None,
    extra_env: dict[str, str] | None = None,
    ok_codes: tuple[int, ...] = (0,),
) -> bytes:
    """One hardened git process; `where` only names the repository in errors."""
    env = git_env()
    env.update(extra_env or {})
    timeout_s, by_budget = child_timeout(str(where))
    try:
        done = run_bounded(
            ["git", "--no-pager", *_HARDENING, *args],
            env=env,
            cwd=Path(env["HOME"]),
            timeout_s=timeout_s,
            input_bytes=input_bytes,
        )
    except FileNotFoundError as exc:
        raise InputError("git is not installed", fix="install git and retry") from exc
    except subprocess.TimeoutExpired as exc:
        if by_budget:
            raise budget_spent(str(where)) from exc
        raise GitTimeoutError(
            f"git {_verb(args)} did not finish within {timeout_s:g} s",
            where=str(where),
            fix=f"raise {GIT_TIMEOUT_S.env} if the repository is that large",
        ) from exc
    if done.returncode not in ok_codes:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InputError(
            f"git {_verb(args)} failed: "
            f"{message[-1] if message else 'exit ' + str(done.returncode)}",
            where=str(where),
        )
    return done.stdout


def _verb(args: Sequence[str]) -> str:
    return next((a for a in args if not a.startswith("-") and "=" not in a), "command")


def _toplevel(repo: Path) -> Path | None:
    """The nearest directory at or above `repo` holding a ``.git`` entry, found without git."""
    here = Path(os.path.realpath(repo))
    for candidate in (here, *here.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


# Entries of a ``.git`` directory that make git read another repository's objects or refs.
_FOREIGN_FILES = (
    ("commondir", "a 'commondir' file (a linked worktree) sharing another repository's data"),
    ("objects/info/alternates", "'objects/info/alternates' borrowing another repository's objects"),
    ("objects/info/http-alternates", "'objects/info/http-alternates' borrowing remote objects"),
)
# The .git entries upload-pack reads objects and refs from (the two directories walked whole):
# a symbolic link among them (a linked pack, ref or object directory) is another repository's.
_DATA = ("HEAD", "packed-refs", "shallow", "objects", "refs")
_FOREIGN_FIX = "score a standalone copy made with `git clone --no-local <repo> <copy>`"


def _refuse_foreign(top: Path) -> None:
    """Refuse a repository whose git data is (partly) another repository's.

    upload-pack follows a gitfile, a ``.git`` symlink, ``commondir`` and alternates, so the
    mirror would hold files of a repository the manifest never named (another project's
    secrets). Only a plain ``.git`` directory whose objects and refs are its own is read.
    """
    dot_git = top / ".git"
    mode = os.lstat(dot_git).st_mode
    if stat.S_ISLNK(mode):
        what = ".git is a symbolic link (to another repository's data)"
    elif stat.S_ISREG(mode):
        what = (
            ".git is a file pointing at another repository's data (a linked worktree or submodule)"
        )
    elif not stat.S_ISDIR(mode):
        what = ".git is not a directory"
    else:
        what = next(
            (
                f"the repository has {why}"
                for rel, why in _FOREIGN_FILES
                if os.path.lexists(dot_git / rel)
            ),
            "",
        ) or _linked_entry(dot_git)
    if what:
        raise InputError(what, where=str(top), fix=_FOREIGN_FIX)


def _linked_entry(dot_git: Path) -> str:
    """Why `dot_git` is refused for a symbolic link among its data entries ("" if none).

    ``scandir`` types entries without a stat each, so a repository of many loose objects is
    checked in one pass over its directories.
    """
    pending = [dot_git]
    while pending:
        here = pending.pop()
        try:
            entries = os.scandir(here)
        except FileNotFoundError:  # removed meanwhile (a `git gc` packing loose objects)
            continue
        with entries:
            for entry in entries:
                if here == dot_git and entry.name not in _DATA:
                    continue
                if entry.is_symlink():
                    rel = os.path.relpath(entry.path, dot_git)
                    return f"the repository's .git/{rel} is a symbolic link"
                if entry.is_dir():
                    pending.append(Path(entry.path))
    return ""


MIRROR_DIR_ENV = "EVALFLOW_MIRROR_DIR"
_OFF = "off"
# In a host mirror: written last when it is made (the repository it mirrors, for eviction) …
_READY = "evalflow-mirror"
# … and after every fetch: the repository's refs (`ls-remote`) the mirror now holds.
_ADVERT = "evalflow-advert"
_HOST_ROOTS: dict[tuple[int, Path], Path] = {}


def mirror_dir() -> Path | None:
    """The host's mirror directory: `EVALFLOW_MIRROR_DIR`, by default
    ``$XDG_CACHE_HOME/evalflow/mirrors`` (``~/.cache/evalflow/mirrors``); None when the
    variable is ``off`` (then each process keeps its own mirrors in its workspace)."""
    raw = os.environ.get(MIRROR_DIR_ENV, "").strip()
    if raw == _OFF:
        return None
    if raw:
        if not os.path.isabs(raw):
            raise InputError(
                f"{MIRROR_DIR_ENV}={raw!r} is not an absolute path",
                fix=f"give an absolute directory, or {MIRROR_DIR_ENV}=off",
            )
        return Path(raw)
    cache = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(cache) if os.path.isabs(cache) else Path.home() / ".cache"
    return base / "evalflow" / "mirrors"


def _host_root() -> Path | None:
    """`mirror_dir`, made private to this user and rid of mirrors whose repository is gone
    (once per process and directory)."""
    root = mirror_dir()
    if root is None:
        return None
    key = (os.getpid(), root)
    if key not in _HOST_ROOTS or not root.is_dir():  # removed while this process lives
        try:
            root.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            if os.environ.get(MIRROR_DIR_ENV, "").strip():
                raise InputError(
                    f"cannot make the mirror directory: {exc.strerror}",
                    where=str(root),
                    fix=f"set {MIRROR_DIR_ENV} to a writable directory, or to off",
                ) from exc
            return None  # no usable home (a service account): per-process mirrors
        st = os.stat(root)
        # A mirror's config is trusted (git runs with it): nobody else may write there.
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            raise InputError(
                "the mirror directory is writable by another user",
                where=str(root),
                fix=f"chmod 700 it, or set {MIRROR_DIR_ENV} to a directory of yours",
            )
        _evict_gone(root)
        _HOST_ROOTS[key] = root
    return root


def _lock_fd(path: Path, how: int) -> int | None:
    """An open descriptor of the lock file `path` holding `how`; None when ``LOCK_NB`` was
    asked and another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, how)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _evict_gone(root: Path) -> None:
    """Remove the host mirrors whose repository no longer exists and that no process uses
    (a process holds its mirror's ``.use`` lock shared while it lives). The lock files stay:
    removing one another process waits on would let two processes make the same mirror."""
    for ready in root.glob(f"*.git/{_READY}"):
        mirror = ready.parent
        try:
            source = ready.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if os.path.lexists(Path(source) / ".git"):
            continue
        fd = _lock_fd(root / f"{mirror.stem}.use", fcntl.LOCK_EX | fcntl.LOCK_NB)
        if fd is not None:
            try:
                remove_tree(mirror)
            finally:
                os.close(fd)


def _mirror_key(top: Path) -> str:
    return hashlib.sha256(str(top).encode()).hexdigest()[:20]


def _init_mirror(ws: _Workspace, top: Path, path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)  # what an `init` stopped by its bound left
    _run(["init", "--quiet", "--bare", f"--template={ws.template}", str(path)], where=top)
    for key, value in _MIRROR_CONFIG:
        _run([f"--git-dir={path}", "config", key, value], where=top)
    _run([f"--git-dir={path}", "symbolic-ref", "HEAD", _HEAD_REF], where=top)


def _open_mirror(ws: _Workspace, top: Path) -> _Mirror:
    """The mirror of `top` this process reads: the host's (made when missing; its ``.use``
    lock held shared until the process ends, so no eviction removes it meanwhile), or with
    `EVALFLOW_MIRROR_DIR=off` a fresh one in the workspace."""
    root = _host_root()
    key = _mirror_key(top)
    if root is None:
        path = ws.root / "mirrors" / f"{key}.git"
        _init_mirror(ws, top, path)
        return _Mirror(path)
    path = root / f"{key}.git"
    if path not in ws.in_use:
        fd = _lock_fd(root / f"{key}.use", fcntl.LOCK_SH)
        assert fd is not None  # a blocking lock
        ws.in_use[path] = fd
    with _sync_lock(root, key):
        if not (path / _READY).is_file():
            _init_mirror(ws, top, path)
            (path / _READY).write_text(str(top), encoding="utf-8")
    return _Mirror(path, shared=True)


@contextmanager
def _sync_lock(root: Path | None, key: str) -> Iterator[None]:
    """Held while a host mirror is made or fetched: one process at a time per mirror (the
    others wait, then find it fetched); readers need none, a fetch only adds objects."""
    if root is None:
        yield
        return
    fd = _lock_fd(root / f"{key}.lock", fcntl.LOCK_EX)
    try:
        yield
    finally:
        os.close(fd)  # type: ignore[arg-type]


def _copy_excludes(top: Path, mirror: Path) -> None:
    """The repository's ``info/exclude`` (ignore patterns: data, never code) into the mirror."""
    _, data = read_regular(top, ".git/info/exclude", _MAX_EXCLUDE_BYTES)
    target = mirror / "info" / "exclude"
    target.parent.mkdir(exist_ok=True)
    if not target.is_file() or target.read_bytes() != (data or b""):
        target.write_bytes(data or b"")


def _sync(top: Path) -> _Mirror:
    """The mirror of `top`, fetched so its refs and HEAD equal the repository's.

    `ls-remote` (upload-pack's advertisement, milliseconds) tells whether anything moved
    since the mirror's last fetch — by this process or, for a host mirror, any earlier run:
    an unchanged repository is never fetched again, a changed one fetches only new objects.
    """
    _refuse_foreign(top)
    ws = _workspace()
    with ws.lock:
        mirror = ws.mirrors.get(top) or _open_mirror(ws, top)
        ws.mirrors[top] = mirror
        with _sync_lock(mirror.path.parent if mirror.shared else None, mirror.path.stem):
            advert = _run([f"--git-dir={mirror.path}", "ls-remote", str(top)], where=top)
            stored = mirror.path / _ADVERT
            if mirror.shared and stored.is_file():
                mirror.advert = stored.read_bytes()
            if advert != mirror.advert:
                _fetch(top, mirror.path, advert)
                if mirror.shared:
                    stored.write_bytes(advert)
                mirror.advert = advert
            _copy_excludes(top, mirror.path)
        return mirror


def _fetch(top: Path, mirror: Path, advert: bytes) -> None:
    """Fetch every ref and HEAD of `top` (as `advert` lists them) into `mirror`, pruning."""
    has_head = any(line.endswith(b"\tHEAD") for line in advert.splitlines())
    refspecs = ["+refs/*:refs/*", *([f"+HEAD:{_HEAD_REF}"] if has_head else [])]
    if advert:
        _run(
            [
                f"--git-dir={mirror}",
                "fetch",
                "--quiet",
                "--prune",
                "--no-tags",
                "--no-recurse-submodules",
                "--no-write-fetch-head",
                str(top),
                *refspecs,
            ],
            where=top,
        )
    if not has_head:
        _run([f"--git-dir={mirror}", "update-ref", "-d", _HEAD_REF], where=top)


def _mirror(repo: Path) -> tuple[Path, _Mirror]:
    """The repository's top level and its mirror (synced once, when first used)."""
    top = _toplevel(repo)
    if top is None:
        raise InputError("not a git repository", where=str(repo))
    ws = _workspace()
    with ws.lock:
        mirror = ws.mirrors.get(top)
        return top, (mirror if mirror is not None and mirror.advert else _sync(top))


def git(repo: Path, *args: str, input_bytes: bytes | None = None) -> bytes:
    """Run one read-only git command against `repo`'s mirror (never inside `repo`).

    Raises `InputError` with git's own message on failure. Diffs always get
    ``--no-ext-diff --no-textconv``.
    """
    top, mirror = _mirror(repo)
    return _run([f"--git-dir={mirror.path}", *_diff_safe(args)], where=top, input_bytes=input_bytes)


def _diff_safe(args: Sequence[str]) -> list[str]:
    """Diffs and status never run a program and never look inside a submodule.

    A populated submodule is another repository with its own config (filters, fsmonitor …);
    git reads it whenever it checks the submodule for changes, and ``.gitmodules`` (in the
    hostile tree) can lower ``diff.ignoreSubmodules``, so only the command-line option is
    final. Gitlinks are therefore opaque: never part of a diff or a status.
    """
    if args and args[0] == "diff":
        return ["diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", *args[1:]]
    if args and args[0] == "status":
        return ["status", "--ignore-submodules=all", *args[1:]]
    return list(args)


def _opaque_gitlinks(mirror: Path, top: Path, env: dict[str, str]) -> None:
    """Mark every gitlink of the scratch index skip-worktree, so git never looks inside it.

    Comparing a gitlink with the working tree resolves the submodule's HEAD, which opens the
    submodule's own repository and config even under ``--ignore-submodules=all``; a
    skip-worktree entry is taken as unchanged without touching the working tree.
    """
    staged = _run([f"--git-dir={mirror}", "ls-files", "-z", "--stage"], where=top, extra_env=env)
    links = [
        entry.split(b"\t", 1)[1] for entry in staged.split(b"\0") if entry.startswith(b"160000 ")
    ]
    if links:
        _run(
            [
                f"--git-dir={mirror}",
                f"--work-tree={top}",
                "update-index",
                "--skip-worktree",
                "-z",
                "--stdin",
            ],
            where=top,
            extra_env=env,
            input_bytes=b"".join(link + b"\0" for link in links),
        )


@contextmanager
def _scratch_index(mirror: Path, top: Path, treeish: str) -> Iterator[dict[str, str]]:
    """A throw-away index holding `treeish`, refreshed against the working tree at `top`."""
    handle, name = tempfile.mkstemp(prefix="index-", dir=_workspace().root / "index")
    os.close(handle)
    os.unlink(name)  # read-tree refuses an existing empty file as an index
    env = {"GIT_INDEX_FILE": name}
    try:
        _run([f"--git-dir={mirror}", "read-tree", treeish], where=top, extra_env=env)
        _opaque_gitlinks(mirror, top, env)
        # Exit 1 means "some files differ from the index", which is what we came to find out.
        _run(
            [
                f"--git-dir={mirror}",
                f"--work-tree={top}",
                "update-index",
                "-q",
                "--ignore-submodules",
                "--refresh",
            ],
            where=top,
            extra_env=env,
            ok_codes=(0, 1),
        )
        yield env
    finally:
        Path(name).unlink(missing_ok=True)
        Path(name + ".lock").unlink(missing_ok=True)


@contextmanager
def worktree(repo: Path, index_from: str = "HEAD") -> Iterator[Callable[..., bytes]]:
    """A runner of git commands on `repo`'s working tree, with the mirror's config and a
    private index holding `index_from` (a commit of the mirror).

    "Cached" therefore means that commit; the repository's own index, config and fsmonitor
    are never read. Diffs get ``--no-ext-diff --no-textconv``.
    """
    top, mirror = _mirror(repo)
    with _scratch_index(mirror.path, top, index_from) as env:

        def run(*args: str) -> bytes:
            return _run(
                [f"--git-dir={mirror.path}", f"--work-tree={top}", *_diff_safe(args)],
                where=top,
                extra_env=env,
            )

        yield run


def clone_for_gate(repo: Path, sha: str, dest: Path) -> None:
    """A throw-away checkout of `sha` at `dest`, cloned from the mirror, with no remote.

    Cloned with ``--no-hardlinks`` (a gate cannot rewrite the mirror's objects) and an empty
    template; the checkout runs with evalflow's config, so a ``.gitattributes`` filter in the
    tree names a driver that does not exist and no hook runs.
    """
    top, mirror = _mirror(repo)
    ws = _workspace()
    _run(
        [
            "clone",
            "--quiet",
            "--no-hardlinks",
            "--no-checkout",
            f"--template={ws.template}",
            str(mirror.path),
            str(dest),
        ],
        where=top,
    )
    inside = [f"--git-dir={dest / '.git'}", f"--work-tree={dest}"]
    _run(
        [*inside, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", sha],
        where=top,
    )
    _run([*inside, "remote", "remove", "origin"], where=top)


def require_repo(repo: Path) -> Path:
    """The repository's top level, or a clear error when `repo` is missing or not a git repo."""
    if not repo.exists():
        raise InputError(
            "repository not found", where=str(repo), fix="check the manifest's 'repo' path"
        )
    if not repo.is_dir():
        raise InputError("repository path is not a directory", where=str(repo))
    top = _toplevel(repo)
    not_a_repo = InputError(
        "not a git repository",
        where=str(repo),
        fix="point 'repo' at a git checkout (or use 'source' for a plain tree)",
    )
    if top is None:
        raise not_a_repo
    _refuse_foreign(top)  # its own message, not "not a git repository"
    try:
        _sync(top)
    except (GitTimeoutError, LimitExceededError):
        raise
    except InputError as exc:
        raise not_a_repo from exc
    return top


def resolve_commit(repo: Path, rev: str) -> str:
    """Full SHA of `rev` in the repository as it is now, or a one-line error naming it."""
    top = _toplevel(repo)
    if top is None:
        raise InputError("not a git repository", where=str(repo))
    mirror = _sync(top)
    try:
        return (
            _run(
                [
                    f"--git-dir={mirror.path}",
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    "--end-of-options",
                    f"{rev}^{{commit}}",
                ],
                where=top,
            )
            .decode()
            .strip()
        )
    except InputError as exc:
        raise InputError(
            f"unknown commit {rev!r}",
            where=str(repo),
            fix="check the manifest's base/head (run `git log --oneline` in the repository)",
        ) from exc
