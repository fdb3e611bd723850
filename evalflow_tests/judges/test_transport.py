"""The shared transport under concurrent calls: a malformed 200 (paid, unusable) stops every
thread before it sends again, on the fake Anthropic and OpenAI APIs.

The window the tests widen: between a malformed answer's arrival and the breaker's trip the
transport kept the body in the response cache (a disk write). A slow disk there must not let
another thread send: with the trip decided first, the requests are the probe's one (no
answer yet) or the calls already in flight (after a first answer)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from evalflow.errors import JudgeUnavailableError
from evalflow.judges.cache import ResponseCache
from evalflow.judges.transport import MALFORMED
from evalflow_tests.judges import fake_anthropic, fake_openai
from evalflow_tests.judges.fake_anthropic import (
    DEMO_CHECKS,
    FakeAnthropic,
    claude_judge,
    demo_request,
    grep_then_submit,
)
from evalflow_tests.judges.fake_openai import FakeOpenAI, openai_judge

CONCURRENCY = 4
CHECKS = DEMO_CHECKS * 5  # 20 checks: more than the threads


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake_anthropic.TEST_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", fake_openai.TEST_KEY)
    for name in ("EVALFLOW_OPENAI_MODEL", "EVALFLOW_OPENAI_BASE_URL", "EVALFLOW_MAX_COST_USD"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def slow_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """A response cache whose write of a malformed body takes 0.3 s (a busy disk then)."""
    put = ResponseCache.put

    def slow_put(self: ResponseCache, key: str, response: dict, *args: Any) -> None:
        if response.get("type") == MALFORMED:
            time.sleep(0.3)
        put(self, key, response, *args)

    monkeypatch.setattr(ResponseCache, "put", slow_put)


def _judge(api: str, fake: Any, cache_dir: Path) -> Any:
    if api == "anthropic":
        return claude_judge(fake, cache_dir, concurrency=CONCURRENCY)
    return openai_judge(fake, cache_dir, api=api, concurrency=CONCURRENCY)


def _fake(api: str, responder: Any) -> Any:
    return FakeAnthropic(responder) if api == "anthropic" else FakeOpenAI(responder)


def _malformed(api: str) -> Any:
    return (fake_anthropic if api == "anthropic" else fake_openai).Malformed()


def _good(api: str) -> Any:
    if api == "anthropic":
        return grep_then_submit
    from evalflow_tests.judges.test_openai_judge import greet_or_bye

    return greet_or_bye


@pytest.mark.usefixtures("slow_cache")
@pytest.mark.parametrize("api", ["anthropic", "responses", "chat"])
def test_a_malformed_first_answer_costs_one_request(tmp_path: Path, api: str) -> None:
    """Until the endpoint has answered once, one call at a time: a malformed 200 is no answer,
    so the threads waiting behind it see the trip instead of sending (docs/configuration.md:
    one request per process)."""
    with _fake(api, lambda turn: _malformed(api)) as fake:
        judge = _judge(api, fake, tmp_path)
        with pytest.raises(JudgeUnavailableError, match=r"malformed body|the body is not"):
            judge.score(demo_request(checks=CHECKS))
    assert len(fake.requests) == 1


@pytest.mark.usefixtures("slow_cache")
@pytest.mark.parametrize("api", ["anthropic", "responses"])
def test_after_a_malformed_answer_only_the_calls_in_flight_are_sent(
    tmp_path: Path, api: str
) -> None:
    """Once the endpoint has answered, calls run in parallel; a malformed 200 then trips the
    breaker before the transport keeps the body, so the other threads send nothing more
    than what was already in flight when it arrived."""
    good = _good(api)
    lock = threading.Lock()
    seen: list[int] = []  # the request count when the malformed answer was served

    def responder(turn: Any) -> Any:
        with lock:
            served = len(fake.requests)
            if turn.check_id == CHECKS[5].id and turn.turn == 1 and not seen:
                seen.append(served)
                return _malformed(api)
        return good(turn)

    with _fake(api, responder) as fake:
        judge = _judge(api, fake, tmp_path)
        with pytest.raises(JudgeUnavailableError, match=r"malformed body|the body is not"):
            judge.score(demo_request(checks=CHECKS))
    assert seen, "the malformed answer was never served"
    # Each other thread had at most one request in flight when the malformed answer came.
    assert len(fake.requests) - seen[0] <= CONCURRENCY - 1


@pytest.mark.slow  # the limiter must wait in real time (a virtual clock lets it go at once)
def test_a_call_the_rate_limiter_held_back_is_not_sent_after_a_trip(tmp_path: Path) -> None:
    """At 2 requests a second the other threads wait in the limiter, past their first breaker
    check; the second request's malformed 200 trips the breaker meanwhile, so each checks
    again once the limiter lets it go and sends nothing."""
    lock = threading.Lock()

    def responder(turn: Any) -> Any:
        with lock:
            second = len(fake.requests) == 2
        return fake_anthropic.Malformed() if second else grep_then_submit(turn)

    with FakeAnthropic(responder) as fake:
        judge = claude_judge(fake, tmp_path, concurrency=CONCURRENCY, requests_per_s=2.0)
        with pytest.raises(JudgeUnavailableError, match="malformed body"):
            judge.score(demo_request(checks=CHECKS))
    assert len(fake.requests) == 2
