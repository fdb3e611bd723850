"""The sandbox one gate command runs in: file system, environment, limits, output capture.

A gate runs code an AI agent wrote, so it is treated as hostile. With full isolation
(`probe_isolation` found user, mount, PID and network namespaces working) a gate gets:

- **File system**: every mount of the host read-only (each mount point of
  ``/proc/self/mountinfo`` remounted ``bind,ro``); a private tmpfs of ``disk_bytes`` on
  ``/tmp`` and another on ``/dev/shm``; ``HOME``/``TMPDIR``/``XDG_*`` inside that tmpfs (a
  directory of it is bound over them when they lie elsewhere). The only other writable places
  are the gate's throw-away clone (its ``cwd``) and the caller's ``writable`` paths, bound at
  their own paths. ``/dev`` is a private read-only tmpfs holding only ``null``, ``zero``,
  ``full``, ``random``, ``urandom`` and ``tty`` (bound from the host), the ``fd``/``std*``
  links and a private ``shm``: no host block device, ``/dev/kmsg`` or terminal is reachable
  (the host's root can open those for writing, and a read-only mount does not stop writes to
  a device). ``hidden`` paths (warehouse, benchmark, caches, the evaluated repository)
  are covered by an empty read-only tmpfs, and so is ``/run`` (host daemons' Unix sockets: a
  read-only mount does not stop ``connect()``); ``read_only`` paths are
  bound back read-only even under a hidden path. The clone usually lies under ``/tmp``: the
  new tmpfs is filled on a staging directory and then moved onto ``/tmp``.
- **Locked mounts**: the command itself runs in a second, nested user and mount namespace, so
  the kernel locks every mount above (``MNT_LOCKED``/``MNT_LOCK_READONLY``): the gate is root
  in its namespace but can neither remount anything read-write nor unmount a hiding tmpfs.
- **Processes**: a PID namespace with its own ``/proc`` (evalflow's ``/proc/<pid>/environ``
  is unreachable); when it ends, every process it started dies with it.
- **Network**: none (a fresh network namespace with a downed loopback, no abstract Unix
  sockets of the host). ``network=True`` (the dependency set-up step) keeps that empty
  namespace and adds one way out: `_RELAY` on its loopback forwards to evalflow's
  `_RegistryProxy` on a Unix socket, which tunnels HTTPS only to `REGISTRIES`; the installers
  find it through ``HTTPS_PROXY`` and friends. Host loopback services, Unix sockets under
  ``/run`` and ``/tmp``, abstract sockets and every other host stay unreachable.
- **Environment**: an allow-list (`gate_env`), never a deny-list; output is masked with every
  secret-looking value of evalflow's own environment (`secret_values`), including passwords
  inside URLs.
- **Limits** (`GateLimits`): memory through a cgroup v2 ``memory.max`` when a delegated
  cgroup v2 with the memory controller is writable, else a cgroup v1 memory controller's
  ``memory.limit_in_bytes``, else ``RLIMIT_DATA`` per process (never
  ``RLIMIT_AS`` unless asked: V8/WebAssembly reserve far more address space than they use);
  processes through ``pids.max`` (cgroup v2, else v1), else ``RLIMIT_NPROC``; disk through the
  size of the ``/tmp`` tmpfs; each file through ``RLIMIT_FSIZE``; wall time by killing the
  whole process group (and with it the PID namespace) at the timeout. `Execution.limit_hit`
  names the limit a failed run hit (see `execute` for what is exact and what is a heuristic).
- **Output**: stdout and stderr go to a log evalflow opens itself, outside the clone;
  `read_tail`/`scan_log` open it with ``O_NOFOLLOW`` and read only a regular file.

What is *not* protected:

- Writes into the clone go to the host disk; only ``RLIMIT_FSIZE`` bounds each file there.
- The gate can read everything of the host that is not hidden (``/etc``, ``/usr``, other
  users' world-readable files); only the caller's ``hidden`` list keeps data out of sight.
- ``RLIMIT_DATA`` bounds each process, not their sum; ``RLIMIT_NPROC`` does not bind a host
  root (the kernel exempts uid 0), so without a pids cgroup a fork bomb is stopped only by the
  timeout. `Isolation.missing` names such gaps.
- A Unix socket file outside ``/run`` and ``/tmp`` that the gate can see stays connectable.
- Without a mount namespace ``network=True`` keeps the host's whole network.
- Without namespaces (`Isolation.missing` lists them) only the timeout, the rlimits and the
  allow-listed environment remain; the read-only guard then checks the evaluated repository
  after the fact. The namespaces are a kernel boundary, not a VM: a kernel exploit escapes.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import functools
import math
import os
import re
import resource
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Literal
from urllib.parse import quote, quote_plus

from pydantic import BaseModel, ConfigDict, Field

from evalflow.domain.gates import mentioned_paths
from evalflow.domain.models import SECRET_MARKERS
from evalflow.errors import InputError
from evalflow.repo.git import scratch_dir

MIN_SECRET_CHARS = 8
MASK = "***"
MIB = 1 << 20
GIB = 1 << 30

LimitHit = Literal["memory", "processes", "disk", "wall time"]

_ALLOWED_NAMES = frozenset({"LANG", "TZ", "TERM"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# userinfo of a URL (scheme://user:password@host): the password is a secret whatever the
# variable is called, e.g. DATABASE_URL=postgres://u:pw@h/db.
_URL_CREDENTIALS = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^/\s:@]*):([^/\s@]+)@")
# --ipc: SysV shared memory and semaphores of a gate die with it (a 64 MiB segment outlived
# the run and escaped the memory limit) and the host's are out of its reach.
_FULL_FLAGS = (
    "--user",
    "--map-root-user",
    "--net",
    "--ipc",
    "--mount",
    "--pid",
    "--fork",
    "--kill-child",
    "--mount-proc",
)
_NET_FLAGS = ("--user", "--map-root-user", "--net")
_PROBE_TIMEOUT_S = 20
_SH = "/bin/sh"
_SCRATCH_VARS = ("HOME", "TMPDIR", "TMP", "TEMP")
# A Unix socket path has at most 107 bytes; the proxy's is <parent>/r-XXXXXXXX/s.
_MAX_SOCKET_PARENT = 107 - len("/r-XXXXXXXX/s")
# The free space below which the /tmp tmpfs counts as full after a failed run.
_FULL_FRACTION = 0.01
_NOSPACE = re.compile(rb"No space left on device|ENOSPC|Disk quota exceeded")
_ALLOC_FAILED = re.compile(
    rb"MemoryError|Cannot allocate memory|std::bad_alloc|out of memory|ENOMEM", re.IGNORECASE
)
_OUTPUT_WINDOW = 64 * 1024
_V1_MEMORY_LIMIT = "memory.limit_in_bytes"
# What setup may reach: HTTPS (CONNECT) to the package registries `auto_setup`'s installers use
# (PyPI and its file host for pip/uv, npm's and yarn's registries for npm/pnpm/yarn).
REGISTRIES = frozenset(
    (host, 443)
    for host in ("pypi.org", "files.pythonhosted.org", "registry.npmjs.org", "registry.yarnpkg.com")
)
# Setup's own network namespace is empty: its installers reach `REGISTRIES` through the relay
# on this port of its loopback (each namespace has its own, so the port cannot clash).
RELAY_PORT = 3128
_PROXY = f"http://127.0.0.1:{RELAY_PORT}"
_PROXY_ENV = {
    **dict.fromkeys(
        ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"),
        _PROXY,
    ),
    "npm_config_proxy": _PROXY,
    "npm_config_https_proxy": _PROXY,
    # Yarn 2+ reads only its own YARN_* settings, not HTTPS_PROXY nor npm_config_*.
    "YARN_HTTP_PROXY": _PROXY,
    "YARN_HTTPS_PROXY": _PROXY,
    "NO_PROXY": "",
    "no_proxy": "",
    "npm_config_noproxy": "",
}
_HEADER_LIMIT = 8192
_CONNECT_TIMEOUT_S = 30

# The setup's one way out of its empty network namespace, run there by evalflow's interpreter
# (no single quote: it sits in the launcher's quotes): every TCP connection to 127.0.0.1 is
# relayed to evalflow's registry proxy on the Unix socket argv[1]. It listens before the
# launcher goes on (the parent exits only then) and dies with the PID namespace.
_RELAY = f"""
import os, socket, sys, threading
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", {RELAY_PORT}))
server.listen(64)
if os.fork():
    os._exit(0)
