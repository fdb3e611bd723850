"""Gates run for real in throw-away clones: statuses, timeouts, probes, base re-runs, hostility."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from evalflow.domain.gates import NO_COMMAND_REASON, confirmed_failure
from evalflow.domain.models import GateCommands, GateSettings
from evalflow.errors import InputError, ReadOnlyViolationError
from evalflow.gates import GateCaches, GateLimits, probe_isolation, run_gates
from evalflow.gates import runner as runner_module
from evalflow.repo import git as git_module
from evalflow.repo.builder import build_repo
from evalflow.repo.guard import capture_state, verify_unchanged

DEMO = Path(__file__).resolve().parents[2] / "data" / "benchmarks" / "trialist"
FAKE_KEY = "sk-ant-fake-0123456789abcdef"
ISOLATED = probe_isolation().read_only
needs_isolation = pytest.mark.skipif(
    not ISOLATED, reason="user/mount namespaces unavailable on this machine"
)

HOSTILE_SH = """\
target="$1"
if echo pwned > "$target/PWNED.txt" 2>/dev/null
then echo TARGET-WRITTEN
else echo TARGET-BLOCKED
fi
echo pwned > "$HOME/pwned.txt" && echo "HOME-WRITE=$HOME"
env
cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -i api_key
cat secret.txt
python net.py "$2"
exit 0
"""
NET_PY = """\
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()
    print("NET-CONNECTED")
except OSError as exc:
    print(f"NET-BLOCKED: {exc}")
