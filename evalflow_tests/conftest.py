"""Shared fixtures: small deterministic git repositories and an isolated warehouse."""

from __future__ import annotations

import fcntl
import functools
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from evalflow.repo.builder import build_repo
from evalflow_tests.mini_benchmark import make_mini
from evalflow_tests.virtual_clock import VirtualClock

REPO_ROOT = Path(__file__).resolve().parents[1]
DEMO = REPO_ROOT / "data" / "benchmarks" / "trialist"


@pytest.fixture(autouse=True, scope="session")
def _host_mirrors(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The git mirrors of the tests' repositories (and of their subprocesses') in a directory
    of this session, not in the user's ~/.cache/evalflow/mirrors."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("EVALFLOW_MIRROR_DIR", str(tmp_path_factory.mktemp("mirrors")))
        yield


@pytest.fixture(autouse=True)
def api_clock(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> VirtualClock:
    """Each test starts with no tripped circuit breaker and no paused limiter of an API (a fake
    API server of a later test may reuse the port and the test key of one an earlier test made
    refuse or throttle). The limiters of a `make test` test pause on a `VirtualClock` of its
    own, which the test reads to see how long the run backed off; a slow test's limiters wait in
    real time, as in production (its threads wake from one pause together, which a virtual clock
    does not make them do)."""
    from evalflow.judges import anthropic_judge

    anthropic_judge._BREAKERS.clear()
    clock = VirtualClock()
    monkeypatch.setattr(anthropic_judge, "_LIMITERS", {})
    if request.node.get_closest_marker("slow") is not None:
        return clock
    monkeypatch.setattr(
        anthropic_judge,
        "RateLimiter",
        functools.partial(anthropic_judge.RateLimiter, clock=clock, sleep=clock.sleep),
    )
    return clock


@pytest.fixture(autouse=True, scope="session")
def _sqlite_without_fsync() -> None:
    """Dagster's SQLite storages (run, event log, schedules) in this process flush nothing to
    disk: each commit and each connection's close fsynced, and on a busy disk those waits left
    the test workers idle most of a Dagster run. Only durability across a power cut changes,
    which no test exercises; locking and the WAL journal stay as in production."""
    import sqlite3

    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    def no_fsync(connection: object, _record: object) -> None:
        if isinstance(connection, sqlite3.Connection):
            connection.execute("PRAGMA synchronous=OFF")

    event.listen(Engine, "connect", no_fsync)


def _write_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    """Build a git repo with tags `base` and `head` from two dicts of path → text."""
    counter = iter(range(1000))

    def build(base: dict[str, str], head: dict[str, str], delete: tuple[str, ...] = ()) -> Path:
        n = next(counter)
        source = tmp_path / f"src{n}"
        _write_tree(source / "base", base or {"README.md": "start\n"})
        _write_tree(source / "head", head)
        commits = [
            {"tree": "base", "message": "base", "tag": "base"},
            {"tree": "head", "message": "head", "tag": "head", "delete": list(delete)},
        ]
        (source / "build.yaml").write_text(yaml.safe_dump({"commits": commits}))
        return build_repo(source, tmp_path / f"repo{n}")

    return build


@pytest.fixture
def warehouse_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "warehouse"
    monkeypatch.setenv("EVALFLOW_WAREHOUSE", str(root))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    return root


@pytest.fixture(scope="session")
def scored_demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse in which the demo's trialist bmad-r1 run (a confirmed ✗ gate, so an
    Adjusted Final) is registered, materialised and ranked, once per test session: a
    pipeline run costs tens of seconds, so tests that only read a scored run share this
    one and must not write to it. The xdist workers of one session share it too (the first
    to need it builds it under a file lock in the session's common temporary directory; the
    others wait for it or find it built) instead of each building its own."""
    from evalflow.cli import main

    base = tmp_path_factory.getbasetemp()
    # A worker's base is `<session's base>/popen-gwN`, so its parent belongs to this session;
    # without xdist the parent holds other sessions' bases.
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    built = shared / "scored-demo"
    root = built / "wh"
    with open(shared / "scored-demo.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (built / "complete").exists():
            shutil.rmtree(built, ignore_errors=True)  # a build that failed in another worker
            manifest = DEMO / "runs" / "bmad-r1.yaml"
            for args in (["register", str(manifest)], ["materialize", "--workers", "1"]):
                with pytest.MonkeyPatch.context() as env:
                    env.delenv("DAGSTER_HOME", raising=False)
                    with pytest.raises(SystemExit) as done:
                        main([*args, "--warehouse", str(root)])
                assert done.value.code in (0, None), args
            (built / "complete").touch()
    return root


@pytest.fixture
def mini(tmp_path: Path) -> Path:
    """A two-story benchmark with runs `good` (Final 1.00) and `partial` (Final 0.36)."""
    return make_mini(tmp_path)
