"""The Claude judge against a fake Messages API on a local socket (no network, ever)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalflow.domain.models import Anchor
from evalflow.domain.vote import majority_vote
from evalflow.io.evaluation import (
    K_RUNS,
    open_snapshot,
    prepare_run,
    score_run,
    verdicts_frame,
)
from evalflow.judges.anthropic_judge import (
    DEFAULT_MODEL,
    ClaudeJudge,
    ClaudeSettings,
    forced_tool_choice_supported,
)
from evalflow.judges.cost import PriceTable
from evalflow.judges.family import model_family, same_family
from evalflow.judges.prompt import PROMPT_VERSION, SUBMIT_TOOL_NAME
from evalflow.judges.validator import validate_verdict
from evalflow_tests.judges.fake_anthropic import (
    DEMO_CHECKS,
    TEST_KEY,
    TEST_PRICES,
    Fail,
    FakeAnthropic,
    Reply,
    Turn,
    claude_judge,
    demo_request,
    grep_then_submit,
    hand_cost,
    submit,
    text,
    tool_use,
)
from evalflow_tests.virtual_clock import VirtualClock


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    for name in ("MODEL", "MAX_TOKENS", "CONCURRENCY", "BATCH", "EFFORT", "MAX_TURNS"):
        monkeypatch.delenv(f"EVALFLOW_CLAUDE_{name}", raising=False)
    monkeypatch.delenv("EVALFLOW_MAX_COST_USD", raising=False)


def validated(request, verdicts):
    return {
        v.check_id: validate_verdict(v, request.snapshot, set(request.diff_paths)) for v in verdicts
    }


def test_tool_loop_scores_every_check_with_real_searches(tmp_path: Path) -> None:
    with FakeAnthropic(grep_then_submit) as fake:
        judge = claude_judge(fake, tmp_path)
        request = demo_request()
        out = validated(request, judge.score(request))
    assert {k: v.status for k, v in out.items()} == {
        "S1-AC1-I1": "MET",
        "S1-AC1-T1": "MET",
        "S2-AC1-I1": "MET",
        "S2-AC1-T1": "UNMET",
    }
    unmet = out["S2-AC1-T1"]
    assert unmet.searches and unmet.searches[0].pattern == r"\bbye\(" and unmet.searches[0].hits
    assert len(fake.requests) == 8
    first = fake.requests[0]
    assert first["model"] == DEFAULT_MODEL and "temperature" not in first
    assert [t["name"] for t in first["tools"]] == [
        "list_files",
        "grep",
        "read_file",
        "submit_verdict",
    ]
    assert all(t["strict"] for t in first["tools"])
    assert first["tool_choice"] == {"type": "auto"}
    assert first["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert first["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in first["messages"][0]["content"][1]
    second_turn = next(r for r in fake.requests if len(r["messages"]) == 3)
    assert second_turn["messages"][-1]["content"][-1]["type"] == "tool_result"
    assert second_turn["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert second_turn["messages"][1]["role"] == "assistant"


def test_judge_identity_and_fingerprint(tmp_path: Path) -> None:
    with FakeAnthropic(grep_then_submit) as fake:
        judge = claude_judge(fake, tmp_path, max_tokens=2048, max_turns=6)
    assert judge.judge_id == f"anthropic:{DEFAULT_MODEL}" and judge.deterministic is False
    fields = judge.fingerprint_fields()
    assert fields["prompt_version"] == PROMPT_VERSION and fields["temperature"] is None
    assert (fields["max_tokens"], fields["max_turns"]) == (2048, 6)
    assert fields["tool_limits"] == {"max_matches": 200, "max_lines": 400, "max_chars": 20_000}
    assert fields["final_tool_choice"] == "auto"
    json.dumps(fields)


def test_hallucinated_evidence_is_not_met_after_the_validator(tmp_path: Path) -> None:
    def responder(turn: Turn) -> Reply:
        if turn.turn == 1:
            return Reply([tool_use("grep", {"pattern": "greet", "path_glob": "**"}, turn)])
        ghost = {"path": "app/ghost.py", "start_line": 1, "end_line": 3, "quote": "def ghost"}
        return submit(turn, "MET", evidence=[ghost])

    with FakeAnthropic(responder) as fake:
        request = demo_request(checks=DEMO_CHECKS[:1])
        raw = claude_judge(fake, tmp_path).score(request)
    assert raw[0].status == "MET"
    checked = validated(request, raw)["S1-AC1-I1"]
    assert checked.status == "UNMET" and "evidence-invalid" in checked.flags


def test_quotes_copied_with_line_numbers_are_normalised(tmp_path: Path) -> None:
    def responder(turn: Turn) -> Reply:
        if turn.turn == 1:
            args = {"path": "app/core.py", "start": 1, "end": 2}
            return Reply([tool_use("read_file", args, turn)])
        quote = '1: def greet(name):\n2:     return f"Hello, {name}"'
        cited = {"path": "app/core.py", "start_line": 1, "end_line": 2, "quote": quote}
        claimed = [{"pattern": "grep greet", "scope": "**", "hits": 0}]
        return submit(turn, "MET", evidence=[cited], searches=claimed)

    with FakeAnthropic(responder) as fake:
        request = demo_request(checks=DEMO_CHECKS[:1])
        verdict = validated(request, claude_judge(fake, tmp_path).score(request))["S1-AC1-I1"]
    assert verdict.status == "MET"
    assert verdict.evidence[0].quote == 'def greet(name):\n    return f"Hello, {name}"'
    assert [s.pattern for s in verdict.searches] == ["read app/core.py:1-2"]
    assert "claimed-search-not-run" in verdict.flags and "grep greet" in verdict.rationale


def test_traversal_is_refused_by_the_tool(tmp_path: Path) -> None:
    def responder(turn: Turn) -> Reply:
        if turn.turn == 1:
            args = {"path": "../../etc/passwd", "start": 1, "end": 5}
            return Reply([tool_use("read_file", args, turn)])
        return submit(turn, "UNMET", rationale="nothing")

    with FakeAnthropic(responder) as fake:
        verdict = claude_judge(fake, tmp_path).score(demo_request(checks=DEMO_CHECKS[:1]))[0]
    result = fake.requests[1]["messages"][-1]["content"][0]
    assert result["is_error"] is True and "refused" in result["content"]
    assert "root:" not in json.dumps(fake.requests[1])
    assert verdict.searches == ()


def test_529_and_429_are_retried_after_a_back_off_then_succeed(
    tmp_path: Path, api_clock: VirtualClock
) -> None:
    with FakeAnthropic(
        grep_then_submit, fail_next=[Fail(529), Fail(429, "rate_limit_error")]
    ) as fake:
        judge = claude_judge(fake, tmp_path, concurrency=1)
        verdicts = judge.score(demo_request(checks=DEMO_CHECKS[:1]))
    assert fake.failures_served == 2 and verdicts[0].status == "MET"
    assert api_clock() == 1.0 + 2.0  # backed off 1 s, then twice as long
    records = judge.drain_usage()
    assert records[0].attempt == 3 and records[1].attempt == 1
    assert judge.drain_usage() == []


def test_transient_api_failure_is_unscored_with_the_reason_not_a_crash(tmp_path: Path) -> None:
    def responder(turn: Turn) -> Reply | Fail:
        if turn.check_id == "S1-AC1-I1":
            return Fail(529, "overloaded_error", "Overloaded")
        return grep_then_submit(turn)

    with FakeAnthropic(responder) as fake:
        judge = claude_judge(fake, tmp_path, max_retries=0, max_throttle_s=0.5)
        verdicts = judge.score(demo_request())
    by_id = {v.check_id: v for v in verdicts}
    assert by_id["S1-AC1-I1"].status == "UNSCORED"
    assert by_id["S1-AC1-I1"].rationale.startswith("API failure: HTTP 529")
    assert by_id["S1-AC1-T1"].status == "MET"


def test_server_errors_after_retries_are_unscored(tmp_path: Path) -> None:
    with FakeAnthropic(lambda turn: Fail(500, "api_error", "boom")) as fake:
        verdicts = claude_judge(fake, tmp_path, max_retries=1).score(
            demo_request(checks=DEMO_CHECKS[:1])
        )
    assert verdicts[0].status == "UNSCORED" and "HTTP 500" in verdicts[0].rationale
    assert len(fake.requests) == 2


def test_malformed_answer_is_retried_once_then_unscored(tmp_path: Path) -> None:
    with FakeAnthropic(lambda turn: Reply([text("It is met.")], "end_turn")) as fake:
        verdict = claude_judge(fake, tmp_path).score(demo_request(checks=DEMO_CHECKS[:1]))[0]
    assert verdict.status == "UNSCORED"
    assert verdict.rationale.startswith("malformed answer twice: no submit_verdict call")
    assert len(fake.requests) == 2
    reminder = fake.requests[1]["messages"][-1]["content"][0]
    assert reminder["type"] == "text" and SUBMIT_TOOL_NAME in reminder["text"]


def test_schema_invalid_submission_gets_one_forced_retry(tmp_path: Path) -> None:
    def responder(turn: Turn) -> Reply:
        if turn.turn == 1:
            return Reply([tool_use("grep", {"pattern": "greet", "path_glob": "**"}, turn)])
        if turn.turn == 2:
            return submit(turn, "MAYBE")
        good = {"path": "app/core.py", "start_line": 2, "end_line": 2, "quote": "Hello"}
        return submit(turn, "MET", evidence=[good])

    with FakeAnthropic(responder) as fake:
        judge = claude_judge(fake, tmp_path, model="claude-opus-4-6")
        verdict = judge.score(demo_request(checks=DEMO_CHECKS[:1]))[0]
    assert verdict.status == "MET" and len(fake.requests) == 3
    error = fake.requests[2]["messages"][-1]["content"][0]
    assert error["is_error"] is True and "status" in error["content"]
    assert fake.requests[1]["tool_choice"] == {"type": "auto"}
    assert fake.requests[2]["tool_choice"] == {"type": "tool", "name": SUBMIT_TOOL_NAME}


def test_loop_is_bounded_and_forces_the_verdict_on_the_last_turn(tmp_path: Path) -> None:
    def responder(turn: Turn) -> Reply:
        return Reply([tool_use("list_files", {"glob": "**"}, turn)])

    with FakeAnthropic(responder) as fake:
        verdict = claude_judge(fake, tmp_path, max_turns=3).score(
            demo_request(checks=DEMO_CHECKS[:1])
        )[0]
        forced = claude_judge(fake, tmp_path / "b", max_turns=3, model="claude-opus-4-6")
        forced.score(demo_request(checks=DEMO_CHECKS[:1]))
    assert verdict.status == "UNSCORED" and "tool loop exhausted" in verdict.rationale
    assert len(verdict.searches) == 1
    assert [r["tool_choice"]["type"] for r in fake.requests] == ["auto"] * 5 + ["tool"]


def test_cache_hit_makes_zero_requests_on_a_second_run(tmp_path: Path) -> None:
    with FakeAnthropic(grep_then_submit) as fake:
        judge = claude_judge(fake, tmp_path)
        first = judge.score(demo_request())
        paid = judge.drain_usage()
        served = len(fake.requests)
        again = claude_judge(fake, tmp_path)
        second = again.score(demo_request())
    assert len(fake.requests) == served == 8
    assert second == first
    records = again.drain_usage()
    # Cache hits cost nothing now but keep the original call's tokens and price.
    assert len(records) == 8 and all(r.cached for r in records)

    def priced(rs: list) -> list:
        return sorted((r.check_id, r.run, r.turn, r.usd) for r in rs)

    assert priced(records) == priced(paid)


def test_k_runs_are_distinct_calls_with_distinct_cache_keys(tmp_path: Path) -> None:
    with FakeAnthropic(grep_then_submit) as fake:
        judge = claude_judge(fake, tmp_path, concurrency=1)
        for run in (1, 2, 3):
            judge.score(demo_request(run, checks=DEMO_CHECKS[:1]))
    files = sorted((tmp_path / "anthropic").rglob("*.json"))
    assert len(files) == 6 and len({f.stem for f in files}) == 6
    assert len(fake.requests) == 6
    first_turns = [r for r in fake.requests if len(r["messages"]) == 1]
    assert len({json.dumps(r, sort_keys=True) for r in first_turns}) == 3
    assert [fake.usages[i]["cache_read_input_tokens"] > 0 for i in (0, 2, 4)] == [
        False,
        True,
        True,
    ]


class Killed(BaseException):
    """Stands for the process being killed: not an Exception, so nothing swallows it."""


def test_resume_after_interruption_pays_only_for_missing_calls(tmp_path: Path) -> None:
    with FakeAnthropic(grep_then_submit) as fake:
        judge = claude_judge(fake, tmp_path, concurrency=1)
        original = judge._call

        def dying_call(params: dict[str, Any], site: Any, **kw: Any) -> dict[str, Any]:
            if len(fake.requests) >= 3:
                raise Killed
            return original(params, site, **kw)

        judge._call = dying_call  # type: ignore[method-assign]
        with pytest.raises(Killed):
            judge.score(demo_request())
        assert len(fake.requests) == 3
        resumed = claude_judge(fake, tmp_path, concurrency=1)
        verdicts = resumed.score(demo_request())
    assert len(fake.requests) == 8
    assert [v.status for v in verdicts] == ["MET", "MET", "MET", "UNMET"]
    records = resumed.drain_usage()
    assert sum(r.cached for r in records) == 3 and sum(not r.cached for r in records) == 5


def test_cost_totals_match_hand_computation(tmp_path: Path) -> None:
    with FakeAnthropic(grep_then_submit) as fake:
        judge = claude_judge(fake, tmp_path)
        judge.score(demo_request())
    records = judge.drain_usage()
    assert sum(r.usd for r in records) == pytest.approx(hand_cost(fake.usages), rel=1e-12)
    assert sum(r.cache_read_tokens for r in records) == sum(
        u["cache_read_input_tokens"] for u in fake.usages
    )
    assert judge.budget.spent == pytest.approx(hand_cost(fake.usages), rel=1e-12)
    for body, usage in zip(fake.requests, fake.usages, strict=True):
        worst = judge.transport.worst_case_usd(body, batch=False)
        assert worst >= hand_cost([usage])


class FixedEstimate(PriceTable):
    """Prices as in the test table, with a fixed worst-case estimate of 0.02 USD per call."""

    def worst_case_usd(self, model: str, **_: Any) -> float:
        return 0.02


def test_budget_stop_is_unscored_and_sends_nothing_beyond_the_budget(tmp_path: Path) -> None:
    with FakeAnthropic(grep_then_submit) as fake:
        none_fit = claude_judge(fake, tmp_path / "a", max_cost_usd=0.0001)
        verdicts = none_fit.score(demo_request())
        assert len(fake.requests) == 0
        assert {(v.status, v.rationale) for v in verdicts} == {("UNSCORED", "budget stop")}

        limit = 0.035  # the first check (two calls) fits, not every check
        some_fit = ClaudeJudge(
            ClaudeSettings(max_cost_usd=limit, concurrency=1),
            cache_dir=tmp_path / "b",
            base_url=fake.base_url,
            prices=FixedEstimate.model_validate(TEST_PRICES.model_dump()),
        )
        partial = some_fit.score(demo_request())
    served = fake.usages
    assert 0 < len(served) < 8
    assert hand_cost(served) <= limit and some_fit.budget.spent <= limit
    assert hand_cost(served[:-1]) + 0.02 <= limit < hand_cost(served) + 0.02
    statuses = [v.status for v in partial]
    assert "UNSCORED" in statuses and statuses[0] == "MET"
    assert all(v.rationale == "budget stop" for v in partial if v.status == "UNSCORED")


def test_same_family_rule() -> None:
    assert same_family("claude-sonnet-5-5", "claude-opus-4-7")
    assert same_family("claude-sonnet-5-5", "anthropic/claude-3-7-sonnet-20250219")
    assert same_family("claude-sonnet-5-5", "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert not same_family("claude-sonnet-5-5", "gpt-5.1")
    assert not same_family("claude-sonnet-5-5", None)
    assert not same_family("claude-sonnet-5-5", "")
    assert same_family("gpt-5", "o3-mini") and same_family("o4-mini", "openai/gpt-4o")
    assert model_family("gemini-2.5-pro") == "google" and model_family("grok-4") == "xai"
    assert model_family("some-local-model") == "some"


def test_self_preference_warns_and_tells_the_model(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with FakeAnthropic(grep_then_submit) as fake, caplog.at_level(logging.WARNING):
        judge = claude_judge(fake, tmp_path)
        judge.score(demo_request(checks=DEMO_CHECKS[:1], author_model="claude-opus-4-7"))
        other = claude_judge(fake, tmp_path / "o")
        other.score(demo_request(checks=DEMO_CHECKS[:1], author_model="gpt-5"))
    warnings = [r for r in caplog.records if "same family" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    prompts = [
        r["messages"][0]["content"][0]["text"] for r in fake.requests if len(r["messages"]) == 1
    ]
    assert "Self-preference warning" in prompts[0] and "Self-preference warning" not in prompts[1]


def test_anchors_and_interpretation_reach_the_prompt(tmp_path: Path) -> None:
    anchor = Anchor(check_id="S1-AC1-I1", verdict="MET", example="app/core.py:2", reason="clear")
    with FakeAnthropic(grep_then_submit) as fake:
        claude_judge(fake, tmp_path).score(demo_request(checks=DEMO_CHECKS[:1], anchors=(anchor,)))
    blocks = fake.requests[0]["messages"][0]["content"]
    assert "Calibration anchors" in blocks[0]["text"] and "app/core.py:2" in blocks[0]["text"]
    assert "- app/core.py" in blocks[0]["text"]
    assert "# Scoring run 1 of 3" in blocks[1]["text"] and "S1-AC1-I1" in blocks[1]["text"]


def test_anthropic_base_url_env_is_honoured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAnthropic(grep_then_submit) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        judge = ClaudeJudge(ClaudeSettings(), cache_dir=tmp_path, prices=TEST_PRICES)
        verdicts = judge.score(demo_request(checks=DEMO_CHECKS[:1]))
    assert verdicts[0].status == "MET" and len(fake.requests) == 2


def test_settings_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALFLOW_CLAUDE_MODEL", "claude-sonnet-4-5")
    monkeypatch.setenv("EVALFLOW_CLAUDE_MAX_TOKENS", "2048")
    monkeypatch.setenv("EVALFLOW_CLAUDE_CONCURRENCY", "8")
    monkeypatch.setenv("EVALFLOW_MAX_COST_USD", "2.5")
    monkeypatch.setenv("EVALFLOW_CLAUDE_BATCH", "1")
    settings = ClaudeSettings.from_env(max_turns=5)
    assert (settings.model, settings.max_tokens, settings.concurrency) == (
        "claude-sonnet-4-5",
        2048,
        8,
    )
    assert settings.max_cost_usd == 2.5 and settings.batch and settings.max_turns == 5
    monkeypatch.setenv("EVALFLOW_CLAUDE_CONCURRENCY", "many")
    with pytest.raises(Exception, match="EVALFLOW_CLAUDE_CONCURRENCY"):
        ClaudeSettings.from_env()
    monkeypatch.setenv("EVALFLOW_CLAUDE_CONCURRENCY", "0")
    with pytest.raises(Exception, match="concurrency"):
        ClaudeSettings.from_env()


def test_forced_tool_choice_rule() -> None:
    assert forced_tool_choice_supported("claude-sonnet-4-5-20250929")
    assert forced_tool_choice_supported("claude-opus-4-6")
    assert not forced_tool_choice_supported("claude-sonnet-5-5")
    assert not forced_tool_choice_supported("claude-opus-4-7")


def test_effort_is_sent_when_configured(tmp_path: Path) -> None:
    with FakeAnthropic(grep_then_submit) as fake:
        claude_judge(fake, tmp_path, effort="low").score(demo_request(checks=DEMO_CHECKS[:1]))
    assert fake.requests[0]["output_config"] == {"effort": "low"}


def test_whole_evaluation_through_the_pipeline(mini: Path, tmp_path: Path) -> None:
    prepared = prepare_run(mini / "runs" / "good.yaml", tmp_path / "wh")
    snapshot = open_snapshot(prepared)
    with FakeAnthropic(grep_then_submit) as fake:
        judge = claude_judge(fake, tmp_path / "wh" / "cache")
        frame = pd.concat(
            [
                verdicts_frame(prepared.run_key, score_run(prepared, judge, run, snapshot))
                for run in range(1, K_RUNS + 1)
            ]
        )
    assert len(fake.requests) == 4 * 2 * K_RUNS
    votes = majority_vote(frame, K_RUNS)
    majority = dict(zip(votes["check_id"], votes["majority"], strict=True))
    assert majority == {
        "S1-AC1-I1": "MET",
        "S1-AC1-T1": "MET",
        "S2-AC1-I1": "MET",
        "S2-AC1-T1": "UNMET",
    }
    assert set(frame["judge_id"]) == {f"anthropic:{DEFAULT_MODEL}"}
    first_turns = [
        u for r, u in zip(fake.requests, fake.usages, strict=True) if len(r["messages"]) == 1
    ]
    assert sum(u["cache_read_input_tokens"] > 0 for u in first_turns) == 11


def _worst_call(tmp_path: Path) -> float:
    """The largest worst-case reservation of one call of the demo (its last turns)."""
    with FakeAnthropic(grep_then_submit) as fake:
        judge = claude_judge(fake, tmp_path / "probe")
        judge.score(demo_request())
    return max(judge.transport.worst_case_usd(body, batch=False) for body in fake.requests)


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0, 1.5, 3.0, 6.0])
def test_spent_never_passes_the_limit_at_concurrency_4(tmp_path: Path, share: float) -> None:
    limit = share * _worst_call(tmp_path)
    with FakeAnthropic(grep_then_submit) as fake:
        judge = claude_judge(fake, tmp_path / "run", concurrency=4, max_cost_usd=limit)
        verdicts = judge.score(demo_request())
    assert hand_cost(fake.usages) <= limit + 1e-9
    assert judge.budget.spent == pytest.approx(hand_cost(fake.usages), rel=1e-12)
    stopped = [v for v in verdicts if v.status == "UNSCORED"]
    assert all(v.rationale == "budget stop" for v in stopped)
    if share < 1.0:  # not even one call's worst case fits: nothing is sent
        assert not fake.requests and len(stopped) == len(verdicts)


def test_an_ample_limit_judges_every_check_although_worst_cases_overlap(tmp_path: Path) -> None:
    # Four concurrent worst cases exceed this limit (the old budget stopped here for good),
    # but each call fits and the real spend is far below: every check is judged.
    worst = _worst_call(tmp_path)
    limit = 2.5 * worst
    with FakeAnthropic(grep_then_submit) as fake:
        judge = claude_judge(fake, tmp_path / "run", concurrency=4, max_cost_usd=limit)
        verdicts = judge.score(demo_request())
    assert len(fake.requests) == 8 and 4 * worst > limit
    assert [v.status for v in verdicts] == ["MET", "MET", "MET", "UNMET"]
    assert judge.budget.spent <= limit


def test_met_resting_on_claimed_hits_never_returned_is_retried_then_unscored(
    tmp_path: Path,
) -> None:
    def responder(turn: Turn) -> Reply:
        if turn.turn == 1:
            return Reply([tool_use("grep", {"pattern": "greet", "path_glob": "**"}, turn)])
        cited = {
            "path": "app/core.py",
            "start_line": 2,
            "end_line": 2,
            "quote": 'return f"Hello, {name}"',
        }
        invented = [{"pattern": "Hello", "scope": "**", "hits": 4}]
        return submit(turn, "MET", evidence=[cited], searches=invented)

    with FakeAnthropic(responder) as fake:
        verdict = claude_judge(fake, tmp_path).score(demo_request(checks=DEMO_CHECKS[:1]))[0]
    assert len(fake.requests) == 3  # grep, the claim, the one retry
    retry = fake.requests[2]["messages"][-1]["content"][0]
    assert retry["is_error"] and "'Hello' claims 4 hits but was never run" in retry["content"]
    assert verdict.status == "UNSCORED"
    assert verdict.rationale.startswith("malformed answer twice: searches claim hits")
    # Every answer is kept, the two rejected ones marked unusable: a re-run replays them.
    entries = [json.loads(p.read_text()) for p in (tmp_path / "anthropic").rglob("??/*.json")]
    assert sorted(bool(e["meta"].get("unusable")) for e in entries) == [False, True, True]
    with FakeAnthropic(responder) as fake:
        again = claude_judge(fake, tmp_path).score(demo_request(checks=DEMO_CHECKS[:1]))[0]
        assert not fake.requests
    assert again == verdict


def test_met_with_a_corrected_claim_after_the_retry_is_met(tmp_path: Path) -> None:
    def responder(turn: Turn) -> Reply:
        if turn.turn == 1:
            return Reply([tool_use("grep", {"pattern": "greet", "path_glob": "**"}, turn)])
        cited = {
            "path": "app/core.py",
            "start_line": 2,
            "end_line": 2,
            "quote": 'return f"Hello, {name}"',
        }
        hits = 9 if turn.turn == 2 else 4  # evalflow's grep returned 4 lines
        return submit(
            turn,
            "MET",
            evidence=[cited],
            searches=[{"pattern": "greet", "scope": "**", "hits": hits}],
        )

    with FakeAnthropic(responder) as fake:
        verdict = claude_judge(fake, tmp_path).score(demo_request(checks=DEMO_CHECKS[:1]))[0]
    assert verdict.status == "MET" and len(fake.requests) == 3
    assert [(s.pattern, s.hits) for s in verdict.searches] == [("greet", 4)]
