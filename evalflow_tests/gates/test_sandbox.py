"""The sandbox pieces: environment, secret masking, output tails, launcher set-up, clean-up."""

from __future__ import annotations

import math
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from evalflow.domain.gates import mention_pattern
from evalflow.domain.models import GateCommands
from evalflow.errors import InputError
from evalflow.gates import runner
from evalflow.gates import sandbox as sandbox_module
from evalflow.gates.runner import _entry_point, run_gates
from evalflow.gates.sandbox import (
    NO_ISOLATION,
    GateLimits,
    _limit_pairs,
    execute,
    gate_env,
    new_sandbox,
    probe_isolation,
    read_tail,
    remove_tree,
    scan_log,
    scrub,
    secret_values,
)
from evalflow.repo.guard import capture_state, verify_unchanged

ISOLATED = probe_isolation().read_only


def test_gate_env_is_scrubbed_and_sandboxed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_API_TOKEN", "tok-0123456789")
    monkeypatch.setenv("GIT_DIR", "/somewhere/.git")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-x")
    monkeypatch.setenv("PYTHONPATH", "/evaluator")
    monkeypatch.setenv("LANG", "C.UTF-8")
    env = gate_env(tmp_path)
    assert "MY_API_TOKEN" not in env
    assert "GIT_DIR" not in env
    assert "PYTEST_ADDOPTS" not in env
    assert "PYTHONPATH" not in env
    assert env["LANG"] == "C.UTF-8"
    assert env["HOME"] == str(tmp_path / "home")
    assert env["TMPDIR"] == str(tmp_path / "tmp")
    assert env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["PYTHONHASHSEED"] == "0"


def test_secret_values_and_scrub() -> None:
    environ = {
        "ANTHROPIC_API_KEY": "sk-ant-abcdefgh",
        "db_password": "hunter2-long",
        "XKB_KEYMAP": "us",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "GH_TOKEN": "ghp_abcdefgh12345678",
    }
    secrets = secret_values(environ)
    assert secrets == ("ghp_abcdefgh12345678", "sk-ant-abcdefgh", "hunter2-long")
    assert scrub("k=sk-ant-abcdefgh us", secrets) == "k=*** us"


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


def test_scan_log_finds_diff_paths_on_any_line(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    log.write_text("noise\n" * 5000 + "E   at /tmp/c/clone/src/app.py:3\n" + "noise\n" * 10)
    assert scan_log(log, mention_pattern(["src/app.py", "docs/x.md"])) == {"src/app.py"}
    assert scan_log(log, None) == set()


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("python -m pytest -q tests", ("python", "pytest")),
        (".venv/bin/python3.11 -m ruff.__main__ check", (".venv/bin/python3.11", "ruff")),
        ("FOO=1 BAR=2 make test", ("make", None)),
        ("npm test -- --ci", ("npm", None)),
        ("(cd web && npm test)", None),
        ("echo 'unbalanced", None),
        ("   ", None),
    ],
)
def test_entry_point(command: str, expected: tuple[str, str | None] | None) -> None:
    assert _entry_point(command) == expected


def test_limits_default_cpu_never_precedes_the_timeout() -> None:
    pairs = dict(_limit_pairs(GateLimits(), 10.5))
    wanted = math.ceil(10.5) * (os.cpu_count() or 1)
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    assert pairs[resource.RLIMIT_CPU] == (
        wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    )
    assert pairs[resource.RLIMIT_CORE] == 0
    no_as = dict(_limit_pairs(GateLimits(address_space_bytes=None), 1))
    assert resource.RLIMIT_AS not in no_as


def test_leftover_background_processes_are_killed(tmp_path: Path) -> None:
    sandbox = new_sandbox(tmp_path)
    log = sandbox / "out.log"
    run = execute(
        "sleep 30 & echo BG=$!",
        cwd=sandbox,
        env=gate_env(sandbox),
        log=log,
        isolation=NO_ISOLATION,
        read_only_paths=(),
        timeout_s=10,
        limits=GateLimits(),
    )
    assert run.started and run.exit_code == 0 and not run.timed_out
    pid = int(log.read_text().split("BG=")[1])
    deadline = time.monotonic() + 5
    status = Path(f"/proc/{pid}/status")
    while time.monotonic() < deadline and status.exists() and "State:\tZ" not in _read(status):
        time.sleep(0.05)
    assert not status.exists() or "State:\tZ" in _read(status)
    remove_tree(sandbox)
    assert not sandbox.exists()


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
def test_failed_sandbox_set_up_is_a_probed_not_run(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo({"README.md": "x\n"}, {"a.py": "\n"})
    missing = repo.parent / "does-not-exist"
    monkeypatch.setattr(runner, "_read_only_paths", lambda repo, root: (missing,))
    before = capture_state(repo)
    results = run_gates(repo, "head", "base", GateCommands(unit="true"), [], timeout_s=30)
    unit = results[2]
    assert unit.status == "not-run"
    assert unit.probe is not None
    assert "mount --bind -o ro" in unit.probe.command
    assert unit.probe.exit_code == 125
    assert "sandbox could not be set up" in (unit.reason or "")
    verify_unchanged(repo, before)


def test_sandbox_inside_the_repository_is_refused(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"README.md": "x\n"}, {"a.py": "\n"})
    with pytest.raises(InputError, match="inside the evaluated repository"):
        run_gates(repo, "head", "base", GateCommands(), [], sandbox_root=repo / "tmp")


def test_isolation_probe_ladder(monkeypatch: pytest.MonkeyPatch) -> None:
    probe = probe_isolation.__wrapped__
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda name: None)
    assert probe().detail == "`unshare` not found on PATH"
    monkeypatch.setattr(sandbox_module.shutil, "which", lambda name: f"/usr/bin/{name}")
    answers = iter([(False, "mount: permission denied"), (True, "")])
    monkeypatch.setattr(sandbox_module, "_try", lambda argv: next(answers))
    net_only = probe()
    assert net_only.network and not net_only.read_only
    assert "--mount" not in net_only.prefix
    assert "permission denied" in net_only.detail
    monkeypatch.setattr(sandbox_module, "_try", lambda argv: (False, "Operation not permitted"))
    none = probe()
    assert not none.network and none.prefix == ()
    assert any("Operation not permitted" in note for note in none.notes())
    assert len(none.notes()) == 2
