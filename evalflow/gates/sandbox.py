"""The sandbox one gate command runs in: environment, isolation, resource limits, output.

What a command gets:

- **Environment**: `scrubbed_env()` (no variable whose name holds KEY/TOKEN/SECRET/PASSWORD/
  CREDENTIAL), minus the evaluator's own process variables (``GIT_*``, ``PYTEST_*``,
  ``PYTHONPATH``, ``PYTHONHOME``, ``PYTHONSTARTUP``, ``PYTHONUSERBASE``, ``OLDPWD``, ``_``),
  with ``HOME``, ``TMPDIR``/``TMP``/``TEMP`` and the XDG directories inside the sandbox,
  ``PATH`` kept but with the directory of ``sys.executable`` first (so ``python``, ``pytest``
  and ``ruff`` mean evalflow's own interpreter and tools), ``PYTHONDONTWRITEBYTECODE=1`` and
  ``PYTHONHASHSEED=0``.
- **Isolation**, probed once per process (`probe_isolation`): where unprivileged user
  namespaces work, ``unshare --user --map-root-user --net --mount --pid --fork --kill-child
  --mount-proc``: no network (a fresh network namespace has only a downed loopback), the
  evaluated checkout and evalflow's interpreter prefix bind-mounted read-only, and a PID
  namespace so every process the gate starts dies with it. Failing that, ``unshare --user
  --map-root-user --net`` (network only); failing that, nothing, and the result says so
  (``network_isolated`` / ``target_read_only`` false plus a note); the read-only guard then
  is the only protection of the checkout.
- **Limits** (`GateLimits`, set as soft = hard in the child before exec): address space
  (default 4 GiB), file size (default 1 GiB, also bounds the captured output), core dumps 0,
  and CPU seconds = timeout × CPU count, which a gate can never reach before its wall-clock
  timeout: it only bounds processes that escaped the timeout's process-group kill (possible
  without the PID namespace). The number of processes is not limited: RLIMIT_NPROC counts
  every process of the user machine-wide (a container running as root would hit it at random)
  and root ignores it anyway.
- **Timeout**: the command runs in its own session; at the wall-clock timeout its whole
  process group is killed (SIGKILL), and any leftover group member is killed when it exits.
- **Output**: stdout and stderr go to one file; the result keeps a tail (lines and characters
  bounded) with the value of every secret-looking variable of evalflow's own environment
  replaced by ``***``.

What is *not* protected: the mount namespace hides nothing, so paths other than the checkout
and the interpreter prefix stay writable with evalflow's own rights. Without namespaces the
checkout is writable too (the guard detects changed files, status or HEAD, not new refs in its
``.git``), and a process that leaves its session escapes the timeout's kill.
"""

from __future__ import annotations

import functools
import math
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from evalflow.domain.gates import mentioned_paths
from evalflow.repo.git import scrubbed_env

SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")
MIN_SECRET_CHARS = 8
MASK = "***"
GIB = 1 << 30

_DROPPED_PREFIXES = ("GIT_", "PYTEST_")
_DROPPED_NAMES = frozenset(
    {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "OLDPWD", "_"}
)
_FULL_FLAGS = (
    "--user",
    "--map-root-user",
    "--net",
    "--mount",
    "--pid",
    "--fork",
    "--kill-child",
    "--mount-proc",
)
_NET_FLAGS = ("--user", "--map-root-user", "--net")
_PROBE_TIMEOUT_S = 20
_SH = "/bin/sh"
# Runs inside the namespaces: mount the protected paths read-only, then report that set-up
# worked through its stdin, which is the write end of a private pipe (a fixed descriptor:
# dash cannot redirect descriptors above 9), and replace stdin with /dev/null before handing
# over, so the gate command can neither forge nor block the signal.
_LAUNCHER = (
    "mount=$1; cmd=$2; shift 2\n"
    'for p do "$mount" --bind -o ro "$p" "$p" || exit 125; done\n'
    "printf ready >&0\n"
    'exec /bin/sh -c "$cmd" </dev/null\n'
)