def pump(source, sink):
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    try:
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass
while True:
    client, _ = server.accept()
    proxy = socket.socket(socket.AF_UNIX)
    try:
        proxy.connect(sys.argv[1])
    except OSError:
        client.close()
        continue
    for source, sink in ((client, proxy), (proxy, client)):
        threading.Thread(target=pump, args=(source, sink), daemon=True).start()
"""

# Runs as PID 1 of the new namespaces (dash-compatible; arguments are tagged ``kind:path``):
# 0. with ``loopback:<python>``, the loopback of the gate's own network namespace brought up
#    (SIOCSIFFLAGS IFF_UP|IFF_RUNNING by evalflow's interpreter) for a `run` probe's server and
#    client — here, because the nested user namespace has no CAP_NET_ADMIN over it; with
#    ``relay:<socket>`` (setup) also `_RELAY` on 127.0.0.1, forked into the background. Both
#    run before any mount changes: evalflow's interpreter may live under /tmp or a hidden path
#    (a virtualenv in a checkout under /tmp was "not found" once /tmp was replaced);
# 1. a tmpfs on the staging directory; every path to re-expose is bound into it (``.keep``)
#    while the host's view is still intact; a second, small tmpfs in it gets the few device
#    nodes a gate needs bound from the host and is moved onto /dev (read-only: no node can be
#    added); the staging tmpfs moved onto /tmp (both before the root turns read-only:
#    libmount reports a move onto a read-only mount as failed);
# 2. every host mount point (``ro:``) remounted read-only, except those under the new /tmp
#    and /dev, which they cover anyway, and /proc: the PID namespace's own proc stays
#    writable for the nested namespace's uid_map, but every top-level entry that is not a
#    process (sys, sysrq-trigger, irq, ...) is bound read-only: the gate's uid is evalflow's,
#    and for host root ``/proc/sys`` would otherwise be writable from inside the namespace;
# 3. a private /dev/shm, ``hide:`` paths covered by an empty tmpfs (still writable, so mount
#    points for re-exposed paths can be made in it);
# 4. the kept paths bound to their own paths (and unmounted from /tmp/.keep), the scratch
#    directories' mount points made while the hiding tmpfs is still writable (a sandbox under
#    the hidden warehouse), the hiding tmpfs made read-only, the scratch directories (HOME,
#    TMPDIR) made writable in /tmp;
# 5. the command runs in a nested user + mount namespace (which locks every mount above),
#    reports set-up success through fd 3 (the private pipe, then closed) and gets /dev/null as
#    stdin. Afterwards the free space of /tmp is reported through the same pipe.
# Set-up failures exit 125 with one line on stderr.
_LAUNCHER = r"""
mount=$1 unshare=$2 cmd=$3 cwd=$4 stage=$5 size=$6; shift 6
fail() { printf 'evalflow sandbox: %s\n' "$*" >&2; exit 125; }
relay='@RELAY@'
for a do case $a in loopback:*)
  py=${a#loopback:}
  "$py" -c 'import fcntl, socket, struct; fcntl.ioctl(socket.socket(
    socket.AF_INET, socket.SOCK_DGRAM), 0x8914, struct.pack("16sH", b"lo", 0x41))' \
    || fail "cannot bring up the loopback interface"
