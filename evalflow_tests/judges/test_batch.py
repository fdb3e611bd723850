"""Message Batches: create → poll → results into the response cache, round after round."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalflow.judges.batch import prefetch_with_batches
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


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def test_every_turn_goes_through_batches_and_the_interactive_pass_is_all_cache(
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
    paid = [r for r in records if not r.cached]
    assert len(paid) == 8 and all(r.batch and r.request_id.startswith("msgbatch_") for r in paid)
    assert sum(r.cached for r in records) == 8
    batch_usages = fake.usages[:8]
    assert sum(r.usd for r in paid) == pytest.approx(hand_cost(batch_usages) * 0.5, rel=1e-12)


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


def test_batch_needs_the_cache_and_a_timeout_cancels(tmp_path: Path) -> None:
    with FakeAnthropic(grep_then_submit, batch_polls_before_end=10**6) as fake:
        no_cache = claude_judge(fake, None, batch=True)
        assert prefetch_with_batches(no_cache, demo_request()) == 0
        slow = claude_judge(fake, tmp_path, batch=True, batch_poll_s=0.001, batch_max_wait_s=0.05)
        verdicts = slow.score(demo_request())
    assert fake.batch_calls["cancel"] == 1
    assert len(fake.requests) == 8 and verdicts[0].status == "MET"
