"""The API key never leaves the SDK: not in verdicts, usage, cache files, logs or child envs."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalflow.judges.cost import usage_frame
from evalflow.repo.git import scrubbed_env
from evalflow_tests.judges.fake_anthropic import (
    DEMO_CHECKS,
    TEST_KEY,
    Fail,
    FakeAnthropic,
    Reply,
    Turn,
    claude_judge,
    demo_request,
    grep_then_submit,
)


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("EVALFLOW_CLAUDE_MODEL", raising=False)


def leaky(turn: Turn) -> Reply | Fail:
    """A proxy that echoes the caller's key in an error message, and a 529 on the way (422:
    neither retried nor fatal, so the echo lands in that check's UNSCORED reason)."""
    if turn.check_id == "S2-AC1-I1":
        return Fail(422, "invalid_request_error", f"bad key {os.environ['ANTHROPIC_API_KEY']}")
    return grep_then_submit(turn)


def test_key_never_appears_in_any_output(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    for name in ("anthropic", "httpx2", "httpcore", "evalflow"):
        logging.getLogger(name).setLevel(logging.DEBUG)
    with FakeAnthropic(leaky, fail_next=[Fail(529)]) as fake:
        judge = claude_judge(fake, tmp_path)
        verdicts = judge.score(demo_request())
        judge.score(demo_request(run=2, checks=DEMO_CHECKS[:1], author_model="claude-opus-4-7"))
    assert fake.requests, "the fake server was called"
    leaked = next(v for v in verdicts if v.check_id == "S2-AC1-I1")
    assert leaked.status == "UNSCORED" and "[redacted]" in leaked.rationale

    outputs = [
        json.dumps([v.model_dump(mode="json") for v in verdicts]),
        usage_frame(judge.drain_usage()).to_json(),
        json.dumps(judge.fingerprint_fields()),
        caplog.text,
        *(str(r.args) + r.getMessage() for r in caplog.records),
        *(p.read_text() for p in (tmp_path / "anthropic").rglob("*.json")),
    ]
    assert len(outputs) > 6
    for output in outputs:
        assert TEST_KEY not in output


def test_subprocesses_get_a_scrubbed_environment() -> None:
    env = scrubbed_env()
    assert "ANTHROPIC_API_KEY" not in env and TEST_KEY not in env.values()
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(sorted(os.environ.items()))"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert TEST_KEY not in child.stdout and "ANTHROPIC_API_KEY" not in child.stdout