esac; done
for a do case $a in relay:*)
  "$py" -I -S -c "$relay" "${a#relay:}" </dev/null >/dev/null 2>&1 3>&- \
    || fail "cannot start the registry relay"
esac; done
"$mount" -t tmpfs -o "size=$size,mode=1777" evalflow-tmp "$stage" || fail "tmpfs on $stage"
mkdir "$stage/.keep" || fail "mkdir $stage/.keep"
i=0
for a do case $a in keep-rw:*|keep-ro:*)
  i=$((i + 1)) p=${a#*:} k=$stage/.keep/$i
  if [ -d "$p" ]; then mkdir "$k"; else : > "$k"; fi || fail "cannot stage $p"
  "$mount" --bind "$p" "$k" || fail "cannot expose $p"
  case $a in keep-ro:*) "$mount" -o remount,bind,ro "$k" || fail "cannot make $p read-only";; esac
esac; done
dev=$stage/.dev
mkdir "$dev" && "$mount" -t tmpfs -o size=64k,mode=755 evalflow-dev "$dev" \
  || fail "tmpfs for /dev"
for n in null zero full random urandom tty; do
  : > "$dev/$n" && "$mount" --bind "/dev/$n" "$dev/$n" || fail "cannot expose /dev/$n"
done
mkdir "$dev/shm" && ln -s /proc/self/fd "$dev/fd" && ln -s /proc/self/fd/0 "$dev/stdin" \
  && ln -s /proc/self/fd/1 "$dev/stdout" && ln -s /proc/self/fd/2 "$dev/stderr" \
  && "$mount" --move "$dev" /dev && "$mount" -o remount,ro /dev || fail "cannot replace /dev"
