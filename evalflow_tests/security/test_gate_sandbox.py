"""A hostile gate, fully isolated, can only write its scratch and learns no secret.

Every test runs a real command through `execute` with this machine's best isolation and
asserts on the host side. Paths to hide live under /var/tmp, outside /tmp, so it is the hiding
tmpfs that hides them (everything under /tmp is replaced by the private tmpfs anyway).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from evalflow.gates import sandbox as sandbox_module
from evalflow.gates.sandbox import (
    Execution,
    GateLimits,
    execute,
    gate_env,
    new_sandbox,
    probe_isolation,
    read_tail,
)
from evalflow.repo.git import remove_tree
from evalflow_tests.security.hostile import (
    ESCAPE_MARKER,
    connect_gate,
    environ_gate,
    escape_gate,
    fill_disk,
    fork_bomb,
    host_socket_gate,
)

ISOLATION = probe_isolation()
pytestmark = pytest.mark.skipif(
    not (ISOLATION.read_only and ISOLATION.pid_namespace and ISOLATION.network),
    reason=f"user/mount/PID/network namespaces unavailable here: {ISOLATION.detail}",
)
SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-gate-sandbox-0123456789",
    "MY_DB_PASSWD": "db-passwd-0123456789",
    "DATABASE_URL": "postgres://evalflow:url-password-0123@db.example/prod",
}


@dataclass
class Host:
    """The host side of one gate: its sandbox and clone, and the places it must not reach."""

    sandbox: Path
    clone: Path
    outside: Path
    warehouse: Path
    repo: Path
    hidden: Path
    deps: Path

    def run(self, command: str, **kwargs: object) -> tuple[Execution, str]:
        log = self.sandbox / "gate.log"
        options: dict[str, object] = {
            "timeout_s": 30,
            "limits": GateLimits(),
            "hidden": (self.warehouse, self.repo, self.hidden),
            "read_only": (self.deps,),
            "isolation": ISOLATION,
            **kwargs,
        }
        run = execute(
            command,
            cwd=self.clone,
            env=gate_env(self.sandbox),
            log=log,
            **options,  # type: ignore[arg-type]
        )
        return run, log.read_text(errors="replace")


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Host]:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    outside = Path(tempfile.mkdtemp(prefix="evalflow-gate-test-", dir="/var/tmp"))
    warehouse, repo, hidden = outside / "warehouse", outside / "repo", outside / "hidden"
    deps = warehouse / "work" / "gate-deps"
    for directory in (deps, repo, hidden):
        directory.mkdir(parents=True)
    (warehouse / "part.parquet").write_text("PARQUET")
    (deps / "dep.txt").write_text("cached dependency")
    (repo / "README.md").write_text("evaluated repository")
    (hidden / "secret.txt").write_text("hidden-secret-content")
    sandbox = new_sandbox(tmp_path)
    clone = sandbox / "clone"
    clone.mkdir()
    try:
        yield Host(sandbox, clone, outside, warehouse, repo, hidden, deps)
    finally:
        remove_tree(sandbox)
        shutil.rmtree(outside, ignore_errors=True)


def _markers(*roots: Path) -> list[Path]:
    return [p for root in roots if root.exists() for p in root.rglob(f"{ESCAPE_MARKER}-*")]


def test_gate_writes_only_its_clone_home_and_tmpdir(host: Host) -> None:
    home = Path.home() / ".bashrc"
    before = home.stat().st_mtime_ns if home.exists() else None
    host_tmp = Path("/tmp")
    targets = {
        "root": Path("/"),
        "host-tmp": host_tmp,
        "warehouse": host.warehouse,
        "deps": host.deps,
        "repo": host.repo,
        "hidden": host.hidden,
        "sandbox-dir": host.sandbox,
        "clone": host.clone,
        "home": Path(gate_env(host.sandbox)["HOME"]),
        "tmpdir": Path(gate_env(host.sandbox)["TMPDIR"]),
    }
    command = f"touch -c {home} 2>/dev/null && echo 'wrote bashrc'; {escape_gate(targets)}"
    run, output = host.run(command)
    assert run.started and run.exit_code == 0, output
    wrote = {line.split()[1] for line in output.splitlines() if line.startswith("wrote ")}
    # The sandbox directory lies under /tmp, so inside the gate it is part of the private tmpfs.
    assert wrote == {"host-tmp", "sandbox-dir", "clone", "home", "tmpdir"}
    # On the host only the clone got its file: /tmp, HOME and TMPDIR were the gate's tmpfs.
    found = _markers(host.outside, host.sandbox) + list(host_tmp.glob(f"{ESCAPE_MARKER}-*"))
    assert found == [host.clone / f"{ESCAPE_MARKER}-clone"]
    assert not Path(f"/{ESCAPE_MARKER}-root").exists()
    assert (home.stat().st_mtime_ns if home.exists() else None) == before
    assert (host.warehouse / "part.parquet").read_text() == "PARQUET"


def test_hidden_paths_are_empty_and_read_only_paths_readable(host: Host) -> None:
    (host.clone / "leak.txt").symlink_to(host.hidden / "secret.txt")
    command = (
        f"ls -A {host.hidden} {host.repo} {host.warehouse}; cat leak.txt; "
        f"cat {host.deps}/dep.txt; rm -f {host.deps}/dep.txt || echo deps-read-only; "
        "mount -o remount,rw / 2>&1; umount " + str(host.hidden) + " 2>&1; exit 0"
    )
    run, output = host.run(command)
    assert run.started, output
    for content in ("hidden-secret-content", "README.md", "part.parquet", "secret.txt"):
        assert content not in output
    assert "cached dependency" in output and "deps-read-only" in output
    assert (host.deps / "dep.txt").exists()


def test_no_secret_reaches_the_gate_or_its_tail(host: Host) -> None:
    run, output = host.run(environ_gate())
    assert run.started and run.exit_code == 0
    for name, value in SECRETS.items():
        assert name not in output
        assert value not in output
    assert "url-password-0123" not in output
    assert "CI=true" in output


def test_symlinked_log_never_leaks_a_file_into_the_tail(host: Host) -> None:
    log = host.sandbox / "gate.log"
    command = (
        f"ln -sf {host.hidden}/secret.txt {log} 2>/dev/null; "
        f"ln -sf /etc/passwd out.log; ln -sf /etc/passwd {log} 2>/dev/null; echo done"
    )
    run, output = host.run(command)
    assert run.started and not log.is_symlink()
    tail = read_tail(log, lines=50, chars=5000, secrets=())
    assert tail == "done" == output.strip()
    assert read_tail(host.clone / "out.log", lines=50, chars=5000, secrets=()) == ""


def test_network_is_unreachable_and_the_listener_receives_nothing(host: Host) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        run, output = host.run(connect_gate(listener.getsockname()[1]))
        assert run.started and "blocked" in output and "connected" not in output
        with pytest.raises(BlockingIOError):
            listener.accept()


def _alive(tag: int) -> list[int]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if cmdline.read_bytes().split(b"\0")[:2] == [b"sleep", str(tag).encode()]:
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


@pytest.mark.skipif(ISOLATION.pids_cgroup is None, reason="no writable pids cgroup here")
def test_fork_bomb_stops_at_the_process_limit(host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Path] = []
    close = sandbox_module._Cgroups.close

    def recording_close(self: sandbox_module._Cgroups) -> None:
        made.extend(self.dirs)
        close(self)

    monkeypatch.setattr(sandbox_module._Cgroups, "close", recording_close)
    tag = 4000 + uuid.uuid4().int % 1000
    started = time.monotonic()
    run, output = host.run(fork_bomb(2000, tag), limits=GateLimits(processes=64))
    assert run.limit_hit == "processes", output[-500:]
    assert time.monotonic() - started < 20
    assert _alive(tag) == []
    assert made and not any(path.exists() for path in made)


def test_writing_5_gib_to_tmp_stops_at_the_disk_limit(host: Host) -> None:
    started = time.monotonic()
    run, output = host.run(fill_disk("$TMPDIR/fill", 5120), limits=GateLimits(disk_bytes=16 << 20))
    assert run.limit_hit == "disk", output
    assert "No space left on device" in output
    assert time.monotonic() - started < 10


def test_background_processes_die_with_the_gate(host: Host) -> None:
    tag = 5000 + uuid.uuid4().int % 1000
    run, _ = host.run(f"sleep {tag} & setsid sleep {tag} & echo started")
    assert run.started and run.exit_code == 0 and not run.timed_out
    assert _alive(tag) == []


def test_infinite_loop_ends_at_the_timeout(host: Host) -> None:
    run, _ = host.run("while :; do :; done", timeout_s=1)
    assert run.timed_out and run.limit_hit == "wall time" and run.duration_s < 5


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_webassembly_reservation_survives_the_default_limits(host: Host) -> None:
    script = "new WebAssembly.Memory({initial: 1, maximum: 65536}); console.log('wasm ok')"
    command = f'node -e "{script}"'
    run, output = host.run(command)
    assert run.exit_code == 0 and "wasm ok" in output, output
    # The same reservation under the old fixed 4 GiB address-space limit fails.
    capped, _ = host.run(command, limits=GateLimits(address_space_bytes=4 << 30))
    assert capped.exit_code != 0


def _host_segments() -> set[str]:
    done = subprocess.run(["ipcs", "-m"], capture_output=True, text=True, timeout=10, check=True)
    return {line.split()[1] for line in done.stdout.splitlines() if line.startswith("0x")}


@pytest.mark.skipif(shutil.which("ipcmk") is None, reason="ipcmk (util-linux) is not installed")
def test_shared_memory_of_a_gate_dies_with_it(host: Host) -> None:
    before = _host_segments()
    # The control: a segment made on the host outlives the process that made it.
    made = subprocess.run(
        ["ipcmk", "-M", "65536"], capture_output=True, text=True, timeout=10, check=True
    )
    shmid = made.stdout.split()[-1]
    try:
        assert shmid in _host_segments() - before
    finally:
        subprocess.run(["ipcrm", "-m", shmid], capture_output=True, timeout=10, check=False)
    before = _host_segments()
    run, output = host.run("ipcmk -M 67108864 && ipcs -m | grep -c '^0x'")
    assert run.exit_code == 0, output
    assert "Shared memory id" in output
    assert _host_segments() == before


_PRIVATE_DEV = {"full", "null", "random", "shm", "tty", "urandom", "zero"}
_PRIVATE_DEV_LINKS = {"fd", "stdin", "stdout", "stderr"}


def _host_write_targets() -> list[Path]:
    """Device nodes of the host that root can open for writing: a block device, /dev/kmsg."""
    blocks = sorted(p for p in Path("/dev").iterdir() if p.is_block_device())
    return [*blocks[:1], *([Path("/dev/kmsg")] if Path("/dev/kmsg").exists() else [])]


def _opens_for_writing(path: Path) -> bool:
    # Opened only, nothing written: the open is the escape (a write would corrupt the host).
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NOCTTY))
    except OSError:
        return False
    return True


def test_a_gate_sees_only_a_private_minimal_dev(host: Host) -> None:
    targets = _host_write_targets()
    # The control: outside evalflow this user opens them for writing (as root it can).
    writable = [t for t in targets if _opens_for_writing(t)]
    if not writable:
        pytest.skip("no host block device or /dev/kmsg is writable by this user")
    opener = "; ".join(
        f"python -c 'import os; os.close(os.open(\"{t}\", os.O_WRONLY | os.O_NOCTTY))' "
        f"2>/dev/null && echo 'opened {t}'"
        for t in writable
    )
    run, output = host.run(
        f"{opener}; echo entries $(ls -A /dev); echo links $(find /dev -maxdepth 1 -type l); "
        "echo x > /dev/null && head -c 4 /dev/urandom | wc -c; "
        "echo shared > /dev/shm/s && cat /dev/shm/s; touch /dev/planted 2>/dev/null || echo ro"
    )
    assert run.started and run.exit_code == 0, output
    assert "opened" not in output
    lines = dict(line.split(" ", 1) for line in output.splitlines() if " " in line)
    assert set(lines["entries"].split()) == _PRIVATE_DEV | _PRIVATE_DEV_LINKS
    assert {Path(p).name for p in lines["links"].split()} == _PRIVATE_DEV_LINKS
    assert output.splitlines()[-3:] == ["4", "shared", "ro"]


@dataclass
class HostServices:
    """Services of the host a setup must not reach: TCP on 127.0.0.1, a Unix socket under
    /run, an abstract Unix socket. Each counts the connections it accepted."""

    tcp: socket.socket
    unix: socket.socket
    abstract: socket.socket
    unix_path: Path
    abstract_name: str

    def accepted(self) -> list[str]:
        found = []
        for name in ("tcp", "unix", "abstract"):
            try:
                getattr(self, name).accept()[0].close()
                found.append(name)
            except BlockingIOError:
                continue
        return found


@pytest.fixture
def services() -> Iterator[HostServices]:
    tag = uuid.uuid4().hex[:12]
    unix_path = Path("/run") / f"evalflow-test-{tag}.sock"
    sockets = []
    try:
        for family, address in (
            (socket.AF_INET, ("127.0.0.1", 0)),
            (socket.AF_UNIX, str(unix_path)),
            (socket.AF_UNIX, f"\0evalflow-test-{tag}"),
        ):
            sock = socket.socket(family)
            sockets.append(sock)
            sock.bind(address)
            sock.listen()
            sock.setblocking(False)
    except OSError as exc:
        for sock in sockets:
            sock.close()
        pytest.skip(f"cannot listen on a host socket under /run: {exc}")
    try:
        yield HostServices(*sockets, unix_path, f"evalflow-test-{tag}")
    finally:
        for sock in sockets:
            sock.close()
        unix_path.unlink(missing_ok=True)


def test_setup_reaches_no_host_socket(host: Host, services: HostServices) -> None:
    attack = host_socket_gate(
        services.tcp.getsockname()[1], str(services.unix_path), services.abstract_name
    )
    # The control: the same program outside evalflow reaches all three.
    done = subprocess.run(
        attack, shell=True, capture_output=True, text=True, timeout=30, check=True
    )
    assert [line for line in done.stdout.splitlines() if "connected" in line][:3] == [
        "tcp connected",
        "unix connected",
        "abstract connected",
    ], done.stdout + done.stderr
    assert services.accepted() == ["tcp", "unix", "abstract"]
    run, output = host.run(attack, network=True)
    assert run.started and run.exit_code == 0, output
    outcome = {line.split()[0]: line.split()[1] for line in output.splitlines() if line.strip()}
    assert outcome == {
        "tcp": "blocked",
        "unix": "blocked",
        "abstract": "blocked",
        "relay": "refused",
    }, output
    assert services.accepted() == []


def test_setup_reaches_an_allowed_registry_through_the_relay(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as registry:
        registry.bind(("127.0.0.1", 0))
        registry.listen()
        port = registry.getsockname()[1]
        # Offline stand-in for pypi.org:443: the proxy allows exactly this name and port.
        monkeypatch.setattr(sandbox_module, "REGISTRIES", frozenset({("localhost", port)}))

        def answer() -> None:
            conn, _ = registry.accept()
            with conn:
                conn.sendall(b"registry:" + conn.recv(100))

        server = threading.Thread(target=answer, daemon=True)
        server.start()
        script = (
            "import os, socket\n"
            "s = socket.create_connection(('127.0.0.1', 3128), timeout=10)\n"
            f"s.sendall(b'CONNECT localhost:{port} HTTP/1.1\\r\\n\\r\\n')\n"
            "print(s.recv(100).split(b'\\r\\n')[0].decode())\n"
            "s.sendall(b'ping')\n"
            "print(s.recv(100).decode())\n"
            "print(os.environ['HTTPS_PROXY'], os.environ['npm_config_https_proxy'])\n"
        )
        (host.clone / "fetch.py").write_text(script)
        run, output = host.run("python fetch.py", network=True)
        server.join(timeout=10)
    assert run.exit_code == 0, output
    assert output.splitlines() == [
        "HTTP/1.1 200 Connection established",
        "registry:ping",
        "http://127.0.0.1:3128 http://127.0.0.1:3128",
    ]


def test_a_hidden_path_inside_another_is_hidden_with_it(host: Host) -> None:
    # A repository inside the operator's home, both hidden: the set-up used to fail.
    run, output = host.run(
        f"ls -A {host.outside}; ls -A {host.repo} 2>&1; cat {host.deps}/dep.txt",
        hidden=(host.repo, host.outside),
    )
    assert run.started and run.exit_code == 0, output
    # Only the way to the re-exposed dependency cache is left of the outer hidden path.
    assert output.splitlines()[0] == "warehouse"
    assert "README.md" not in output and "cached dependency" in output


@pytest.mark.skipif(ISOLATION.memory_cgroup is None, reason="no writable memory cgroup here")
def test_the_memory_limit_bounds_the_sum_of_a_gates_processes(host: Host) -> None:
    # Four processes of 96 MiB each, every one under a 256 MiB limit, 384 MiB together.
    hog = "python -c 'import time; b = bytearray(96 << 20); time.sleep(3)'"
    command = f"{hog} & {hog} & {hog} & {hog} & wait %1 && wait %2 && wait %3 && wait %4"
    limits = GateLimits(memory_bytes=256 << 20)
    # The control: bounded per process only (RLIMIT_DATA, no cgroup), they all run.
    per_process = ISOLATION.model_copy(update={"memory_cgroup": None, "memory_limit": False})
    control, output = host.run(command, limits=limits, isolation=per_process)
    assert control.exit_code == 0 and control.limit_hit is None, output
    run, output = host.run(command, limits=limits)
    assert run.exit_code != 0 and run.limit_hit == "memory", output
