"""The Claude judge fails fast on an API that cannot answer, and caches only answers worth
replaying (scoped to the run and commit they were given for)."""

from __future__ import annotations

import json
from pathlib import Path

import anthropic
import httpx2
import pytest

from evalflow.errors import JudgeUnavailableError
from evalflow.judges.anthropic_judge import (
    CUT_AT_MAX_TOKENS,
    CircuitBreaker,
    ClaudeJudge,
    ClaudeSettings,
)
from evalflow.judges.cache import ResponseCache
from evalflow.judges.repo_tools import blob_sha
from evalflow_tests.judges.fake_anthropic import (
    APP_CORE,
    DEMO_CHECKS,
    TEST_CORE,
    TEST_KEY,
    TEST_PRICES,
    Fail,
    FakeAnthropic,
    Reply,
    Turn,
    claude_judge,
    demo_request,
    demo_snapshot,
    grep_then_submit,
    submit,
    text,
    tool_use,
)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)


def _many_checks() -> tuple:
    return DEMO_CHECKS * 5


def test_wrong_key_aborts_within_a_few_requests(tmp_path: Path) -> None:
    refuse = Fail(401, "authentication_error", "invalid x-api-key")
    with FakeAnthropic(lambda turn: refuse) as fake:
        judge = claude_judge(fake, tmp_path, concurrency=4)
        with pytest.raises(JudgeUnavailableError) as raised:
            judge.score(demo_request(checks=_many_checks()))
    assert "HTTP 401" in str(raised.value) and "invalid x-api-key" in str(raised.value)
    assert TEST_KEY not in str(raised.value)
    # Until the endpoint has answered once, one call at a time: the other threads see the
    # trip before sending (before: one request per thread, the concurrency).
    assert len(fake.requests) == 1


@pytest.mark.parametrize("status", [403, 404, 400])
def test_permission_not_found_and_invalid_request_abort(tmp_path: Path, status: int) -> None:
    with FakeAnthropic(lambda turn: Fail(status, "error", "nope")) as fake:
        judge = claude_judge(fake, tmp_path, concurrency=1)
        with pytest.raises(JudgeUnavailableError):
            judge.score(demo_request(checks=_many_checks()))
    assert len(fake.requests) == 1


def test_sustained_overload_trips_the_breaker(tmp_path: Path) -> None:
    with FakeAnthropic(lambda turn: Fail(529)) as fake:
        judge = claude_judge(
            fake, tmp_path, concurrency=1, max_retries=0, breaker_failures=3, max_throttle_s=0.3
        )
        with pytest.raises(JudgeUnavailableError) as raised:
            judge.score(demo_request(checks=_many_checks()))
    assert "3 consecutive API failures" in str(raised.value)
    # each call retried its 529s after a back-off for max_throttle_s, then counted as failed
    assert 3 < len(fake.requests) <= 9


def test_breaker_trips_on_time_without_success() -> None:
    now = [0.0]
    breaker = CircuitBreaker(failures=100, seconds=60, clock=lambda: now[0])
    breaker.check()
    now[0] = 30.0
    breaker.success()
    now[0] = 80.0
    breaker.check()  # 50 s since the last success, and no failure yet: keep going
    breaker.failure(ConnectionError("x"))  # not an API error: recorded, not counted
    now[0] = 95.0
    breaker.check()  # 65 s, but no transient failure counted
    request = httpx2.Request("POST", "http://127.0.0.1/v1/messages")
    with pytest.raises(JudgeUnavailableError, match="no successful API call for 60 s"):
        breaker.failure(anthropic.APITimeoutError(request=request))


def test_a_tripped_breaker_lets_calls_through_after_its_cool_down() -> None:
    now = [0.0]
    breaker = CircuitBreaker(failures=1, seconds=60, clock=lambda: now[0])
    request = httpx2.Request("POST", "http://127.0.0.1/v1/messages")
    with pytest.raises(JudgeUnavailableError):
        breaker.failure(anthropic.APITimeoutError(request=request))
    now[0] = 59.0
    with pytest.raises(JudgeUnavailableError):
        breaker.check()
    now[0] = 60.0
    breaker.check()
    assert breaker.tripped is None


