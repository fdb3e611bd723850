"""The sandbox pieces: allow-listed environment, secret masking, log reading, limits, probe.

The attacks on a fully isolated gate live in `evalflow_tests/security/test_gate_sandbox.py`.
"""

from __future__ import annotations

import math
import os
import resource
import sys
import time
from pathlib import Path

import pytest

from evalflow.domain.gates import mention_pattern
from evalflow.errors import InputError
from evalflow.gates import sandbox as sandbox_module
from evalflow.gates.sandbox import (
    NO_ISOLATION,
    GateLimits,
    Isolation,
    _cgroup_parents,
    _limit_pairs,
    execute,
    gate_env,
    new_sandbox,
    probe_isolation,
    read_tail,
    scan_log,
    scrub,
    secret_values,
)
from evalflow.repo.git import remove_tree

ISOLATED = probe_isolation().read_only


def test_gate_env_is_an_allow_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "MY_API_TOKEN": "tok-0123456789",
        "MY_DB_PASSWD": "hunter2-long",
        "DATABASE_URL": "postgres://u:pw@h/db",
        "GIT_DIR": "/somewhere/.git",
        "PYTHONPATH": "/evaluator",
        "SOME_HARMLESS_VAR": "1",
        "LANG": "C.UTF-8",
        "LC_TIME": "C",
        "TZ": "UTC",
    }.items():
        monkeypatch.setenv(name, value)
    env = gate_env(tmp_path, {"NODE_OPTIONS": "--max-old-space-size=4096"})
    assert set(env) - {"TERM", "LC_ALL", "LC_CTYPE"} == {
        "PATH",
        "LANG",
        "LC_TIME",
        "TZ",
        "HOME",
        "TMPDIR",
        "TMP",
        "TEMP",
        "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "CI",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "NODE_OPTIONS",
    }
    assert env["HOME"] == str(tmp_path / "home")
    assert env["TMPDIR"] == env["TMP"] == env["TEMP"] == str(tmp_path / "tmp")
    assert env["XDG_CACHE_HOME"].startswith(env["HOME"])
    assert env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
    assert (env["CI"], env["PYTHONDONTWRITEBYTECODE"], env["PYTHONHASHSEED"]) == ("true", "1", "0")
    assert env["NODE_OPTIONS"] == "--max-old-space-size=4096"


@pytest.mark.parametrize("name", ["1BAD", "A=B", "", "X Y"])
def test_gate_env_rejects_bad_extra_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputError, match="not a valid environment variable"):
        gate_env(tmp_path, {name: "v"})


def test_secret_values_and_scrub() -> None:
    environ = {
        "ANTHROPIC_API_KEY": "sk-ant-abcdefgh",
        "db_password": "hunter2-long",
        "MY_DB_PASSWD": "passwd-0123",
        "XKB_KEYMAP": "us",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "GH_TOKEN": "ghp_abcdefgh12345678",
        "DATABASE_URL": "postgres://u:pw@h/db",
        "MIRROR": "https://alice:longpassword1@example.org/x",
    }
    secrets = secret_values(environ)
    literal = tuple(v for v in secrets if v in str(environ))  # the encodings are tested apart
    assert [len(v) for v in secrets] == sorted((len(v) for v in secrets), reverse=True)
    assert literal == (
        "https://alice:longpassword1@example.org/x",
        "alice:longpassword1@",
        "ghp_abcdefgh12345678",
        "postgres://u:pw@h/db",
        "sk-ant-abcdefgh",
        "longpassword1",
        "hunter2-long",
        "passwd-0123",
        "u:pw@",
    )
    assert scrub("k=sk-ant-abcdefgh us", secrets) == "k=*** us"
    assert scrub("connect postgres://u:pw@h/db", secrets) == "connect ***"
    assert scrub("dial postgres://u:pw@other/db", secrets) == "dial postgres://***other/db"


