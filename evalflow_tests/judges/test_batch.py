"""Message Batches: create → persist → poll → results into the response cache, round after
round; a killed run's batch is collected, not paid again; a timed-out batch keeps what
succeeded; every request is paid once, at the batch price."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evalflow.judges import batch as batch_module
from evalflow.judges.batch import BatchState, BatchStore, prefetch_with_batches
from evalflow_tests.judges.fake_anthropic import (
    TEST_KEY,
    Fail,
    FakeAnthropic,
    Reply,
    Turn,
    claude_judge,
    demo_request,
    grep_then_submit,
    hand_cost,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def _state(cache_dir: Path) -> BatchState:
    store = BatchStore(cache_dir / "anthropic", "mini.good.r1", 1)
    assert store.path == cache_dir / "anthropic" / "batches" / "mini.good.r1.run1.json"
    return store.state


def test_every_turn_goes_through_batches_and_is_paid_once_at_the_batch_price(
    tmp_path: Path,
) -> None:
    with FakeAnthropic(grep_then_submit, batch_polls_before_end=3) as fake:
        batched = claude_judge(fake, tmp_path / "b", batch=True, batch_poll_s=0.001)
        verdicts = batched.score(demo_request())
        plain = claude_judge(fake, tmp_path / "p").score(demo_request())
        assert verdicts == plain
        # 3 polls per round, plus the retrieve the SDK's results() makes to find results_url.
        assert fake.batch_calls == {"create": 2, "retrieve": 8, "results": 2, "cancel": 0}
        assert len(fake.batch_requests) == 8 and len(fake.requests) == 8
        records = batched.drain_usage()
        # One row per request: the batch-priced one, no second (cached) row for the replay.
        assert len(records) == 8 and not any(r.cached for r in records)
        assert all(r.batch and r.request_id.startswith("msgbatch_") for r in records)
        batch_usd = hand_cost(fake.usages[:8]) * 0.5
        assert sum(r.usd for r in records) == pytest.approx(batch_usd, rel=1e-12)
        state = _state(tmp_path / "b")
        assert [b.state for b in state.batches] == ["collected", "collected"]
        assert {r.status for b in state.batches for r in b.requests.values()} == {"succeeded"}
        # A later run replays everything, priced at the batch rate it was bought at.
        again = claude_judge(fake, tmp_path / "b", batch=True, batch_poll_s=0.001)
        assert again.score(demo_request()) == verdicts
        assert fake.batch_calls["create"] == 2 and len(fake.requests) == 8
        replayed = again.drain_usage()
    assert len(replayed) == 8 and all(r.cached for r in replayed)
    assert sum(r.usd for r in replayed) == pytest.approx(batch_usd, rel=1e-12)


def test_first_turn_only_then_interactive(tmp_path: Path) -> None:
    with FakeAnthropic(grep_then_submit) as fake:
        judge = claude_judge(fake, tmp_path, batch=True, batch_rounds=1, batch_poll_s=0.001)
        verdicts = judge.score(demo_request())
    assert fake.batch_calls["create"] == 1
    assert [len(b["messages"]) for b in fake.batch_requests] == [1, 1, 1, 1]
    assert len(fake.requests) == 4 and all(len(r["messages"]) == 3 for r in fake.requests)
    assert [v.status for v in verdicts] == ["MET", "MET", "MET", "UNMET"]


def test_errored_results_are_asked_interactively(tmp_path: Path) -> None:
    def responder(turn: Turn) -> Reply | Fail:
        if turn.batch and turn.check_id == "S1-AC1-I1":
            return Fail(500, "api_error", "batch item failed")
        return grep_then_submit(turn)

    with FakeAnthropic(responder) as fake:
        judge = claude_judge(fake, tmp_path, batch=True, batch_rounds=1, batch_poll_s=0.001)
        verdicts = judge.score(demo_request())
    assert verdicts[0].status == "MET"
    interactive_first_turns = [r for r in fake.requests if len(r["messages"]) == 1]
    assert len(interactive_first_turns) == 1
    statuses = [r.status for r in _state(tmp_path).batches[0].requests.values()]
    assert sorted(statuses) == ["errored", "succeeded", "succeeded", "succeeded"]


def test_batch_needs_the_cache(tmp_path: Path) -> None:
    with FakeAnthropic(grep_then_submit) as fake:
        no_cache = claude_judge(fake, None, batch=True)
        assert prefetch_with_batches(no_cache, demo_request()) == 0
    assert fake.batch_calls["create"] == 0


def test_a_timed_out_batch_keeps_its_succeeded_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ticks = iter(range(10**6))
    monkeypatch.setattr(batch_module, "_now", lambda: float(next(ticks)))  # 1 s per look
    with FakeAnthropic(grep_then_submit, batch_items_per_poll=2) as fake:
        slow = claude_judge(fake, tmp_path, batch=True, batch_poll_s=0.001, batch_max_wait_s=0.5)
        verdicts = slow.score(demo_request())
        plain = claude_judge(fake, tmp_path / "plain").score(demo_request())
        assert verdicts == plain
        assert fake.batch_calls["create"] == 1 and fake.batch_calls["cancel"] == 1
        # Two first turns were processed before the cancel: kept, never asked again.
        assert len(fake.batch_requests) == 2 and set(fake.batch_billed.values()) == {1}
        first_turns = [r for r in fake.requests[:-8] if len(r["messages"]) == 1]
        assert len(first_turns) == 2 and len(fake.requests) - 8 == 6
        records = slow.drain_usage()
    assert len(records) == 8 and not any(r.cached for r in records)
    assert sum(r.batch for r in records) == 2
    batch = _state(tmp_path).batches[0]
    assert batch.state == "collected"
    assert sorted(r.status for r in batch.requests.values()) == [
        "canceled",
        "canceled",
        "succeeded",
        "succeeded",
    ]


CHILD = """\
import sys
from pathlib import Path
from evalflow.judges.anthropic_judge import ClaudeJudge, ClaudeSettings
from evalflow_tests.judges.fake_anthropic import TEST_PRICES, demo_request