"""


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    sock.setblocking(False)
    yield sock
    sock.close()


def _accepted(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def test_pass_fail_and_missing_command(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"README.md": "x\n"}, {"ok.py": "print('built')\n"})
    before = capture_state(repo)
    results = run_gates(
        repo,
        "head",
        "base",
        GateCommands(build="python -c 'raise SystemExit(1)'", unit="python -c 'exit(3)'"),
        ["ok.py"],
        build_command="python ok.py",
        rerun_on_base=(),
        timeout_s=30,
    )
    by_gate = {r.gate: r for r in results}
    assert [r.gate for r in results] == ["build", "lint", "unit", "e2e"]
    assert by_gate["build"].status == "pass"
    assert by_gate["build"].command == "python ok.py"
    assert "built" in by_gate["build"].output_tail
    assert "fixed build command" in by_gate["build"].notes[-1]
    assert by_gate["unit"].status == "fail"
    assert by_gate["unit"].exit_code == 3
    for gate in ("lint", "e2e"):
        assert by_gate[gate].status == "unscored"
        assert by_gate[gate].reason == NO_COMMAND_REASON
        assert by_gate[gate].probe is None
    assert by_gate["unit"].category == "failed"
    assert confirmed_failure(results)
    verify_unchanged(repo, before)


def test_hanging_gate_is_killed_at_its_timeout(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"README.md": "x\n"}, {"hang.py": "while True:\n    pass\n"})
    results = run_gates(
        repo,
        "head",
        "base",
        GateCommands(unit="echo started; sleep 60 & python hang.py", e2e="python hang.py"),
        [],
        timeout_s=2,
        rerun_on_base=(),
    )
    unit, e2e = results[2], results[3]
    assert unit.status == "fail"
    assert unit.timed_out
    assert 2 <= unit.duration_s < 10
    assert "timeout" in unit.notes[-1]
    assert "started" in (unit.evidence or "")
    # Silent until killed: nothing shows the project's code ran, so it is not a ✗.
    assert e2e.status == "not-run"
    assert e2e.category == "infra"
    assert e2e.evidence == "timed out without any output"
    assert confirmed_failure(results)


def test_missing_executable_and_module_are_probed_not_runs(
    make_repo: Callable[..., Path],
) -> None:
    repo = make_repo({"README.md": "x\n"}, {"a.py": "\n"})
    results = run_gates(
        repo,
        "head",
        "base",
        GateCommands(
            unit="nonexistent-tool --version",
            lint="python -m evalflow_no_such_module check .",
            e2e="FOO=1 nonexistent-tool run",
        ),
        [],
        timeout_s=30,
    )
    lint, unit, e2e = results[1], results[2], results[3]
    assert unit.status == "not-run"
    assert unit.category == "infra"
    assert unit.probe is not None
    assert unit.probe.command == "nonexistent-tool --version"
    assert unit.probe.exit_code == 127
    assert "nonexistent-tool" in unit.probe.output
    assert "exit 127" in (unit.evidence or "")
    assert "nonexistent-tool" in (unit.evidence or "")
    assert e2e.status == "not-run"
    assert lint.status == "not-run"
    assert lint.category == "infra"
    assert "evalflow_no_such_module" in (lint.evidence or "")
    assert not confirmed_failure(results)


def test_pre_existing_failure_versus_failures_caused_by_the_change(
    make_repo: Callable[..., Path],
) -> None:
    legacy = 'echo "legacy/old.py:1: E999 broken"; exit 1\n'
    mention = 'echo "new/feature.py:3: assertion failed"; exit 1\n'
    repo = make_repo(
        {"legacy.sh": legacy, "mention.sh": mention, "change.sh": "exit 0\n"},
        {"new/feature.py": "x = 1\n", "change.sh": "echo broke; exit 1\n"},
    )
    before = capture_state(repo)
    results = run_gates(
        repo,
        "head",
        "base",
        GateCommands(
            build="sh change.sh", lint="sh legacy.sh", unit="sh mention.sh", e2e="sh change.sh"
        ),
        ["new/feature.py", "change.sh"],
        timeout_s=30,
    )
    build, lint, unit, e2e = results
    assert build.status == "fail"
    assert build.base_exit_code is None
    assert lint.status == "pre-existing"
    assert lint.base_exit_code == 1
    assert "also fails on base" in lint.notes[-1]
    assert unit.status == "fail"
    assert "new/feature.py" in unit.notes[-1]
    assert e2e.status == "fail"
    assert "passes on the base commit" in e2e.notes[-1]
    assert not confirmed_failure([lint])
    verify_unchanged(repo, before)


def test_file_size_limit_applies(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(
        {"README.md": "x\n"}, {"big.py": "with open('big', 'wb') as f:\n    f.write(b'x' * 4096)\n"}
    )
    results = run_gates(
        repo,
        "head",
        "base",
        GateCommands(unit="python big.py"),
        [],
        timeout_s=30,
        rerun_on_base=(),
        limits=GateLimits(file_size_bytes=1024),
    )
    assert results[2].status == "fail"


def _hostile_repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo(
        {"README.md": "x\n"},
        {"hostile.sh": HOSTILE_SH, "net.py": NET_PY, "secret.txt": f"leak {FAKE_KEY}\n"},
    )


@needs_isolation
def test_hostile_gate_is_contained(
    make_repo: Callable[..., Path],
    listener: socket.socket,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_home = tmp_path / "real-home"
    real_home.mkdir()
    monkeypatch.setenv("HOME", str(real_home))
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    repo = _hostile_repo(make_repo)
    port = listener.getsockname()[1]
    before = capture_state(repo)
    results = run_gates(
        repo,
        "head",
        "base",
        GateCommands(unit=f"sh hostile.sh {repo} {port}"),
        [],
        timeout_s=30,
    )
    unit = results[2]
    assert unit.status == "pass", unit.output_tail
    assert unit.network_isolated and unit.target_read_only
    out = unit.output_tail
    assert "TARGET-BLOCKED" in out
    assert "NET-BLOCKED" in out
    assert not _accepted(listener)
    assert FAKE_KEY not in unit.model_dump_json()
    assert "leak ***" in out
    sandbox_home = next(line for line in out.splitlines() if line.startswith("HOME-WRITE="))
    assert not Path(sandbox_home.removeprefix("HOME-WRITE=")).exists()
    assert not (real_home / "pwned.txt").exists()
    verify_unchanged(repo, before)
    assert not (repo / "PWNED.txt").exists()


def test_without_isolation_the_guard_catches_a_write_into_the_target(
    make_repo: Callable[..., Path], listener: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    repo = _hostile_repo(make_repo)
    port = listener.getsockname()[1]
    with pytest.raises(ReadOnlyViolationError, match="gate unit \\(head\\) changed") as caught:
        run_gates(
            repo,
            "head",
            "base",
            GateCommands(unit=f"sh hostile.sh {repo} {port}"),
            [],
            timeout_s=30,
            isolation="none",
        )
    assert "file contents changed" in str(caught.value) or "status changed" in str(caught.value)
    assert FAKE_KEY not in str(caught.value)


def test_without_isolation_the_result_says_so(
    make_repo: Callable[..., Path], listener: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    repo = make_repo({"README.md": "x\n"}, {"net.py": NET_PY, "secret.txt": f"leak {FAKE_KEY}\n"})
    port = listener.getsockname()[1]
    before = capture_state(repo)
    results = run_gates(
        repo,
        "head",
        "base",
        GateCommands(unit=f"env; cat secret.txt; python net.py {port}"),
        [],
        timeout_s=30,
        isolation="none",
    )
    unit = results[2]
    assert unit.status == "pass"
    assert not unit.network_isolated
    assert not unit.target_read_only
    assert any("network isolation unavailable" in note for note in unit.notes)
    assert FAKE_KEY not in unit.model_dump_json()
    assert "leak ***" in unit.output_tail
    verify_unchanged(repo, before)


def _demo_run(name: str, tmp_path: Path) -> tuple[Path, GateCommands, list[str]]:
    manifest = yaml.safe_load((DEMO / "runs" / f"{name}-r1.yaml").read_text())
    repo = build_repo(DEMO / "sources" / name, tmp_path / name)
    diff = subprocess.run(
        ["git", "-C", str(repo), "diff", "--name-only", "base..head"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()
    return repo, GateCommands(**manifest["gates"]), diff


def test_demo_speckit_passes_every_gate(tmp_path: Path) -> None:
    repo, commands, diff = _demo_run("speckit", tmp_path)
    before = capture_state(repo)
    results = run_gates(repo, "head", "base", commands, diff, timeout_s=120)
    assert [r.status for r in results] == ["pass"] * 4, results
    assert not confirmed_failure(results)
    verify_unchanged(repo, before)


def test_demo_bmad_fails_unit_on_one_proration_test(tmp_path: Path) -> None:
    repo, commands, diff = _demo_run("bmad", tmp_path)
    before = capture_state(repo)
    results = run_gates(repo, "head", "base", commands, diff, timeout_s=120)
    assert [r.status for r in results] == ["pass", "pass", "fail", "pass"]
    unit = results[2]
    assert unit.command == commands.unit
    assert "1 failed" in unit.output_tail
    assert "FAILED tests/unit/test_proration.py::" in unit.output_tail
    assert unit.base_exit_code == 0
    assert confirmed_failure(results)
    verify_unchanged(repo, before)


# --- setup, classification against base, the result cache --------------------------------


def test_setup_runs_once_before_the_gates_in_the_same_clone(
    make_repo: Callable[..., Path],
) -> None:
    repo = make_repo({"README.md": "x\n"}, {"a.txt": "a\n"})
    venv_tool = (
        "mkdir -p .venv/bin && printf '#!/bin/sh\\necho venv-tool\\n' > .venv/bin/mytool "
        "&& chmod +x .venv/bin/mytool"
    )
    results = run_gates(
        repo,
        "head",
        "base",
        GateCommands(build="test -f installed.txt", unit="cat installed.txt", e2e="mytool"),
        [],
        timeout_s=30,
        settings=GateSettings(setup=("echo dep > installed.txt", venv_tool)),
    )
    setup, build, lint, unit, e2e = results
    assert setup.gate == "setup"
    assert setup.status == "pass"
    assert setup.command == f"echo dep > installed.txt && {venv_tool}"
    assert not setup.network_isolated  # the one step with network
    assert build.status == unit.status == "pass"
    assert "dep" in unit.output_tail
    assert unit.setup_command == setup.command
    assert lint.status == "unscored"
    # The clone's own .venv/bin comes first on PATH.
    assert e2e.status == "pass"
    assert "venv-tool" in e2e.output_tail


@pytest.mark.parametrize(
    ("output", "setup_status", "category"),
    [("npm error code E404 - lockfile names a missing package", "fail", "failed"),
     ("npm error code EAI_AGAIN", "not-run", "infra")],
)  # fmt: skip
def test_a_setup_that_does_not_pass_makes_every_gate_not_run(
    make_repo: Callable[..., Path], output: str, setup_status: str, category: str
) -> None:
    repo = make_repo({"README.md": "x\n"}, {"a.txt": "a\n"})
    setup_command = f"echo '{output}'; exit 1"
    results = run_gates(
        repo,
        "head",
        "base",
        GateCommands(build="true", unit="false"),
        [],
        timeout_s=30,
        settings=GateSettings(setup=setup_command),
    )
    setup = results[0]
    assert setup.status == setup_status
    assert setup.category == category
    assert output.split(" - ", maxsplit=1)[0] in (setup.evidence or "")
    for gate in (results[1], results[3]):
        assert gate.status == "not-run"
        assert gate.category == "setup"
        assert gate.probe is not None
        assert gate.probe.command == setup_command
        assert output in gate.probe.output
    assert not confirmed_failure(results)


def test_auto_setup_with_nothing_to_install_adds_no_step(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"README.md": "x\n"}, {"main.sh": "exit 0\n"})
    results = run_gates(
        repo,
        "head",
        "base",
        GateCommands(unit="sh main.sh"),
        [],
        settings=GateSettings(setup="auto"),
    )
    assert [r.gate for r in results] == ["build", "lint", "unit", "e2e"]
    assert results[2].status == "pass"
    assert results[2].setup_command is None


def test_a_base_without_the_projects_manifest_is_not_compared(
    make_repo: Callable[..., Path],
) -> None:
    repo = make_repo(
        {"README.md": "template\n", "t.sh": "exit 1\n"},
        {"pyproject.toml": "[project]\nname = 'x'\n", "t.sh": "exit 1\n"},
    )
    results = run_gates(repo, "head", "base", GateCommands(unit="sh t.sh"), [], timeout_s=30)
    unit = results[2]
    assert unit.status == "fail"
    assert unit.base_exit_code is None
    assert "base not comparable (base has no pyproject.toml)" in unit.notes[-1]
    assert confirmed_failure(results)


def test_base_gets_the_same_setup_before_the_comparison(make_repo: Callable[..., Path]) -> None:
    legacy = "test -f marker || exit 9\necho 'legacy/old.py:1: broken'; exit 1\n"
    repo = make_repo(
        {"requirements.txt": "\n", "legacy.sh": legacy},
        {"requirements.txt": "\n", "legacy.sh": legacy, "new.py": "x = 1\n"},
    )
    results = run_gates(
        repo,
        "head",
        "base",
        GateCommands(lint="sh legacy.sh"),
        ["new.py"],
        timeout_s=30,
        settings=GateSettings(setup="touch marker"),
    )
    lint = results[2]
    assert lint.status == "pre-existing", lint.notes
    assert lint.base_exit_code == 1


def test_infra_on_base_makes_it_incomparable(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(
        {"check.sh": "nonexistent-tool\n"},
        {"check.sh": "echo 'FAILED test_x'; exit 1\n"},
    )
    results = run_gates(repo, "head", "base", GateCommands(unit="sh check.sh"), [], timeout_s=30)
    unit = results[2]
    assert unit.status == "fail"
    assert "base not comparable (on base: exit 127" in unit.notes[-1]


def test_an_unchanged_run_reuses_stored_results(
    make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(
        {"README.md": "x\n"}, {"ok.sh": "echo ok\n", "bad.sh": "echo FAILED; exit 1\n"}
    )
    calls: list[str] = []
    real = runner_module.execute

    def counting(command: str, **kwargs: object):
        calls.append(command)
        return real(command, **kwargs)

    monkeypatch.setattr(runner_module, "execute", counting)
    caches = GateCaches.under(tmp_path / "work")
    commands = GateCommands(build="sh ok.sh", lint="nonexistent-tool", unit="sh bad.sh")
    settings = GateSettings(setup="echo setup")

    def run(gates: GateCommands = commands, **kw: object) -> list:
        return run_gates(
            repo, "head", "base", gates, [], timeout_s=30, settings=settings, caches=caches, **kw
        )

    first = run()
    assert [r.status for r in first] == ["pass", "pass", "not-run", "fail", "unscored"]
    assert not any(r.cached for r in first)
    calls.clear()
    second = run()
    # Only the infra not-run runs again (the environment may have been fixed since), so the
    # setup runs too; pass and fail come from the cache with their original time.
    assert calls == ["echo setup", "nonexistent-tool"]
    assert [r.cached for r in second] == [False, True, False, True, False]
    assert second[1].ran_at == first[1].ran_at
    calls.clear()
    no_infra = GateCommands(build="sh ok.sh", unit="sh bad.sh")
    run(no_infra)
    calls.clear()
    third = run(no_infra)
    assert calls == []
    assert [r.status for r in third] == ["pass", "pass", "unscored", "fail", "unscored"]
    assert all(r.cached for r in third if r.status != "unscored")
    calls.clear()
    run(GateCommands(build="sh ok.sh", unit="sh bad.sh; true"))
    assert calls == ["echo setup", "sh bad.sh; true"]
    calls.clear()
    run(no_infra, rerun=True)
    assert calls == ["echo setup", "sh ok.sh", "sh bad.sh"]


def test_gate_env_values_and_pass_through(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALFLOW_TEST_PASSED", "yes")
    repo = make_repo({"README.md": "x\n"}, {"a.txt": "a\n"})
    results = run_gates(
        repo,
        "head",
        "base",
        GateCommands(unit='test "$FOO" = bar && test "$EVALFLOW_TEST_PASSED" = yes'),
        [],
        timeout_s=30,
        settings=GateSettings(gate_env={"FOO": "bar", "EVALFLOW_TEST_PASSED": None}),
    )
    assert results[2].status == "pass", results[2].evidence


def test_required_isolation_that_is_missing_is_a_clear_error(
    make_repo: Callable[..., Path],
) -> None:
    repo = make_repo({"README.md": "x\n"}, {"a.txt": "a\n"})
    with pytest.raises(InputError, match="gate isolation required but unavailable: network"):
        run_gates(
            repo,
            "head",
            "base",
            GateCommands(unit="true"),
            [],
            isolation="none",
            require_isolation=True,
        )
    results = run_gates(repo, "head", "base", GateCommands(unit="true"), [], isolation="none")
    assert "network" in results[2].isolation_missing


@pytest.fixture
def warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A warehouse work dir this test's git workspace and gate sandboxes live under, and an
    empty system temp directory that must stay empty. Outside /tmp: under it, the gate's
    private /tmp would hide the warehouse whatever the sandbox does."""
    place = Path(tempfile.mkdtemp(prefix="evalflow-warehouse-", dir="/var/tmp"))
    monkeypatch.setattr(git_module, "_WORK_ROOT", [])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "system-tmp"))
    (tmp_path / "system-tmp").mkdir()
    git_module.use_work_root(place / "warehouse")
    yield place / "warehouse"
    shutil.rmtree(place)