"$mount" --move "$stage" /tmp || fail "cannot move the tmpfs onto /tmp"
for a do case $a in ro:/tmp|ro:/tmp/*|ro:/proc|ro:/proc/*|ro:/dev|ro:/dev/*) ;; ro:*)
  "$mount" -o remount,bind,ro "${a#ro:}" || fail "cannot make ${a#ro:} read-only"
esac; done
for e in $(find /proc -mindepth 1 -maxdepth 1 ! -name '[0-9]*' ! -type l \
    \( -type d -o -perm /222 \)); do
  "$mount" --bind -o ro "$e" "$e" || fail "cannot make $e read-only"
done
"$mount" -t tmpfs -o "size=$size,mode=1777" evalflow-shm /dev/shm || fail "tmpfs on /dev/shm"
j=0 covered=' '
for a do case $a in hide:*)
  j=$((j + 1)) p=${a#hide:}
  if [ -d "$p" ]; then "$mount" -t tmpfs -o size=64k,mode=755 evalflow-hidden "$p" \
    && covered="$covered$j "
  elif [ -e "$p" ]; then "$mount" --bind /dev/null "$p"; fi || fail "cannot hide $p"
esac; done
i=0
for a do case $a in keep-rw:*|keep-ro:*)
  i=$((i + 1)) p=${a#*:} k=/tmp/.keep/$i
  if [ -d "$k" ]; then mkdir -p "$p"; else mkdir -p "${p%/*}" && { [ -e "$p" ] || : > "$p"; }; fi \
    || fail "no mount point for $p"
  "$mount" --bind "$k" "$p" && umount "$k" && rm -d "$k" || fail "cannot expose $p"
esac; done
rmdir /tmp/.keep || fail "cannot tidy /tmp/.keep"
for a do case $a in scratch:*) mkdir -p "${a#scratch:}" 2>/dev/null;; esac; done
j=0
for a do case $a in hide:*)
  j=$((j + 1)) p=${a#hide:}
  case $covered in *" $j "*) "$mount" -o remount,ro "$p" || fail "cannot make $p read-only";; esac
esac; done
n=0
for a do case $a in scratch:*)
  n=$((n + 1)) p=${a#scratch:}
  mkdir -p "$p" 2>/dev/null
  if ! (: > "$p/.evalflow-w") 2>/dev/null; then
    mkdir -p "/tmp/.scratch/$n" && "$mount" --bind "/tmp/.scratch/$n" "$p" \
      || fail "cannot make $p writable"
  fi
  rm -f "$p/.evalflow-w"
esac; done
cd "$cwd" && unset OLDPWD || fail "cannot enter $cwd"
exec 3>&0 </dev/null
"$unshare" --user --map-root-user --mount -- /bin/sh -c \
  'printf ready >&3 && exec /bin/sh -c "$1" 3>&-' evalflow-gate "$cmd"
rc=$?
stat -f -c "tmp %a %b" /tmp >&3 2>/dev/null
exit $rc
""".replace("@RELAY@", _RELAY)
# Without a mount namespace: only signal that the command started.
_PLAIN_LAUNCHER = 'printf ready >&0 && exec /bin/sh -c "$1" </dev/null\n'


class GateLimits(BaseModel):
    """Resource limits and output bounds of one gate command; every value is overridable.

    ``None`` leaves a limit as the parent has it. `execute` takes its wall time from its own
    ``timeout_s`` argument; `timeout_s` here is the documented default callers pass there.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float = Field(default=600.0, gt=0, description="wall time of one command")
    memory_bytes: int | None = Field(
        default=8 * GIB,
        gt=0,
        description="cgroup memory.max (v2) or memory.limit_in_bytes (v1) of the whole gate, "
        "else RLIMIT_DATA per process",
    )
    processes: int | None = Field(
        default=1024, gt=0, description="cgroup pids.max, else RLIMIT_NPROC (not for host root)"
    )
    disk_bytes: int = Field(
        default=4 * GIB, gt=0, description="size of the private /tmp tmpfs (HOME lives in it)"
    )
    file_size_bytes: int | None = Field(
        default=GIB, gt=0, description="RLIMIT_FSIZE: largest file, also bounds the log"
    )
    address_space_bytes: int | None = Field(
        default=None, gt=0, description="RLIMIT_AS, opt-in only: it breaks V8/WebAssembly"
    )
    cpu_seconds: int | None = Field(
        default=None, gt=0, description="None: timeout × CPU count (never hit before the timeout)"
    )
    tail_lines: int = Field(default=200, gt=0)
    tail_chars: int = Field(default=20_000, gt=0)


class Isolation(BaseModel):
    """What this machine lets evalflow isolate, found by actually trying (`probe_isolation`).

    One flag per feature; `missing` names the ones the kernel could not provide.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    network: bool = Field(description="no network: a fresh network namespace")
    read_only_root: bool = Field(default=False, description="every host mount read-only, locked")
    hidden_paths: bool = Field(default=False, description="hidden paths covered by empty tmpfs")
    pid_namespace: bool = Field(default=False, description="own PID namespace and /proc")
    tmpfs: bool = Field(default=False, description="private size-limited /tmp, HOME inside")
    memory_limit: bool = Field(
        default=False, description="total memory bounded by a cgroup (else RLIMIT_DATA)"
    )
    process_limit: bool = Field(
        default=False, description="process count bounded by a pids cgroup or RLIMIT_NPROC"
    )
    prefix: tuple[str, ...] = ()
    mount: str = "mount"
    unshare: str = "unshare"
    memory_cgroup: str | None = Field(
        default=None, description="cgroup (v2, else v1 memory) directory to create children in"
    )
    pids_cgroup: str | None = Field(
        default=None, description="cgroup (v2 or v1 pids) directory to create children in"
    )
    detail: str = Field(default="", description="why namespaces are missing, from the probe")

    @property
    def read_only(self) -> bool:
        """The evaluated checkout cannot be written (read-only root and hidden paths)."""
        return self.read_only_root and self.hidden_paths

    def missing(self) -> tuple[str, ...]:
        """The isolation features this machine could not provide, in a fixed order."""
        features = (
            "network",
            "read_only_root",
            "hidden_paths",
            "pid_namespace",
            "memory_limit",
            "process_limit",
            "tmpfs",
        )
        return tuple(name for name in features if not getattr(self, name))

    def notes(self) -> tuple[str, ...]:
        found = []
        if not self.network:
            found.append(f"network isolation unavailable: {self.detail}")
        if not self.read_only_root:
            found.append(
                "the host file system was not mounted read-only (no mount namespace): the "
                "gate could write wherever evalflow can; the read-only guard checked the "
                "evaluated checkout after the command instead"
            )
        if not self.pid_namespace:
            found.append("no PID namespace: a process that leaves its session escapes the kill")
        if not self.memory_limit:
            found.append(
                "memory limited per process by RLIMIT_DATA only (no writable cgroup with the "
                "memory controller, v2 or v1)"
            )
        if not self.process_limit:
            found.append(
                "process count not limited: no pids cgroup, and RLIMIT_NPROC does not bind "
                "host root"
            )
        return tuple(found)


NO_ISOLATION = Isolation(network=False, detail="isolation disabled by the caller")


class Execution(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    exit_code: int
    timed_out: bool
    duration_s: float
    started: bool = Field(description="the sandbox set-up worked and the command was started")
    limit_hit: LimitHit | None = Field(
        default=None, description="the limit a failed run hit (see `execute`), else None"
    )


# --- environment and output -------------------------------------------------------------


def gate_env(sandbox: Path, extra: Mapping[str, str] = {}) -> dict[str, str]:
    """The environment of a gate whose sandbox directory is `sandbox`: an allow-list.

    Kept from evalflow's environment: ``PATH`` (with the directory of ``sys.executable``
    first, so ``python``, ``pytest`` and ``ruff`` mean evalflow's own tools), ``LANG``,
    ``LC_*``, ``TZ``, ``TERM``. Set: ``HOME``/``TMPDIR``/``TMP``/``TEMP``/``XDG_*`` in the
    sandbox (in the private tmpfs under isolation), ``CI=true``, ``PYTHONDONTWRITEBYTECODE=1``,
    ``PYTHONHASHSEED=0``. Then `extra` (the manifest's ``gate_env:``), which wins. Nothing else.
    """
    for name, value in extra.items():
        if not _NAME.fullmatch(name) or "\0" in value:
            raise InputError(
                f"gate_env entry {name!r} is not a valid environment variable",
                where="gate_env",
                fix="use names of letters, digits and _ (not starting with a digit), no NUL",
            )
    env = {
        name: value
        for name, value in os.environ.items()
        if name in _ALLOWED_NAMES or name.startswith("LC_")
    }
    home, tmp = sandbox / "home", sandbox / "tmp"
    env.update(
        {
            "PATH": os.pathsep.join(
                [str(Path(sys.executable).parent), os.environ.get("PATH", os.defpath)]
            ),
            "HOME": str(home),
            "TMPDIR": str(tmp),
            "TMP": str(tmp),
            "TEMP": str(tmp),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "CI": "true",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
        }
    )
    env.update(extra)
    return env


def secret_values(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Values to mask in gate output, longest first.

    The value of every variable whose name looks secret, every value that embeds URL
    credentials (``scheme://user:password@``), and that userinfo and password themselves.
    Values shorter than `MIN_SECRET_CHARS` are skipped: too short to be a credential, and
    masking them (say ``us`` of a keyboard-layout variable) would garble the output; a short
    URL password is still masked as part of its ``user:password@`` userinfo.
    """
    source = os.environ if environ is None else environ
    found: set[str] = set()
    for name, value in source.items():
        if any(marker in name.upper() for marker in SECRET_MARKERS):
            found.add(value)
        for match in _URL_CREDENTIALS.finditer(value):
            found.update({value, match.group(2), f"{match.group(1)}:{match.group(2)}@"})
    kept = {value for value in found if len(value) >= MIN_SECRET_CHARS or value.endswith("@")}
    encoded = {form for value in kept for form in encodings(value)}
    kept |= {form for form in encoded if len(form) >= MIN_SECRET_CHARS}
    return tuple(sorted(kept, key=lambda v: (-len(v), v)))


def encodings(value: str) -> set[str]:
    """Cheap disguises of `value` a gate could print to get it past literal masking.

    Reversed, hex (both cases), percent-encoded, and base64 (standard and URL-safe) at each of
    the three byte alignments it can have inside a longer encoded text: the stable core of
    each, without the groups that mix in the neighbouring bytes.
    """
    raw = value.encode()
    forms = {value[::-1], raw.hex(), raw.hex().upper(), quote(value, safe=""), quote_plus(value)}
    for shift in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(b"\0" * shift + raw).decode()
            # Drop the group holding the padding bytes and the last (possibly partial) group.
            forms.add(text[4 if shift else 0 : -4 if len(text) > 4 else None])
    return {form for form in forms if form and form != value}


def scrub(text: str, secrets: Iterable[str]) -> str:
    for value in secrets:
        text = text.replace(value, MASK)
    return text


@contextlib.contextmanager
def _open_log(path: Path) -> Iterator[tuple[int, int] | None]:
    """(fd, size) of the log if it is a regular file reached without a symlink, else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        yield None
        return
    try:
        info = os.fstat(fd)
        yield (fd, info.st_size) if stat.S_ISREG(info.st_mode) else None
    finally:
        os.close(fd)


def read_tail(path: Path, *, lines: int, chars: int, secrets: Sequence[str]) -> str:
    """The last `lines` lines / `chars` characters of a log, secrets masked.

    The log is read only if it is a regular file and `path` itself is no symlink (a symlink,
    FIFO or device yields ""). Reads a window of ``4·chars + 4096`` bytes, masks it, then
    cuts: a secret up to 1 KiB straddling the window's start falls outside the kept part.
    """
    window = 4 * chars + 4096
    with _open_log(path) as opened:
        if opened is None:
            return ""
        fd, size = opened
        data = os.pread(fd, window, max(0, size - window))
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
    if pattern is None:
        return found
    with _open_log(path) as opened:
        if opened is None:
            return found
        with os.fdopen(os.dup(opened[0]), "rb") as handle:
            for raw in handle:
                found |= mentioned_paths(raw.decode("utf-8", "replace"), pattern)
    return found


# --- cgroups -----------------------------------------------------------------------------


def _mountinfo() -> list[tuple[str, str, str]]:
    """(mount point, file system type, super options) of every mount, in table order."""
    rows = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3:
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            rows.append((point, tail[0], tail[2]))
    return rows


def _own_cgroup(
    mounts: Sequence[tuple[str, str, str]], membership: str, controller: str
) -> Path | None:
    """The cgroup directory of `membership` (/proc/self/cgroup) for `controller` ("" = v2)."""
    for line in membership.splitlines():
        _, names, where = line.split(":", 2)
        if controller not in (names.split(",") if controller else [names]):
            continue
        for point, fstype, options in mounts:
            v2 = fstype == "cgroup2" and controller == ""
            if v2 or (fstype == "cgroup" and controller in options.split(",")):
                return Path(point) / where.lstrip("/")
    return None


def _usable_parent(parent: Path | None, control: str, unlimited: str = "max") -> str | None:
    """`parent` if a child cgroup made in it gets `control` and accepts a write, else None."""
    if parent is None:
        return None
    try:
        child = Path(tempfile.mkdtemp(prefix="evalflow-probe-", dir=parent))
    except OSError:
        return None
    try:
        (child / control).write_text(f"{unlimited}\n")
        return str(parent)
    except OSError:
        return None
    finally:
        # A cgroup directory is removable with its interface files in it.
        with contextlib.suppress(OSError):
            child.rmdir()


def _cgroup_parents(
    mounts: Sequence[tuple[str, str, str]], membership: str
) -> tuple[str | None, str | None]:
    """The cgroup directories for memory and pids limits this process can delegate to."""
    v2 = _own_cgroup(mounts, membership, "")
    pids_v1 = _own_cgroup(mounts, membership, "pids")
    memory_v1 = _own_cgroup(mounts, membership, "memory")
    memory = _usable_parent(v2, "memory.max") or _usable_parent(memory_v1, _V1_MEMORY_LIMIT, "-1")
    pids = _usable_parent(v2, "pids.max") or _usable_parent(pids_v1, "pids.max")
    return memory, pids


def _probe_cgroups() -> tuple[str | None, str | None]:
    try:
        return _cgroup_parents(_mountinfo(), Path("/proc/self/cgroup").read_text())
    except (OSError, ValueError):
        return None, None


class _Cgroups:
    """The per-gate child cgroups of one execution (created, joined by the child, removed)."""

    def __init__(self, isolation: Isolation, limits: GateLimits) -> None:
        self.dirs: list[Path] = []
        self.memory: Path | None = None
        # cgroup v1 names the limit and its OOM-kill counter differently from v2.
        self.memory_events = "memory.events"
        self.pids: Path | None = None
        if isolation.memory_cgroup and limits.memory_bytes is not None:
            parent = Path(isolation.memory_cgroup)
            v1 = (parent / _V1_MEMORY_LIMIT).exists()
            self.memory_events = "memory.oom_control" if v1 else "memory.events"
            self.memory = self._make(
                parent, _V1_MEMORY_LIMIT if v1 else "memory.max", limits.memory_bytes
            )
        if isolation.pids_cgroup and limits.processes is not None:
            same = self.memory is not None and isolation.pids_cgroup == isolation.memory_cgroup
            if same and self.memory is not None:
                self.pids = self._set(self.memory, "pids.max", limits.processes)
            else:
                self.pids = self._make(Path(isolation.pids_cgroup), "pids.max", limits.processes)
        self.procs_fds = [
            os.open(d / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC) for d in self.dirs
        ]

    def _make(self, parent: Path, control: str, value: int) -> Path | None:
        try:
            child = Path(tempfile.mkdtemp(prefix="evalflow-gate-", dir=parent))
        except OSError:
            return None
        self.dirs.append(child)
        return self._set(child, control, value)

    @staticmethod
    def _set(child: Path, control: str, value: int) -> Path | None:
        try:
            (child / control).write_text(f"{value}\n")
        except OSError:
            return None
        return child

    def join(self) -> None:
        # Runs in the forked child before exec: one write per cgroup, nothing else.
        for fd in self.procs_fds:
            os.write(fd, b"0")

    def counter(self, where: Path | None, events: str, key: str) -> int:
        if where is None:
            return 0
        try:
            for line in (where / events).read_text().splitlines():
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
        except (OSError, ValueError):
            return 0
        return 0

    def close(self) -> None:
        """Kill whatever is left in the cgroups, then remove them."""
        for fd in self.procs_fds:
            os.close(fd)
        for child in self.dirs:
            deadline = time.monotonic() + 5
            while True:
                try:
                    pids = [int(p) for p in (child / "cgroup.procs").read_text().split()]
                except OSError:
                    pids = []
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                try:
                    child.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                        break
                    time.sleep(0.01)


# --- isolation probe ---------------------------------------------------------------------


@functools.cache
def probe_isolation() -> Isolation:
    """Try the strongest isolation this machine allows, once per process."""
    memory, pids = _probe_cgroups()
    process_limit = pids is not None or os.geteuid() != 0
    cgroups = {"memory_cgroup": memory, "pids_cgroup": pids}
    limits_found = {"memory_limit": memory is not None, "process_limit": process_limit}
    unshare = shutil.which("unshare")
    if unshare is None:
        return Isolation(
            network=False, detail="`unshare` not found on PATH", **limits_found, **cgroups
        )
    mount = shutil.which("mount") or "mount"
    full = Isolation(
        network=True,
        read_only_root=True,
        hidden_paths=True,
        pid_namespace=True,
        tmpfs=True,
        prefix=(unshare, *_FULL_FLAGS, "--"),
        mount=mount,
        unshare=unshare,
        **limits_found,
    )
    full_ok, full_err = _probe(full)
    if full_ok:
        return full.model_copy(update=cgroups)
    net = Isolation(
        network=True,
        prefix=(unshare, *_NET_FLAGS, "--"),
        mount=mount,
        unshare=unshare,
        detail=f"mount namespace unavailable: {full_err}",
        **limits_found,
    )
    net_ok, net_err = _probe(net)
    if net_ok:
        return net.model_copy(update=cgroups)
    return Isolation(
        network=False,
        detail=f"`unshare {' '.join(_NET_FLAGS)}` failed: {net_err}",
        **limits_found,
        **cgroups,
    )


# What a fully isolated probe must see: a read-only, locked root; the hidden directory empty;
# a writable /tmp and clone.
_PROBE_FULL = (
    "! (: > /.evalflow-probe) 2>/dev/null && ! mount -o remount,rw / 2>/dev/null && "
    '[ -z "$(ls -A "$HIDDEN_DIR")" ] && : > /tmp/w && : > ./w'
)


def _probe(candidate: Isolation) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory(prefix="probe-", dir=scratch_dir("gates")) as scratch:
        root = Path(scratch)
        clone, hidden = root / "clone", root / "hidden"
        for directory in (clone, hidden, root / "home", root / "tmp"):
            directory.mkdir()
        (hidden / "secret").write_text("x")
        command = _PROBE_FULL if candidate.read_only_root else "exit 0"
        try:
            run = execute(
                command,
                cwd=clone,
                env={**gate_env(root), "HIDDEN_DIR": str(hidden)},
                log=root / "probe.log",
                isolation=candidate,
                timeout_s=_PROBE_TIMEOUT_S,
                limits=GateLimits(),
                hidden=(hidden,),
            )
        except OSError as exc:
            return False, str(exc)
        output = read_tail(root / "probe.log", lines=5, chars=500, secrets=())
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit {run.exit_code}, no error output"
        return run.started and run.exit_code == 0, reason


# --- the registry proxy of setup ---------------------------------------------------------


_REFUSED = (
    b"HTTP/1.1 403 Forbidden by evalflow: setup reaches only the package registries "
    b"over HTTPS\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
)


def _connect_target(request: bytes) -> tuple[str, int] | None:
    """(host, port) of an HTTP ``CONNECT host:port`` request head, else None."""
    parts = request.split(b"\r\n", 1)[0].split()
    if len(parts) != 3 or parts[0] != b"CONNECT":
        return None
    host, _, port = parts[1].decode("ascii", "replace").rpartition(":")
    if not port.isdigit():
        return None
    return host.lower().rstrip("."), int(port)


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


class _RegistryProxy:
    """An HTTP CONNECT proxy on a Unix socket that tunnels only to `allowed` (host, port).

    It is setup's only way out of its empty network namespace (through `_RELAY`): the host's
    loopback services, Unix and abstract sockets, link-local metadata services and every other
    host stay unreachable. The tunnel carries TLS end to end; evalflow resolves the name.
    """

    def __init__(self, directory: Path, allowed: Collection[tuple[str, int]]) -> None:
        self.path = directory / "s"
        self._allowed = frozenset(allowed)
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.path))
        self._server.listen(64)
        threading.Thread(target=self._serve, daemon=True).start()

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.add(sock)

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            self._track(client)
            threading.Thread(target=self._handle, args=(client,), daemon=True).start()

    def _handle(self, client: socket.socket) -> None:
        upstream = None
        try:
            client.settimeout(_CONNECT_TIMEOUT_S)
            head = b""
            while b"\r\n\r\n" not in head and len(head) <= _HEADER_LIMIT:
                chunk = client.recv(4096)
                if not chunk:
                    return
                head += chunk
            request, _, rest = head.partition(b"\r\n\r\n")
            target = _connect_target(request)
            if target not in self._allowed:
                client.sendall(_REFUSED)
                return
            upstream = socket.create_connection(target, timeout=_CONNECT_TIMEOUT_S)
            self._track(upstream)
            client.settimeout(None)
            upstream.settimeout(None)
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if rest:
                upstream.sendall(rest)
            back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
            back.start()
            _pump(client, upstream)
            back.join()
        except OSError:
            pass
        finally:
            for sock in (client, upstream):
                if sock is not None:
                    sock.close()
                    with self._lock:
                        self._open.discard(sock)

    def close(self) -> None:
        """Stop accepting and end every tunnel still open (shutdown wakes blocked threads)."""
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()
        with self._lock:
            still_open = list(self._open)
        for sock in still_open:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.path.unlink()


# --- running one command -----------------------------------------------------------------


def _limit_pairs(
    limits: GateLimits,
    timeout_s: float,
    *,
    rlimit_memory: bool = True,
    rlimit_processes: bool = True,
) -> list[tuple[int, int]]:
    cpu = limits.cpu_seconds or math.ceil(timeout_s) * (os.cpu_count() or 1)
    wanted = [
        (resource.RLIMIT_AS, limits.address_space_bytes),
        (resource.RLIMIT_DATA, limits.memory_bytes if rlimit_memory else None),
        (resource.RLIMIT_NPROC, limits.processes if rlimit_processes else None),
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


def _child_setup(cgroups: _Cgroups, pairs: list[tuple[int, int]]) -> Callable[[], None]:
    # Runs in the forked child before exec: cgroup writes and setrlimit calls only, no locks,
    # no allocation-heavy work, so it is safe even when the parent has other threads.
    def apply() -> None:
        cgroups.join()
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


def _launch_args(
    isolation: Isolation,
    *,
    command: str,
    cwd: Path,
    env: Mapping[str, str],
    stage: Path,
    limits: GateLimits,
    writable: Sequence[Path],
    hidden: Sequence[Path],
    read_only: Sequence[Path],
    network: bool,
    loopback: bool,
    registry: Path | None,
) -> list[str]:
    host_network = network and registry is None
    prefix = [flag for flag in isolation.prefix if not (host_network and flag == "--net")]
    if not isolation.read_only_root:
        return [*prefix, _SH, "-c", _PLAIN_LAUNCHER, "evalflow-gate", command]
    mount_points = dict.fromkeys(point for point, _, _ in _mountinfo())
    wanted = dict.fromkeys(
        Path(p).resolve() for p in (*hidden, *(() if host_network else ("/run",)))
    )
    # A path inside another hidden one is covered with it (hiding both left the inner one's
    # mount point out of reach, and the set-up failed: a repository in the operator's home).
    hide = [p for p in wanted if not any(p != q and p.is_relative_to(q) for q in wanted)]
    relay = () if registry is None else (f"keep-ro:{registry.parent}", f"relay:{registry}")
    scratch = dict.fromkeys(env[name] for name in _SCRATCH_VARS if env.get(name))
    tagged = [
        *(f"ro:{point}" for point in mount_points),
        *(f"keep-rw:{p}" for p in dict.fromkeys(str(Path(p).resolve()) for p in (cwd, *writable))),
        *(f"keep-ro:{Path(p).resolve()}" for p in read_only),
        *relay[:1],
        *(f"hide:{p}" for p in hide),
        *(f"scratch:{p}" for p in scratch),
        *((f"loopback:{sys.executable}",) if (loopback or relay) and not host_network else ()),
        *relay[1:],
    ]
    return [
        *prefix,
        _SH,
        "-c",
        _LAUNCHER,
        "evalflow-gate",
        isolation.mount,
        isolation.unshare,
        command,
        str(Path(cwd).resolve()),
        str(stage),
        str(limits.disk_bytes),
        *tagged,
    ]


def _limit_hit(
    *,
    exit_code: int,
    timed_out: bool,
    cgroups: _Cgroups,
    report: bytes,
    log: Path,
    limits: GateLimits,
) -> LimitHit | None:
    if exit_code == 0 and not timed_out:
        return None
    if cgroups.counter(cgroups.memory, cgroups.memory_events, "oom_kill") > 0:
        return "memory"
    if cgroups.counter(cgroups.pids, "pids.events", "max") > 0:
        return "processes"
    tmp_full = False
    if match := re.search(rb"tmp (\d+) (\d+)", report):
        free, total = int(match.group(1)), int(match.group(2))
        tmp_full = total > 0 and free <= total * _FULL_FRACTION
    with _open_log(log) as opened:
        output = (
            os.pread(opened[0], _OUTPUT_WINDOW, max(0, opened[1] - _OUTPUT_WINDOW))
            if opened
            else b""
        )
    file_too_big = exit_code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ)
    if tmp_full or file_too_big or _NOSPACE.search(output):
        return "disk"
    if timed_out and not output.strip():
        return "wall time"
    if cgroups.memory is None and limits.memory_bytes is not None and _ALLOC_FAILED.search(output):
        return "memory"
    return None


def execute(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    log: Path,
    isolation: Isolation,
    timeout_s: float,
    limits: GateLimits,
    writable: Sequence[Path] = (),
    hidden: Sequence[Path] = (),
    read_only: Sequence[Path] = (),
    network: bool = False,
    loopback: bool = False,
) -> Execution:
    """Run `command` with ``sh -c`` in `cwd` inside the sandbox; output goes to `log`.

    `log` is created by evalflow (truncated, never followed if it is a symlink) and should lie
    outside every path the gate can write. `cwd` and `writable` are the only writable host
    paths; `hidden` paths are invisible; `read_only` paths are re-exposed read-only even under
    a hidden path; `network=True` (dependency set-up only) lets the command reach
    `REGISTRIES` and nothing else: it keeps its own empty network namespace, whose loopback
    relays to a `_RegistryProxy` evalflow runs for this call, and gets the proxy variables
    (``HTTPS_PROXY``, ``npm_config_https_proxy`` …) on top of `env`; `loopback=True` brings
    up the loopback interface of the command's own network namespace (a server and its client
    inside one sandbox). Without full isolation those path arguments have no effect and
    `network=True` keeps the host network (`Isolation.missing` says so).

    `Execution.limit_hit` is set only for a run that failed or timed out, checked in this order:
    ``memory`` when the gate's cgroup counted an OOM kill and ``processes`` when its pids
    cgroup refused a fork (both exact kernel counters); ``disk`` when the /tmp tmpfs was (all
    but 1 %) full at the end, a file hit ``RLIMIT_FSIZE`` (SIGXFSZ), or the end of the output
    says ``No space left on device`` (heuristics: a gate that freed its space again, or prints
    that text itself, is misread); ``wall time`` when the timeout killed a command that had
    written no output at all (one that printed and then hung is the project's own hang, left
    to `Execution.timed_out`); without a memory cgroup,
    ``memory`` when the end of the output reports an allocation failure (a heuristic: under
    ``RLIMIT_DATA`` an allocation fails with ENOMEM rather than a kill). A hostile gate can
    hit, or imitate, any limit on purpose.
    """
    stage = Path(tempfile.mkdtemp(prefix=".evalflow-stage-", dir=log.parent))
    # A short path of its own: a Unix socket path has at most 107 bytes.
    proxy = (
        _RegistryProxy(Path(tempfile.mkdtemp(prefix="r-", dir=_socket_parent())), REGISTRIES)
        if network and isolation.read_only_root
        else None
    )
    if proxy is not None:
        env = {**env, **_PROXY_ENV}
    ready_read, ready_write = os.pipe()
    cgroups = _Cgroups(isolation, limits)
    pairs = _limit_pairs(
        limits,
        timeout_s,
        rlimit_memory=cgroups.memory is None,
        rlimit_processes=cgroups.pids is None,
    )
    try:
        argv = _launch_args(
            isolation,
            command=command,
            cwd=cwd,
            env=env,
            stage=stage,
            limits=limits,
            writable=writable,
            hidden=hidden,
            read_only=read_only,
            network=network,
            loopback=loopback,
            registry=None if proxy is None else proxy.path,
        )
        started = time.monotonic()
        try:
            fd = os.open(
                log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
            )
            try:
                proc = subprocess.Popen(
                    argv,
                    cwd=cwd,
                    env=dict(env),
                    stdin=ready_write,
                    stdout=fd,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=_child_setup(cgroups, pairs),  # noqa: PLW1509
                )
            finally:
                os.close(fd)
        finally:
            os.close(ready_write)
        exited = _wait_unreaped(proc.pid, started + timeout_s)
        _kill_group(proc.pid)
        exit_code = proc.wait()
        duration = time.monotonic() - started
        os.set_blocking(ready_read, False)
        try:
            report = os.read(ready_read, 4096)
        except BlockingIOError:
            report = b""
        limit_hit = _limit_hit(
            exit_code=exit_code,
            timed_out=not exited,
            cgroups=cgroups,
            report=report,
            log=log,
            limits=limits,
        )
    finally:
        os.close(ready_read)
        cgroups.close()
        with contextlib.suppress(OSError):
            stage.rmdir()
        if proxy is not None:
            proxy.close()
            with contextlib.suppress(OSError):
                proxy.path.parent.rmdir()
    return Execution(
        exit_code=exit_code,
        timed_out=not exited,
        duration_s=round(duration, 3),
        started=report.startswith(b"ready"),
        limit_hit=limit_hit,
    )


def _socket_parent() -> Path:
    """Where the registry proxy's socket goes: the process's workspace (with the warehouse,
    so a killed run's is removed by the next), unless its path is too long for a Unix socket
    (107 bytes): then the system temp directory."""
    parent = scratch_dir("gates").resolve()
    short = len(str(parent)) <= _MAX_SOCKET_PARENT
    return parent if short else Path(tempfile.gettempdir()).resolve()


def new_sandbox(root: Path) -> Path:
    sandbox = Path(tempfile.mkdtemp(prefix="evalflow-gate-", dir=root))
    (sandbox / "home").mkdir()
    (sandbox / "tmp").mkdir()
    return sandbox