def test_a_success_resets_the_consecutive_count(tmp_path: Path) -> None:
    served = {"n": 0}

    def flaky(turn: Turn) -> Reply | Fail:
        served["n"] += 1
        return Fail(529) if served["n"] % 2 else grep_then_submit(turn)

    with FakeAnthropic(flaky) as fake:
        judge = claude_judge(fake, tmp_path, concurrency=1, max_retries=0, breaker_failures=2)
        verdicts = judge.score(demo_request(checks=DEMO_CHECKS))
    assert len(verdicts) == len(DEMO_CHECKS)  # never two failures in a row: no trip


def _cache_files(root: Path) -> list[Path]:
    return sorted((root / "anthropic").rglob("*.json"))


def test_max_tokens_answers_are_kept_marked_unusable_and_replayed(tmp_path: Path) -> None:
    def truncated(turn: Turn) -> Reply:
        return Reply([text("partial")], "max_tokens")

    with FakeAnthropic(truncated) as fake:
        verdict = claude_judge(fake, tmp_path).score(demo_request(checks=DEMO_CHECKS[:1]))[0]
    assert verdict.status == "UNSCORED"
    metas = [json.loads(p.read_text())["meta"] for p in _cache_files(tmp_path)]
    assert [m["unusable"] for m in metas] == [CUT_AT_MAX_TOKENS]
    # The answer hit max_tokens, was asked once more with twice the room, and the check ends.
    assert [r["max_tokens"] for r in fake.requests] == [16000, 32000]
    with FakeAnthropic(truncated) as fake:
        again = claude_judge(fake, tmp_path).score(demo_request(checks=DEMO_CHECKS[:1]))[0]
    assert not fake.requests  # the same answers replayed, the same outcome, nothing paid
    assert again == verdict
    with FakeAnthropic(truncated) as fake:
        claude_judge(fake, tmp_path, rejudge=True).score(demo_request(checks=DEMO_CHECKS[:1]))
    assert len(fake.requests) == 2  # --rejudge unscored: asked again


def test_cache_is_addressed_by_what_the_judge_read_not_the_commit(tmp_path: Path) -> None:
    first = demo_snapshot()
    unrelated = demo_snapshot({"docs/notes.md": "# a note nobody greps\n"})
    unrelated = type(first)(commit="f" * 40, files=unrelated.files)
    read = demo_snapshot(
        {"app/core.py": APP_CORE + "\n\ndef twice(name):\n    return greet(name) * 2\n"}
    )
    with FakeAnthropic(grep_then_submit) as fake:
        claude_judge(fake, tmp_path).score(demo_request(checks=DEMO_CHECKS[:1], snapshot=first))
        asked = len(fake.requests)
        claude_judge(fake, tmp_path).score(demo_request(checks=DEMO_CHECKS[:1], snapshot=unrelated))
        assert len(fake.requests) == asked  # another commit, an unread file changed: replayed
        claude_judge(fake, tmp_path).score(demo_request(checks=DEMO_CHECKS[:1], snapshot=read))
    # the grep's hits changed: asked again from that turn (the first turn replays)
    assert len(fake.requests) == asked + 1