@needs_isolation
def test_gates_run_under_the_hidden_warehouse_and_leave_the_system_temp_empty(
    make_repo: Callable[..., Path], warehouse: Path
) -> None:
    repo = make_repo({"README.md": "x\n"}, {"a.txt": "a\n"})
    (warehouse / "secret.txt").parent.mkdir(parents=True, exist_ok=True)
    (warehouse / "secret.txt").write_text("WAREHOUSE-SECRET\n")
    command = (
        f"pwd; cat {warehouse}/secret.txt; ls -a {warehouse} | sed s/^/LS:/; "
        'echo h > "$HOME/h" && echo t > "$TMPDIR/t" && echo c > c && echo SCRATCH-OK'
    )
    (unit,) = [
        r
        for r in run_gates(repo, "head", "base", GateCommands(unit=command), [], hidden=[warehouse])
        if r.gate == "unit"
    ]
    assert unit.status == "pass", unit.output_tail
    assert str(warehouse.resolve() / "tmp") in unit.output_tail  # the clone lives there
    assert "WAREHOUSE-SECRET" not in unit.output_tail and "LS:secret.txt" not in unit.output_tail
    assert "SCRATCH-OK" in unit.output_tail
    assert list(Path(tempfile.gettempdir()).iterdir()) == []
    (workspace,) = (warehouse / "tmp").iterdir()  # this process's, removed at its exit
    assert list((workspace / "gates").iterdir()) == []  # each sandbox removed after its gate