def test_read_tail_bounds_lines_and_chars_and_masks(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    log.write_text("".join(f"line {i} sk-secret-value\n" for i in range(1000)))
    tail = read_tail(log, lines=200, chars=20_000, secrets=("sk-secret-value",))
    lines = tail.splitlines()
    assert lines[0].startswith("[… earlier output not shown")
    assert len(lines) == 201
    assert lines[-1] == "line 999 ***"
    assert "sk-secret" not in tail
    short = read_tail(log, lines=200, chars=50, secrets=())
    assert short.endswith("line 999 sk-secret-value") and len(short.split("\n", 1)[1]) == 50
    log.write_text("ok\n")
    assert read_tail(log, lines=200, chars=20_000, secrets=()) == "ok"
    assert read_tail(tmp_path / "missing.log", lines=1, chars=1, secrets=()) == ""


def test_log_readers_never_follow_a_symlink_or_read_a_fifo(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("root:x:0:0:src/app.py\n")
    link = tmp_path / "out.log"
    link.symlink_to(outside)
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    pattern = mention_pattern(["src/app.py"])
    for path in (link, fifo):
        assert read_tail(path, lines=10, chars=100, secrets=()) == ""
        assert scan_log(path, pattern) == set()


def test_scan_log_finds_diff_paths_on_any_line(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    log.write_text("noise\n" * 5000 + "E   at /tmp/c/clone/src/app.py:3\n" + "noise\n" * 10)
    assert scan_log(log, mention_pattern(["src/app.py", "docs/x.md"])) == {"src/app.py"}
    assert scan_log(log, None) == set()


def test_limits_defaults_and_rlimit_fallbacks() -> None:
    limits = GateLimits()
    assert (limits.timeout_s, limits.memory_bytes, limits.processes) == (600, 8 << 30, 1024)
    assert (limits.disk_bytes, limits.address_space_bytes) == (4 << 30, None)
    pairs = dict(_limit_pairs(limits, 10.5))
    wanted = math.ceil(10.5) * (os.cpu_count() or 1)
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    assert pairs[resource.RLIMIT_CPU] == (
        wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    )
    assert pairs[resource.RLIMIT_CORE] == 0
    assert resource.RLIMIT_AS not in pairs
    assert pairs[resource.RLIMIT_DATA] == 8 << 30
    assert pairs[resource.RLIMIT_NPROC] == 1024
    by_cgroup = dict(_limit_pairs(limits, 1, rlimit_memory=False, rlimit_processes=False))
    assert resource.RLIMIT_DATA not in by_cgroup and resource.RLIMIT_NPROC not in by_cgroup
    opted_in = dict(_limit_pairs(GateLimits(address_space_bytes=1 << 40), 1))
    hard_as = resource.getrlimit(resource.RLIMIT_AS)[1]
    assert opted_in[resource.RLIMIT_AS] == (
        1 << 40 if hard_as == resource.RLIM_INFINITY else min(1 << 40, hard_as)
    )


def test_leftover_background_processes_are_killed_without_isolation(tmp_path: Path) -> None:
    sandbox = new_sandbox(tmp_path)
    log = sandbox / "out.log"
    run = execute(
        "sleep 30 & echo BG=$!",
        cwd=sandbox,
        env=gate_env(sandbox),
        log=log,
        isolation=NO_ISOLATION,
        timeout_s=10,
        limits=GateLimits(),
    )
    assert run.started and run.exit_code == 0 and not run.timed_out and run.limit_hit is None
    pid = int(log.read_text().split("BG=")[1])
    deadline = time.monotonic() + 5
    status = Path(f"/proc/{pid}/status")
    while time.monotonic() < deadline and status.exists() and "State:\tZ" not in _read(status):
        time.sleep(0.05)
    assert not status.exists() or "State:\tZ" in _read(status)
    remove_tree(sandbox)
    assert not sandbox.exists()


@pytest.mark.parametrize(
    ("command", "hit"),
    [("while :; do :; done", "wall time"), ("echo working; while :; do :; done", None)],
)
def test_timeout_without_output_is_a_wall_time_limit_hit(
    tmp_path: Path, command: str, hit: str | None
) -> None:
    sandbox = new_sandbox(tmp_path)
    run = execute(
        command,
        cwd=sandbox,
        env=gate_env(sandbox),
        log=sandbox / "out.log",
        isolation=NO_ISOLATION,
        timeout_s=0.5,
        limits=GateLimits(),
    )
    assert run.timed_out and run.limit_hit == hit and run.duration_s < 5


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def test_remove_tree_handles_unwritable_directories(tmp_path: Path) -> None:
    sandbox = new_sandbox(tmp_path)
    locked = sandbox / "clone" / "locked"
    locked.mkdir(parents=True)
    (locked / "f").write_text("x")
    locked.chmod(0o500)
    remove_tree(sandbox)
    assert not sandbox.exists()
    remove_tree(sandbox)


@pytest.mark.skipif(not ISOLATED, reason="user/mount namespaces unavailable on this machine")
def test_failed_sandbox_set_up_is_reported_not_started(tmp_path: Path) -> None:
    sandbox = new_sandbox(tmp_path)
    run = execute(
        "true",
        cwd=sandbox,
        env=gate_env(sandbox),
        log=sandbox / "out.log",
        isolation=probe_isolation(),
        timeout_s=30,
        limits=GateLimits(),
        writable=(tmp_path / "does-not-exist",),
    )
    assert not run.started and run.exit_code == 125
    assert "evalflow sandbox: cannot" in (sandbox / "out.log").read_text()
    assert [p.name for p in sandbox.iterdir() if p.name.startswith(".evalflow-stage")] == []


def test_isolation_missing_and_notes() -> None:
    full = Isolation(
        network=True,
        read_only_root=True,
        hidden_paths=True,
        pid_namespace=True,
        tmpfs=True,
        memory_limit=True,
        process_limit=True,
    )
    assert full.missing() == () and full.notes() == () and full.read_only
    rlimits_only = full.model_copy(update={"memory_limit": False, "process_limit": False})
    assert rlimits_only.missing() == ("memory_limit", "process_limit")
    assert any("RLIMIT_DATA" in note for note in rlimits_only.notes())
    assert any("RLIMIT_NPROC does not bind host root" in n for n in rlimits_only.notes())
    assert NO_ISOLATION.missing() == (
        "network",
        "read_only_root",
        "hidden_paths",
        "pid_namespace",
        "memory_limit",
        "process_limit",
        "tmpfs",
    )
    assert not NO_ISOLATION.read_only


def test_isolation_probe_ladder(monkeypatch: pytest.MonkeyPatch) -> None:
    probe = probe_isolation.__wrapped__
    monkeypatch.setattr(sandbox_module, "_probe_cgroups", lambda: (None, "/sys/fs/cgroup/pids"))
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda name: None)
    none_found = probe()
    assert none_found.detail == "`unshare` not found on PATH"
    assert none_found.process_limit and none_found.pids_cgroup == "/sys/fs/cgroup/pids"
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda name: f"/usr/bin/{name}")
    answers = iter([(False, "mount: permission denied"), (True, "")])
    monkeypatch.setattr(sandbox_module, "_probe", lambda candidate: next(answers))
    net_only = probe()
    assert net_only.network and not net_only.read_only_root and not net_only.pid_namespace
    assert "--mount" not in net_only.prefix
    assert "permission denied" in net_only.detail
    monkeypatch.setattr(sandbox_module, "_probe", lambda candidate: (False, "not permitted"))
    none = probe()
    assert not none.network and none.prefix == ()
    assert any("not permitted" in note for note in none.notes())


def test_cgroup_discovery_on_a_fake_hierarchy(tmp_path: Path) -> None:
    # Plain directories accept any file, like cgroups whose controllers are enabled.
    v2, pids = tmp_path / "unified", tmp_path / "pids"
    (v2 / "job").mkdir(parents=True)
    (pids / "job").mkdir(parents=True)
    membership = "8:pids:/job\n4:memory:/elsewhere\n0::/job\n"
    both = [("/", "ext4", "rw"), (str(v2), "cgroup2", "rw"), (str(pids), "cgroup", "rw,pids")]
    assert _cgroup_parents(both, membership) == (str(v2 / "job"), str(v2 / "job"))
    v1_only = [("/", "ext4", "rw"), (str(pids), "cgroup", "rw,pids")]
    assert _cgroup_parents(v1_only, membership) == (None, str(pids / "job"))
    # cgroup v1 with a memory hierarchy (this machine kind): memory.limit_in_bytes there.
    memory = tmp_path / "memory"
    (memory / "elsewhere").mkdir(parents=True)
    v1_memory = [*v1_only, (str(memory), "cgroup", "rw,memory")]
    assert _cgroup_parents(v1_memory, membership) == (str(memory / "elsewhere"), str(pids / "job"))
    assert _cgroup_parents(v1_only, "0::/job\n") == (None, None)
    assert _cgroup_parents([], membership) == (None, None)