class GateLimits(BaseModel):
    """Resource limits and output bounds of one gate command (None: leave the limit as is)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    address_space_bytes: int | None = Field(default=4 * GIB, gt=0)
    file_size_bytes: int | None = Field(default=GIB, gt=0)
    cpu_seconds: int | None = Field(
        default=None, gt=0, description="None: timeout × CPU count (never hit before the timeout)"
    )
    tail_lines: int = Field(default=200, gt=0)
    tail_chars: int = Field(default=20_000, gt=0)


class Isolation(BaseModel):
    """What this machine lets evalflow isolate, found by actually trying (`probe_isolation`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    network: bool
    read_only: bool = Field(description="mount namespace with read-only binds and PID namespace")
    prefix: tuple[str, ...] = ()
    mount: str = "mount"
    detail: str = Field(default="", description="why isolation is missing, from the probe")

    def notes(self) -> tuple[str, ...]:
        found = []
        if not self.network:
            found.append(f"network isolation unavailable: {self.detail}")
        if not self.read_only:
            found.append(
                "the evaluated checkout was not mounted read-only (no mount namespace); "
                "the read-only guard checked it after the command instead"
            )
        return tuple(found)


NO_ISOLATION = Isolation(network=False, read_only=False, detail="isolation disabled by the caller")


class Execution(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    exit_code: int
    timed_out: bool
    duration_s: float
    started: bool = Field(description="the sandbox set-up worked and the command was started")


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no error output"


def _try(argv: Sequence[str]) -> tuple[bool, str]:
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
            env=scrubbed_env(),
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"{argv[0]}: {exc}"
    return done.returncode == 0, _first_line(done.stderr.decode("utf-8", "replace"))


@functools.cache
def probe_isolation() -> Isolation:
    """Try the strongest isolation this machine allows, once per process."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return Isolation(network=False, read_only=False, detail="`unshare` not found on PATH")
    mount = shutil.which("mount") or "mount"
    with tempfile.TemporaryDirectory(prefix="evalflow-probe-") as probe_dir:
        check_ro = f'"{mount}" --bind -o ro "$1" "$1" && ! (: > "$1/w") 2>/dev/null'
        full_ok, full_err = _try(
            [unshare, *_FULL_FLAGS, "--", _SH, "-c", check_ro, "probe", probe_dir]
        )
    if full_ok:
        return Isolation(
            network=True, read_only=True, prefix=(unshare, *_FULL_FLAGS, "--"), mount=mount
        )
    net_ok, net_err = _try([unshare, *_NET_FLAGS, "--", _SH, "-c", "exit 0"])
    if net_ok:
        return Isolation(
            network=True,
            read_only=False,
            prefix=(unshare, *_NET_FLAGS, "--"),
            mount=mount,
            detail=f"mount namespace unavailable: {full_err}",
        )
    return Isolation(
        network=False,
        read_only=False,
        detail=f"`unshare {' '.join(_NET_FLAGS)}` failed: {net_err}",
    )


def gate_env(sandbox: Path) -> dict[str, str]:
    """The environment of a gate command whose sandbox directory is `sandbox`."""
    env = {
        name: value
        for name, value in scrubbed_env().items()
        if not name.startswith(_DROPPED_PREFIXES) and name not in _DROPPED_NAMES
    }
    home, tmp = sandbox / "home", sandbox / "tmp"
    env.update(
        {
            "HOME": str(home),
            "TMPDIR": str(tmp),
            "TMP": str(tmp),
            "TEMP": str(tmp),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "PATH": os.pathsep.join(
                [str(Path(sys.executable).parent), env.get("PATH", os.defpath)]
            ),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
        }
    )
    return env


def secret_values(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Values of secret-looking variables, longest first.

    Values shorter than `MIN_SECRET_CHARS` are skipped: too short to be a credential, and
    masking them (say ``us`` of a keyboard-layout variable) would garble the output.
    """
    source = os.environ if environ is None else environ
    found = {
        value
        for name, value in source.items()
        if any(marker in name.upper() for marker in SECRET_MARKERS)
        and len(value) >= MIN_SECRET_CHARS
    }
    return tuple(sorted(found, key=lambda v: (-len(v), v)))


def scrub(text: str, secrets: Iterable[str]) -> str:
    for value in secrets:
        text = text.replace(value, MASK)
    return text


def read_tail(path: Path, *, lines: int, chars: int, secrets: Sequence[str]) -> str:
    """The last `lines` lines / `chars` characters of a log, secrets masked.

    Reads a window of ``4·chars + 4096`` bytes, masks it, then cuts: a secret up to 1 KiB
    straddling the window's start falls outside the kept part, so no partial value survives.
    """
    window = 4 * chars + 4096
    if not path.is_file():
        return ""
    size = path.stat().st_size
    with path.open("rb") as handle:
        handle.seek(max(0, size - window))
        data = handle.read()
    text = scrub(data.decode("utf-8", "replace"), secrets)
    truncated = size > window
    if truncated and "\n" in text:
        text = text.split("\n", 1)[1]
    kept = text.splitlines()
    if len(kept) > lines:
        kept, truncated = kept[-lines:], True
    tail = "\n".join(kept)
    if len(tail) > chars:
        tail, truncated = tail[-chars:], True
    return f"[… earlier output not shown; {size} bytes in total]\n{tail}" if truncated else tail


def scan_log(path: Path, pattern: re.Pattern[str] | None) -> set[str]:
    """Every diff-surface path the whole log names (read line by line, never all at once)."""
    found: set[str] = set()
    if pattern is None or not path.is_file():
        return found
    with path.open("rb") as handle:
        for raw in handle:
            found |= mentioned_paths(raw.decode("utf-8", "replace"), pattern)
    return found


def _limit_pairs(limits: GateLimits, timeout_s: float) -> list[tuple[int, int]]:
    cpu = limits.cpu_seconds or math.ceil(timeout_s) * (os.cpu_count() or 1)
    wanted = [
        (resource.RLIMIT_AS, limits.address_space_bytes),
        (resource.RLIMIT_FSIZE, limits.file_size_bytes),
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_CORE, 0),
    ]
    pairs = []
    for which, value in wanted:
        if value is None:
            continue
        hard = resource.getrlimit(which)[1]
        pairs.append((which, value if hard == resource.RLIM_INFINITY else min(value, hard)))
    return pairs


def _limiter(pairs: list[tuple[int, int]]) -> Callable[[], None]:
    # Runs in the forked child before exec: only setrlimit calls, no locks, no allocation-heavy
    # work, so it is safe even when the parent has other threads.
    def apply() -> None:
        for which, value in pairs:
            resource.setrlimit(which, (value, value))

    return apply


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return


def _wait_unreaped(pid: int, deadline: float) -> bool:
    """Wait until `pid` exits without reaping it (its pid, hence its group id, stays ours).

    A pidfd becomes readable when the process exits and reaps nothing; where pidfds are
    unavailable (not Linux ≥ 5.3), poll `waitid(WNOWAIT)` with a short back-off instead.
    """
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return _poll_unreaped(pid, deadline)
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        while (remaining := deadline - time.monotonic()) > 0:
            if poller.poll(math.ceil(remaining * 1000)):
                return True
        return False
    finally:
        os.close(pidfd)


def _poll_unreaped(pid: int, deadline: float) -> bool:
    pause = 0.001
    while time.monotonic() < deadline:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:
            return True
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return False


def execute(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    log: Path,
    isolation: Isolation,
    read_only_paths: Sequence[Path],
    timeout_s: float,
    limits: GateLimits,
) -> Execution:
    """Run `command` with ``sh -c`` in `cwd` inside the sandbox; output goes to `log`."""
    protected = [str(p) for p in read_only_paths] if isolation.read_only else []
    ready_read, ready_write = os.pipe()
    argv = [
        *isolation.prefix,
        _SH,
        "-c",
        _LAUNCHER,
        "evalflow-gate",
        isolation.mount,
        command,
        *protected,
    ]
    started = time.monotonic()
    try:
        try:
            with log.open("wb") as sink:
                proc = subprocess.Popen(
                    argv,
                    cwd=cwd,
                    env=dict(env),
                    stdin=ready_write,
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=_limiter(_limit_pairs(limits, timeout_s)),  # noqa: PLW1509
                )
        finally:
            os.close(ready_write)
        exited = _wait_unreaped(proc.pid, started + timeout_s)
        _kill_group(proc.pid)
        exit_code = proc.wait()
        duration = time.monotonic() - started
        os.set_blocking(ready_read, False)
        try:
            ready = os.read(ready_read, 16) == b"ready"
        except BlockingIOError:
            ready = False
    finally:
        os.close(ready_read)
    return Execution(
        exit_code=exit_code,
        timed_out=not exited,
        duration_s=round(duration, 3),
        started=ready,
    )


def new_sandbox(root: Path) -> Path:
    sandbox = Path(tempfile.mkdtemp(prefix="evalflow-gate-", dir=root))
    (sandbox / "home").mkdir()
    (sandbox / "tmp").mkdir()
    return sandbox


def remove_tree(path: Path) -> None:
    """Delete a sandbox even when the gate left unwritable directories behind."""
    try:
        shutil.rmtree(path)
    except FileNotFoundError:
        return
    except OSError:
        for current, dirs, _ in os.walk(path):
            for name in dirs:
                (Path(current) / name).chmod(0o700)
        shutil.rmtree(path, ignore_errors=True)