def test_a_killed_runs_gate_sandbox_is_removed_by_the_next_run(
    make_repo: Callable[..., Path], warehouse: Path
) -> None:
    killed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, signal, sys; from pathlib import Path\n"
            "from evalflow.repo.git import scratch_dir, use_work_root\n"
            "from evalflow.gates.sandbox import new_sandbox\n"
            "use_work_root(Path(sys.argv[1]))\n"
            "box = new_sandbox(scratch_dir('gates'))\n"
            "(box / 'clone').mkdir(); (box / 'clone' / 'big.bin').write_bytes(b'x' * 1000)\n"
            "(box / 'clone' / 'ro').mkdir(); (box / 'clone' / 'ro').chmod(0o500)\n"
            "print(box, flush=True); os.kill(os.getpid(), signal.SIGKILL)",
            str(warehouse),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    left = Path(killed.stdout.strip())
    assert killed.returncode == -9 and left.is_dir() and left.is_relative_to(warehouse / "tmp")
    repo = make_repo({"README.md": "x\n"}, {"a.txt": "a\n"})
    run_gates(repo, "head", "base", GateCommands(unit="true"), [], hidden=[warehouse])
    assert not left.parent.parent.exists()  # the killed run's whole workspace
    assert list(Path(tempfile.gettempdir()).iterdir()) == []