def test_mark_unusable_keeps_the_entry_and_says_why(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    cache.put("ab" * 32, {"x": 1}, {"run_key": "r"})
    cache.mark_unusable("ab" * 32, "no submit_verdict call")
    cache.mark_unusable("ab" * 32, "no submit_verdict call")  # idempotent
    cache.mark_unusable("cd" * 32, "never stored")  # nothing to mark
    assert cache.get_with_meta("ab" * 32) == (
        {"x": 1},
        {"run_key": "r", "unusable": "no submit_verdict call"},
    )
    assert "cd" * 32 not in cache


def _score_with_a_wrong_key(base_url: str, cache: str, attempts: int) -> None:
    """One step process of the multiprocess executor, run `attempts` times (step retries)."""
    for _ in range(attempts):
        try:
            claude_judge_at(base_url, Path(cache)).score(demo_request(checks=_many_checks()))
        except JudgeUnavailableError:
            continue


def claude_judge_at(base_url: str, cache: Path) -> ClaudeJudge:
    """The child's own judge (round test prices, like `claude_judge`)."""
    return ClaudeJudge(
        ClaudeSettings(timeout_s=20.0, concurrency=1),
        cache_dir=cache,
        base_url=base_url,
        prices=TEST_PRICES,
    )


@pytest.mark.slow  # two spawned interpreters importing evalflow (~8 CPU-s)
def test_a_tripped_breaker_is_shared_by_every_process_of_the_warehouse(tmp_path: Path) -> None:
    """A 401 in one process stops the others (and their step retries) before they send."""
    import multiprocessing

    refuse = Fail(401, "authentication_error", "invalid x-api-key")
    context = multiprocessing.get_context("spawn")
    with FakeAnthropic(lambda turn: refuse) as fake:
        for _ in range(2):  # two step processes, each with two retries after its first try
            child = context.Process(
                target=_score_with_a_wrong_key, args=(fake.base_url, str(tmp_path), 3)
            )
            child.start()
            child.join(timeout=120)
            assert child.exitcode == 0
    assert len(fake.requests) == 1  # per-process breakers: one per process (2)
    with pytest.raises(JudgeUnavailableError, match="every process refuses calls"):
        claude_judge(fake, tmp_path).transport.breaker.check()


def test_a_shared_trip_ends_with_its_cool_down(tmp_path: Path) -> None:
    now = [1000.0]
    state = tmp_path / "breakers" / "endpoint.json"
    first = CircuitBreaker(1, 60, state=state, wall=lambda: now[0])
    request = httpx2.Request("POST", "http://127.0.0.1/v1/messages")
    with pytest.raises(JudgeUnavailableError):
        first.failure(anthropic.APITimeoutError(request=request))
    other = CircuitBreaker(1, 60, state=state, wall=lambda: now[0])
    with pytest.raises(JudgeUnavailableError, match="timed out"):
        other.check()
    now[0] += 61
    CircuitBreaker(1, 60, state=state, wall=lambda: now[0]).check()  # a new process passes


def _read_then_submit(turn: Turn) -> Reply:
    """Turn 1 reads app/core.py; turn 2 cites what it read."""
    if turn.turn == 1:
        return Reply([tool_use("read_file", {"path": "app/core.py", "start": 1, "end": 3}, turn)])
    cited = {"path": "app/core.py", "start_line": 2, "end_line": 2, "quote": "Hello"}
    return submit(turn, "MET", evidence=[cited], rationale="app/core.py:2 greets")


def test_each_verdict_records_the_blobs_it_read_and_only_their_change_re_asks(
    tmp_path: Path,
) -> None:
    comment = "\n# an unrelated comment\n"
    first = demo_snapshot()
    unrelated = demo_snapshot({"tests/test_core.py": TEST_CORE + comment})
    edited = demo_snapshot({"app/core.py": APP_CORE + comment})
    request = lambda snap: demo_request(checks=DEMO_CHECKS[:1], snapshot=snap)  # noqa: E731
    with FakeAnthropic(_read_then_submit) as fake:
        (verdict,) = claude_judge(fake, tmp_path).score(request(first))
        asked = len(fake.requests)
        (same,) = claude_judge(fake, tmp_path).score(request(unrelated))
        assert len(fake.requests) == asked  # 0 re-asked after a change nobody read
        (again,) = claude_judge(fake, tmp_path).score(request(edited))
        assert len(fake.requests) == asked + 1  # the turn after the read is asked again
    assert verdict.read_blobs == (("app/core.py", blob_sha(APP_CORE)),)
    assert same.read_blobs == verdict.read_blobs
    assert again.read_blobs == (("app/core.py", blob_sha(APP_CORE + comment)),)
