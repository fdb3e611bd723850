"""`run` probes execute for real in the gate sandbox: a tiny CLI, a tiny HTTP server, hostility,
environment failures (not run, never failed) and the cache."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evalflow.domain.acceptance import acceptance_rows
from evalflow.domain.models import Check, GateSettings, ServeCommand
from evalflow.gates import GateCaches, probe_isolation
from evalflow.gates.acceptance import read_regular, run_acceptance

ISOLATED = probe_isolation().read_only and probe_isolation().network
needs_isolation = pytest.mark.skipif(not ISOLATED, reason="namespaces unavailable here")
FAKE_KEY = "sk-ant-fake-0123456789abcdef"

CLI = """\
import json, sys
if sys.argv[1:2] == ["start"]:
    email = sys.argv[2]
    if "@" not in email:
        print("invalid email", file=sys.stderr)
        sys.exit(2)
    open("trial.json", "w").write(json.dumps({"email": email, "days": 14}))
    print(json.dumps({"trial": {"email": email, "days": 14}, "status": "created"}))
"""
SERVER = """\
import json, os
from http.server import BaseHTTPRequestHandler, HTTPServer

TRIALS = set()

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        status = 409 if body["email"] in TRIALS else 201
        TRIALS.add(body["email"])
        data = json.dumps({"email": body["email"], "days": 14}).encode()
        self.send_response(status)
        self.send_header("Location", "/trials/1")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        data = json.dumps({"path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass

HTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
"""


def _check(check_id: str, *runs: dict) -> Check:
    return Check.model_validate({"id": check_id, "kind": "I", "proposition": "p", "run": runs})


@pytest.fixture
def project(make_repo: Callable[..., Path]) -> Path:
    return make_repo({}, {"cli.py": CLI, "server.py": SERVER})


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    sock.setblocking(False)
    yield sock
    sock.close()


@needs_isolation
def test_a_cli_run_passes_or_fails_on_its_expectations(project: Path, tmp_path: Path) -> None:
    checks = [
        _check(
            "C1",
            {
                "command": ["python", "cli.py", "start", "a@x.io"],
                "expect": {
                    "exit_code": 0,
                    "json": {"trial.days": 14, "status": "created"},
                    "files": [{"path": "trial.json", "contains": ['"days": 14']}],
                },
            },
            {
                "command": "python cli.py start nobody",
                "expect": {"exit_code": 2, "stderr": ["invalid"]},
            },
        ),
        _check(
            "C2", {"command": "python cli.py start b@x.io", "expect": {"json": {"trial.days": 30}}}
        ),
    ]
    rows = run_acceptance(project, "head", checks, sandbox_root=tmp_path / "sb")
    assert [(r.check_id, r.probe, r.passed) for r in rows] == [
        ("C1", 1, True),
        ("C1", 2, True),
        ("C2", 1, False),
    ]
    assert rows[2].failures == "json trial.days = 14, expected 30"
    assert rows[0].exit_code == 0 and '"days": 14' in rows[0].output_excerpt
    assert rows[1].output_excerpt == "stderr:\ninvalid email\n"


@needs_isolation
def test_an_http_probe_talks_to_the_served_implementation_inside_the_sandbox(
    project: Path, tmp_path: Path
) -> None:
    serve = ServeCommand(command="python server.py", port=8123)
    created = {"method": "POST", "path": "/trials", "body": {"email": "a@x.io"}}
    checks = [
        _check(
            "H1",
            {
                "http": created,
                "expect": {
                    "status": 201,
                    "headers": {"location": "/trials/"},
                    "json": {"days": 14},
                },
            },
        ),
        _check("H2", {"http": [created, created], "expect": {"status": 409}}),
        _check("H3", {"http": created, "expect": {"status": 200}}),
        _check(
            "H4",
            {
                "http": [{**created, "save": {"who": '"email": "([^"]+)"'}}, {"path": "/t/{who}"}],
                "expect": {"json": {"path": "/t/a@x.io"}},
            },
        ),
        _check(
            "H5",
            {
                "http": [{**created, "save": {"id": '"id": (\\d+)'}}, {"path": "/t/{id}"}],
                "expect": {"status": 200},
            },
        ),
    ]
    rows = run_acceptance(project, "head", checks, serve=serve, sandbox_root=tmp_path / "sb")
    assert [r.passed for r in rows] == [True, True, False, True, None]
    assert rows[0].http_status == 201 and rows[0].output_excerpt.startswith("HTTP 201\n")
    assert rows[2].failures == "status 201, expected 200"
    assert rows[4].not_run_reason == (
        'a request could not be prepared: answer 1 holds no id (/"id": (\\d+)/)'
    )


@needs_isolation
def test_a_server_that_never_listens_or_a_timeout_is_not_run_not_failed(
    project: Path, tmp_path: Path
) -> None:
    checks = [
        _check("N1", {"http": {"path": "/"}, "expect": {"status": 200}}),
        _check("N2", {"command": "sleep 30", "expect": {"exit_code": 0}, "timeout_s": 1}),
    ]
    serve = ServeCommand(command="echo no server here; exit 3", ready_timeout_s=5)
    rows = run_acceptance(project, "head", checks, serve=serve, sandbox_root=tmp_path / "sb")
    assert [r.passed for r in rows] == [None, None]
    assert rows[0].not_run_reason == "the serve command did not listen on 127.0.0.1:8000 (exited 3)"
    assert "no server here" in rows[0].output_excerpt
    assert rows[1].not_run_reason == "killed at its 1 s timeout"


@needs_isolation
def test_a_failed_setup_or_build_makes_every_probe_not_run(project: Path, tmp_path: Path) -> None:
    checks = [_check("S1", {"command": "python cli.py start a@x.io", "expect": {"exit_code": 0}})]
    rows = run_acceptance(
        project, "head", checks, settings=GateSettings(setup="exit 1"), sandbox_root=tmp_path / "a"
    )
    assert rows[0].passed is None
    assert rows[0].not_run_reason.startswith("the dependency setup did not pass")
    rows = run_acceptance(
        project,
        "head",
        checks,
        build_command="python -c 'raise SystemExit(4)'",
        sandbox_root=tmp_path / "b",
    )
    assert rows[0].not_run_reason.startswith("the build did not pass")


@needs_isolation
def test_a_hostile_run_is_contained(
    make_repo: Callable[..., Path],
    tmp_path: Path,
    listener: socket.socket,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Writing outside the clone, reaching the host's network, reading evalflow's secrets or
    planting a symlink to a host file: none gets out, and none is a failure of the project."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    outside = tmp_path / "outside"
    outside.mkdir()
    port = listener.getsockname()[1]
    hostile = (
        f"echo pwned > {outside}/PWNED; ln -s {tmp_path}/host-secret leak.txt; "
        f"python -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)\"; "
        "env; echo done"
    )
    (tmp_path / "host-secret").write_text("HOST-ONLY")
    repo = make_repo({}, {"README.md": "x\n"})
    checks = [
        _check(
            "X1",
            {"command": hostile, "expect": {"stdout": ["NET-OK"], "files": [{"path": "leak.txt"}]}},
        )
    ]
    rows = run_acceptance(repo, "head", checks, sandbox_root=tmp_path / "sb")
    assert not (outside / "PWNED").exists()
    try:
        listener.accept()
        reached = True
    except BlockingIOError:
        reached = False
    assert not reached
    assert FAKE_KEY not in rows[0].model_dump_json()
    assert "HOST-ONLY" not in rows[0].model_dump_json()
    assert rows[0].passed is False
    assert "file leak.txt was not written" in rows[0].failures


def test_without_a_full_sandbox_nothing_runs(project: Path, tmp_path: Path) -> None:
    checks = [_check("U1", {"command": f"touch {tmp_path}/RAN", "expect": {"exit_code": 0}})]
    rows = run_acceptance(project, "head", checks, isolation="none", sandbox_root=tmp_path / "sb")
    assert rows[0].passed is None
    assert rows[0].not_run_reason.startswith("no full sandbox on this machine (missing: network")
    assert not (tmp_path / "RAN").exists()


@needs_isolation
def test_decided_results_are_cached_and_the_table_is_deterministic(
    project: Path, tmp_path: Path
) -> None:
    caches = GateCaches.under(tmp_path / "work")
    checks = [
        _check("D1", {"command": "python cli.py start a@x.io", "expect": {"exit_code": 0}}),
        _check("D2", {"command": "sleep 30", "expect": {"exit_code": 0}, "timeout_s": 1}),
    ]
    first = run_acceptance(project, "head", checks, caches=caches, sandbox_root=tmp_path / "a")
    stored = sorted(p.name for p in (tmp_path / "work" / "gate-results").rglob("*.run.json"))
    assert len(stored) == 1  # the not-run timeout is never cached
    second = run_acceptance(project, "head", checks, caches=caches, sandbox_root=tmp_path / "b")
    assert acceptance_rows(first) == acceptance_rows(second)


def test_read_regular_refuses_links_and_escapes(tmp_path: Path) -> None:
    root = tmp_path / "clone"
    root.mkdir()
    (tmp_path / "secret").write_text("s")
    (root / "ok.txt").write_text("fine")
    (root / "link").symlink_to(tmp_path / "secret")
    (root / "dir").symlink_to(tmp_path)
    assert read_regular(root, "ok.txt") == "fine"
    assert read_regular(root, "link") is None
    assert read_regular(root, "dir/secret") is None
    assert read_regular(root, "missing") is None


@needs_isolation
def test_one_probe_runs_in_each_runs_own_folder(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    # A bake-off layout: the same CLI contract built in two folders, one of them broken. The
    # probe, written once against the contract, runs in the run's root: and judges each alone.
    broken = CLI.replace('"days": 14', '"days": 7')
    repo = make_repo({}, {"speckit/cli.py": CLI, "bmad/cli.py": broken})
    check = _check(
        "C1",
        {
            "command": "python cli.py start a@x.io",
            "expect": {"json": {"trial.days": 14}, "files": [{"path": "trial.json"}]},
        },
    )
    verdicts = {
        root: run_acceptance(repo, "head", [check], sandbox_root=tmp_path / "sb", root=root)[0]
        for root in ("speckit", "bmad")
    }
    assert verdicts["speckit"].passed is True
    assert verdicts["bmad"].passed is False
    assert verdicts["bmad"].failures == "json trial.days = 7, expected 14"