@needs_isolation
@pytest.mark.parametrize("sandbox_in_home", [False, True])
def test_operator_home_is_hidden_but_the_interpreter_still_runs(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, sandbox_in_home: bool
) -> None:
    import shutil
    import tempfile

    # Outside /tmp: the gate's private /tmp would hide a home under it anyway.
    home = Path(tempfile.mkdtemp(prefix="evalflow-home-", dir="/var/tmp"))
    try:
        (home / ".ssh").mkdir()
        (home / ".ssh" / "id_ed25519").write_text("PRIVATE-KEY-MATERIAL\n")
        monkeypatch.setenv("HOME", str(home))
        repo = make_repo({"README.md": "x\n"}, {"README.md": "y\n"})
        listing = f"ls -a {home} | sed s/^/LS:/"
        command = f"cat {home}/.ssh/id_ed25519; {listing}; python -c 'print(\"PY-OK\")'"
        (unit,) = [
            r
            for r in run_gates(
                repo,
                "head",
                "base",
                GateCommands(unit=command),
                [],
                timeout_s=60,
                # A warehouse in the home keeps its sandboxes there: the home stays hidden.
                sandbox_root=home / "warehouse" / "tmp" if sandbox_in_home else None,
            )
            if r.gate == "unit"
        ]
    finally:
        shutil.rmtree(home)
    assert "PRIVATE-KEY-MATERIAL" not in unit.output_tail
    assert "LS:.ssh" not in unit.output_tail and "LS:." in unit.output_tail
    assert "PY-OK" in unit.output_tail