judge = ClaudeJudge(
    ClaudeSettings(timeout_s=20.0, batch=True, batch_poll_s=0.01),
    cache_dir=Path(sys.argv[2]),
    base_url=sys.argv[1],
    prices=TEST_PRICES,
)
judge.score(demo_request())
"""


def test_a_killed_run_is_resumed_and_pays_each_request_once(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(CHILD))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ANTHROPIC_API_KEY": TEST_KEY}
    with FakeAnthropic(grep_then_submit, batch_polls_before_end=10**6) as fake:
        child = subprocess.Popen(
            [sys.executable, str(script), fake.base_url, str(cache_dir)], env=env
        )
        try:
            deadline = time.monotonic() + 60
            while fake.batch_calls["retrieve"] < 2 and child.poll() is None:
                assert time.monotonic() < deadline, "the child never polled its batch"
                time.sleep(0.05)
            os.kill(child.pid, signal.SIGKILL)  # mid-wait: the batch is created and paid for
        finally:
            child.kill()
            child.wait(timeout=60)
        persisted = json.loads((cache_dir / "anthropic/batches/mini.good.r1.run1.json").read_text())
        assert [(b["state"], len(b["requests"])) for b in persisted["batches"]] == [("open", 4)]
        fake.batch_polls_before_end = 1
        resumed = claude_judge(fake, cache_dir, batch=True, batch_poll_s=0.001)
        verdicts = resumed.score(demo_request())
        assert verdicts == claude_judge(fake, tmp_path / "plain").score(demo_request())
        # Round 1 was created once (by the killed run), round 2 by the rerun; none again.
        assert fake.batch_calls["create"] == 2
        assert len(fake.batch_billed) == 8 and set(fake.batch_billed.values()) == {1}
        records = resumed.drain_usage()
        batch_usd = hand_cost(fake.usages[:8]) * 0.5
    assert len(records) == 8 and all(r.batch and not r.cached for r in records)
    assert sum(r.usd for r in records) == pytest.approx(batch_usd, rel=1e-12)
    assert [b.state for b in _state(cache_dir).batches] == ["collected", "collected"]


def test_a_batch_unknown_to_the_api_is_marked_lost_and_asked_again(tmp_path: Path) -> None:
    with FakeAnthropic(grep_then_submit) as fake:
        store = BatchStore(tmp_path / "anthropic", "mini.good.r1", 1)
        store.state.batches.append(
            batch_module.BatchRecord(id="msgbatch_gone", round=1, created_at=0.0, requests={})
        )
        store.save()
        judge = claude_judge(fake, tmp_path, batch=True, batch_poll_s=0.001)
        verdicts = judge.score(demo_request())
    assert [v.status for v in verdicts] == ["MET", "MET", "MET", "UNMET"]
    assert [b.state for b in _state(tmp_path).batches] == ["lost", "collected", "collected"]
    assert fake.batch_calls["create"] == 2 and len(fake.batch_requests) == 8
