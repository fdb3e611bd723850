"""Issue 25 items 3-4: the Claude judge's spend is bounded per check and per run, every paid
attempt is recorded (estimated when its answer was lost), and API faults end in one line."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest

from evalflow.domain.models import Check
from evalflow.errors import JudgeUnavailableError
from evalflow.judges.anthropic_judge import BREAKERS_DIR, CUT_AT_MAX_TOKENS, RateLimiter
from evalflow.judges.cost import Budget
from evalflow_tests.judges.fake_anthropic import (
    TEST_KEY,
    Fail,
    FakeAnthropic,
    Lost,
    Malformed,
    Reply,
    Turn,
    claude_judge,
    demo_request,
    grep_then_submit,
    hand_cost,
    text,
    tool_use,
)

TEN = tuple(Check(id=f"S1-AC1-I{i}", kind="I", proposition=f"feature {i}") for i in range(10))


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("EVALFLOW_MAX_COST_USD", raising=False)


def test_max_tokens_forever_stops_the_run_after_one_larger_retry_per_check(tmp_path) -> None:
    def truncated(turn: Turn) -> Reply:
        return Reply([text("thinking")], "max_tokens", output_tokens=16000)

    with FakeAnthropic(truncated) as fake:
        judge = claude_judge(fake, tmp_path, concurrency=1)
        with pytest.raises(JudgeUnavailableError, match="no usable answer for 6 of 10"):
            judge.score(demo_request(checks=TEN))
        # 6 of 10 checks (most) asked, each once plus its one larger retry; 4 never asked
        asked = len(fake.requests)
        assert asked == 12
        with pytest.raises(JudgeUnavailableError, match=CUT_AT_MAX_TOKENS):
            claude_judge(fake, tmp_path, concurrency=1).score(demo_request(checks=TEN))
        assert len(fake.requests) == asked  # the rerun replays, pays nothing


def test_endless_tool_calls_end_at_the_per_check_spend_cap(tmp_path) -> None:
    def endless(turn: Turn) -> Reply:
        return Reply([tool_use("list_files", {"path_glob": "**"}, turn)], output_tokens=2000)

    with FakeAnthropic(endless) as fake:
        judge = claude_judge(fake, tmp_path, max_check_usd=0.05)
        (verdict,) = judge.score(demo_request(checks=TEN[:1]))
        usd = sum(r.usd for r in judge.drain_usage())
    assert verdict.status == "UNSCORED" and verdict.rationale.startswith("per-check spend cap")
    assert len(fake.requests) < 12  # the turn cap is not reached
    assert 0.05 <= usd < 0.05 + 0.04  # stops after the turn that reached the cap


def test_lost_answers_are_recorded_at_their_worst_case_and_marked(tmp_path) -> None:
    lost = itertools.count()

    def flaky(turn: Turn) -> Reply | Lost:
        return Lost() if next(lost) < 2 else grep_then_submit(turn)

    with FakeAnthropic(flaky) as fake:
        judge = claude_judge(fake, tmp_path, concurrency=1)
        (verdict,) = judge.score(demo_request(checks=TEN[:1]))
        records = judge.drain_usage()
    assert verdict.status != "UNSCORED" or "API failure" not in verdict.rationale
    estimated = [r for r in records if r.estimated]
    assert len(estimated) == 2 and len(fake.requests) == len(records)
    # every billed attempt is counted; an estimate never undercounts the bill
    assert sum(r.usd for r in records) >= hand_cost(fake.usages)


def test_max_cost_holds_although_answers_are_lost(tmp_path) -> None:
    def always_lost(turn: Turn) -> Lost:
        return Lost(output_tokens=16000)

    with FakeAnthropic(always_lost) as fake:
        budget = Budget(0.5)
        judge = claude_judge(fake, tmp_path, concurrency=2, breaker_failures=100)
        judge.transport.budget = budget
        judge.score(demo_request(checks=TEN[:3]))
    billed = hand_cost(fake.usages)
    assert billed <= budget.spent <= 0.5 + 1e-9


def test_a_413_stops_the_run_with_the_api_message(tmp_path) -> None:
    too_large = Fail(413, "request_too_large", "Request exceeds the maximum allowed size")
    with (
        FakeAnthropic(lambda turn: too_large) as fake,
        pytest.raises(JudgeUnavailableError, match=r"413.*maximum allowed size"),
    ):
        claude_judge(fake, tmp_path, concurrency=1).score(demo_request(checks=TEN))
    assert len(fake.requests) == 1


def test_a_malformed_200_stops_the_run_and_is_not_paid_again(tmp_path) -> None:
    with FakeAnthropic(lambda turn: Malformed()) as fake:
        for _ in range(2):
            with pytest.raises(JudgeUnavailableError, match=r"malformed body.*truncat"):
                claude_judge(fake, tmp_path, concurrency=1).score(demo_request(checks=TEN))
        assert len(fake.requests) == 1  # kept like any answer: the rerun pays nothing
    with (
        FakeAnthropic(lambda turn: Malformed()) as fake,
        pytest.raises(JudgeUnavailableError),
    ):
        claude_judge(fake, tmp_path, concurrency=1, rejudge=True).score(demo_request(checks=TEN))
    assert len(fake.requests) == 1  # --rejudge unscored asks again


@pytest.mark.slow  # waits out real back-off pauses (minutes on a loaded machine)
def test_a_burst_of_429_and_529_slows_the_run_instead_of_aborting(tmp_path) -> None:
    storm = [Fail(529), Fail(429, "rate_limit_error")] * 4
    with FakeAnthropic(grep_then_submit, fail_next=list(storm)) as fake:
        judge = claude_judge(fake, tmp_path, concurrency=2, max_retries=0, breaker_failures=2)
        verdicts = judge.score(demo_request())
    assert fake.failures_served == 8
    assert all(not v.rationale.startswith("API failure") for v in verdicts)


def test_the_limiter_backs_off_adaptively_and_honours_retry_after() -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    limiter = RateLimiter(2.0, base_backoff_s=0.25, clock=lambda: now[0], sleep=sleep)
    limiter.acquire()
    limiter.acquire()  # 2 per second: the second waits half a second
    assert slept == [0.5]
    limiter.throttled(None)
    limiter.throttled(None)  # two in a row: 0.25 s, then 0.5 s
    limiter.throttled(3.0)  # the server asks for 3 s: longer than the back-off (1 s)
    limiter.acquire()
    assert now[0] == pytest.approx(0.5 + 3.0 + 0.5)  # paused, then one token at 2/s
    limiter.success()
    limiter.throttled(None)
    limiter.acquire()
    # the back-off halved on the success (0.5 s), then doubled (1 s); then one token at 2/s
    assert slept[-2:] == [pytest.approx(1.0), pytest.approx(0.5)]


def test_unchanged_settings_do_not_retry_at_the_sdk_level(tmp_path) -> None:
    with FakeAnthropic(grep_then_submit) as fake:
        judge = claude_judge(fake, tmp_path)
    assert judge.client.max_retries == 0  # every attempt goes through evalflow's accounting
    assert Path(tmp_path).is_dir()


def _score_in_child(base_url: str, ledger: str, cache: str) -> None:
    """One `evalflow run` of the same run key: its own process, judge and budget object."""
    from evalflow.judges.anthropic_judge import ClaudeJudge, ClaudeSettings
    from evalflow_tests.judges.fake_anthropic import TEST_PRICES

    judge = ClaudeJudge(
        ClaudeSettings(timeout_s=20.0, concurrency=2, max_tokens=4000, max_check_usd=5.0),
        cache_dir=Path(cache),
        base_url=base_url,
        prices=TEST_PRICES,
        budget=Budget(1.0, ledger=Path(ledger)),
    )
    judge.score(demo_request(checks=TEN))


@pytest.mark.slow  # two spawned interpreters importing evalflow (~7 CPU-s)
def test_a_killed_run_and_its_rerun_spend_at_most_the_limit_in_total(tmp_path) -> None:
    """kill -9 mid-run, then the same run again at the same limit: the ledger carries what
    the first paid (its calls in flight when it died at their worst case), so the rerun stops
    at the remaining budget and the API bills at most the limit in total."""
    import multiprocessing
    import os
    import signal
    import time

    def costly(turn: Turn) -> Reply:
        return Reply([tool_use("list_files", {"path_glob": "**"}, turn)], output_tokens=3000)

    ledger, cache = tmp_path / "budget.json", tmp_path / "cache"
    context = multiprocessing.get_context("spawn")
    with FakeAnthropic(costly, latency_s=0.2) as fake:
        first = context.Process(target=_score_in_child, args=(fake.base_url, str(ledger), cache))
        first.start()
        deadline = time.monotonic() + 60
        while len(fake.requests) < 6 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(first.pid, signal.SIGKILL)  # with calls in flight
        first.join()
        billed_first = hand_cost(fake.usages)
        time.sleep(0.5)  # the calls in flight are answered (and billed) after the kill
        second = context.Process(target=_score_in_child, args=(fake.base_url, str(ledger), cache))
        second.start()
        second.join(timeout=120)
        sent_by_first = len(fake.requests)
        billed = hand_cost(fake.usages)
    assert first.exitcode == -signal.SIGKILL and second.exitcode == 0
    assert 0 < billed_first < 1.0 and sent_by_first > 6  # the second ran and paid
    state = Budget(1.0, ledger=ledger)
    assert billed <= state.spent <= 1.0 + 1e-9  # never more than the limit, over both runs
    assert json.loads(ledger.read_text())["estimated"] > 0  # the killed run's calls in flight


def test_a_step_retry_pays_only_what_was_never_answered(tmp_path) -> None:
    """Every answer is stored before anything else is sent — the first answer cut at
    max_tokens too, before its one larger retry — so a Dagster step retry after the API
    failed mid-run re-sends no answered request."""
    down, cut = [False], [False]
    answered: list[str] = []

    def flaky(turn: Turn) -> Reply | Fail:
        if down[0]:
            return Fail(500, "api_error", "internal error")
        body = json.dumps(turn.body, sort_keys=True)
        answered.append(body)
        if not cut[0]:
            down[0] = cut[0] = True  # the API fails right after this first answer
            return Reply([text("thinking")], "max_tokens", output_tokens=16000)
        return grep_then_submit(turn)

    with FakeAnthropic(flaky) as fake:
        judge = claude_judge(fake, tmp_path, concurrency=1, max_retries=0, breaker_failures=1)
        with pytest.raises(JudgeUnavailableError):
            judge.score(demo_request())
        down[0] = False
        # The API is back: the tripped breaker's shared state is deleted, as its error says.
        shutil.rmtree(tmp_path / BREAKERS_DIR)
        retried = claude_judge(fake, tmp_path, concurrency=1, breaker_failures=2)
        verdicts = retried.score(demo_request())
    assert all(v.status != "UNSCORED" for v in verdicts)
    assert len(answered) == len(set(answered))  # no answered request was paid twice