def test_an_interpreter_under_tmp_is_re_exposed_to_gates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A checkout (and its .venv) under /tmp vanishes behind the gate's private /tmp unless
    # the runner re-exposes it read-only: CI clones into a temporary folder.
    venv = tmp_path / "checkout" / ".venv"
    (venv / "bin").mkdir(parents=True)
    monkeypatch.setattr(runner_module.sys, "prefix", str(venv))
    monkeypatch.setattr(runner_module.sys, "executable", str(venv / "bin" / "python"))
    monkeypatch.setenv("PATH", f"{venv / 'bin'}:/usr/bin")
    _, exposed = runner_module._private_home()
    assert venv.resolve() in exposed and (venv / "bin").resolve() in exposed
    assert Path("/usr/bin") not in exposed


def test_gates_run_in_the_runs_root_folder_with_its_own_setup(
    make_repo: Callable[..., Path],
) -> None:
    # Two frameworks' folders side by side: each run's commands run in its own folder, and
    # `auto` setup reads that folder's project files (here: none in app/, a pyproject in other/).
    repo = make_repo(
        {"README.md": "x\n"},
        {
            "app/marker.txt": "app\n",
            "other/pyproject.toml": "[project]\nname = 'x'\n",
        },
    )
    commands = GateCommands(build="cat marker.txt", unit="test -f marker.txt")
    results = run_gates(
        repo,
        "head",
        "base",
        commands,
        [],
        timeout_s=30,
        settings=GateSettings(setup="auto"),
        root="app",
        rerun_on_base=(),
    )
    by_gate = {r.gate: r for r in results}
    assert "setup" not in by_gate  # app/ has nothing to install; other/'s pyproject is not read
    assert by_gate["build"].status == "pass"
    assert "app" in by_gate["build"].output_tail
    assert by_gate["unit"].status == "pass"
    unconfined = run_gates(repo, "head", "base", commands, [], timeout_s=30, rerun_on_base=())
    assert {r.gate: r.status for r in unconfined}["unit"] == "fail"


def test_the_root_folders_venv_comes_first_on_path(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"README.md": "x\n"}, {"app/a.txt": "a\n"})
    venv_tool = (
        "mkdir -p .venv/bin && printf '#!/bin/sh\\necho app-venv-tool\\n' > .venv/bin/tool "
        "&& chmod +x .venv/bin/tool"
    )
    results = run_gates(
        repo,
        "head",
        "base",
        GateCommands(unit="tool && test -x ../app/.venv/bin/tool"),
        [],
        timeout_s=30,
        settings=GateSettings(setup=venv_tool),
        root="app",
        rerun_on_base=(),
    )
    unit = {r.gate: r for r in results}["unit"]
    assert unit.status == "pass", unit.output_tail
    assert "app-venv-tool" in unit.output_tail


def test_a_root_missing_at_head_is_a_one_line_error(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"README.md": "x\n"}, {"app/a.txt": "a\n"})
    with pytest.raises(InputError, match="root 'nope' is no folder"):
        run_gates(repo, "head", "base", GateCommands(unit="true"), [], root="nope")


def test_a_root_the_change_created_is_not_compared_on_base(
    make_repo: Callable[..., Path],
) -> None:
    repo = make_repo({"README.md": "x\n"}, {"app/t.sh": "exit 1\n"})
    results = run_gates(
        repo, "head", "base", GateCommands(unit="sh t.sh"), [], timeout_s=30, root="app"
    )
    unit = {r.gate: r for r in results}["unit"]
    assert unit.status == "fail"
    assert "base not comparable (base has no app/)" in unit.notes[-1]


@needs_isolation
def test_a_repository_inside_a_hidden_folder_still_gets_a_sandbox(
    make_repo: Callable[..., Path],
) -> None:
    # The real-repo benchmarks keep their checkout inside the (hidden) benchmark folder: the
    # sandbox refused to start ("cannot make <checkout> read-only") and every gate was not-run.
    # Outside /tmp, which the sandbox replaces with its own tmpfs anyway.
    outer = Path(tempfile.mkdtemp(prefix="evalflow-test-", dir="/var/tmp"))
    try:
        repo = shutil.copytree(make_repo({"README.md": "x\n"}, {"a.txt": "a\n"}), outer / "co")
        results = run_gates(
            repo, "head", "base", GateCommands(unit="cat a.txt"), [], timeout_s=30,
            hidden=[outer],
        )  # fmt: skip
    finally:
        shutil.rmtree(outer)
    unit = {r.gate: r for r in results}["unit"]
    assert unit.status == "pass", unit.evidence
