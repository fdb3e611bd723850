"""Issue 31: an unchanged re-run of an LLM judge pays nothing, whatever the first answers were;
asking again is `rejudge` (`--rejudge unscored`) only."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalflow.domain.models import Check
from evalflow.io.evaluation import verdicts_frame
from evalflow.judges.anthropic_judge import (
    CUT_AT_MAX_TOKENS,
    CallSite,
    ClaudeSettings,
    ToolAnswerError,
    ask_tool,
)
from evalflow.judges.cost import rejudge_estimate
from evalflow.judges.validator import validate_verdict
from evalflow_tests.judges.fake_anthropic import (
    TEST_KEY,
    FakeAnthropic,
    Reply,
    Turn,
    claude_judge,
    demo_request,
    submit,
    text,
    tool_use,
)

MIXED_CHECKS = (
    Check(id="S1-AC1-I1", kind="I", proposition="greet(name) returns a greeting with the name"),
    Check(id="S1-AC1-I2", kind="I", proposition="greet is wired into the app"),
    Check(id="S1-AC1-I3", kind="I", proposition="bye() says goodbye"),
    Check(id="S1-AC1-I4", kind="I", proposition="no goodbye is ever logged"),
    Check(id="S1-AC1-I5", kind="I", proposition="the greeting is cached"),
)


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("EVALFLOW_MAX_COST_USD", raising=False)


def mixed(turn: Turn) -> Reply:
    """A valid MET, a MET on invalid evidence (the validator rejects it), a refusal, a MET
    claiming hits never returned (malformed twice), and prose without a tool call."""
    check = turn.check_id
    if check.endswith("I1"):
        if turn.turn == 1:
            return Reply([tool_use("grep", {"pattern": r"\bgreet\(", "path_glob": "**"}, turn)])
        return submit(
            turn,
            "MET",
            evidence=[{"path": "app/core.py", "start_line": 2, "end_line": 2, "quote": "Hello"}],
            searches=[{"pattern": r"\bgreet\(", "scope": "**", "hits": 2}],
        )
    if check.endswith("I2"):
        evidence = [{"path": "README.md", "start_line": 1, "end_line": 1, "quote": "demo"}]
        return submit(turn, "MET", evidence=evidence)
    if check.endswith("I3"):
        return Reply([text("I cannot help with that.")], stop_reason="refusal")
    if check.endswith("I4"):
        claimed = [{"pattern": "log", "scope": "**", "hits": 7}]
        evidence = [{"path": "app/core.py", "start_line": 6, "end_line": 6, "quote": "bye"}]
        return submit(turn, "MET", evidence=evidence, searches=claimed)
    return Reply([text("It is probably cached.")], stop_reason="end_turn")


def scored_table(judge, request) -> bytes:
    verdicts = judge.score(request)
    checked = [validate_verdict(v, request.snapshot, set(request.diff_paths)) for v in verdicts]
    frame = verdicts_frame(request.run_key, checked)
    return frame.to_csv(index=False).encode()


def test_an_unchanged_rerun_sends_nothing_whatever_the_answers(tmp_path: Path) -> None:
    request = demo_request(checks=MIXED_CHECKS)
    with FakeAnthropic(mixed) as fake:
        first = scored_table(claude_judge(fake, tmp_path), request)
        paid = len(fake.requests)
        second = scored_table(claude_judge(fake, tmp_path), request)
        assert len(fake.requests) == paid  # 0 requests on the unchanged re-run
    assert paid > 0
    assert second == first  # byte-identical table
    statuses = claude_judge(fake, tmp_path).score(request)
    assert [v.status for v in statuses] == ["MET", "MET", "UNSCORED", "UNSCORED", "UNSCORED"]


def test_rejudge_asks_again_only_the_checks_left_unscored(tmp_path: Path) -> None:
    request = demo_request(checks=MIXED_CHECKS)
    with FakeAnthropic(mixed) as fake:
        claude_judge(fake, tmp_path).score(request)
        before = len(fake.requests)
        verdicts = claude_judge(fake, tmp_path, rejudge=True).score(request)
        asked = {asked_check(body) for body in fake.requests[before:]}
    assert asked == {"S1-AC1-I3", "S1-AC1-I4", "S1-AC1-I5"}
    assert [v.status for v in verdicts][:2] == ["MET", "MET"]


def asked_check(body: dict) -> str:
    first = body["messages"][0]["content"]
    joined = "\n".join(b.get("text", "") for b in first)
    return joined.split("## Check ", 1)[1].split(" ", 1)[0]


def test_the_rejudge_estimate_is_what_the_unscored_conversations_cost(tmp_path: Path) -> None:
    request = demo_request(checks=MIXED_CHECKS)
    with FakeAnthropic(mixed) as fake:
        judge = claude_judge(fake, tmp_path)
        verdicts = judge.score(request)
        frame = verdicts_frame(request.run_key, verdicts, judge.drain_usage())
    frame = frame.assign(judge_name="anthropic")  # what the pipeline stamps on the stored rows
    budget_stopped = frame.iloc[[0]].assign(status="UNSCORED", rationale="budget stop")
    count, usd = rejudge_estimate([frame, budget_stopped], "anthropic")
    unscored = frame[frame["status"] == "UNSCORED"]
    assert count == 3  # the budget-stopped one is resumed anyway, not re-asked
    assert usd == pytest.approx(unscored["cost_usd"].sum())
    assert usd > 0


def refusing(turn: Turn) -> Reply:
    return Reply([text("no")], stop_reason="refusal")


def test_a_refused_tool_question_is_replayed_not_paid_again(tmp_path: Path) -> None:
    tool = {
        "name": "answer",
        "description": "answer",
        "input_schema": {
            "type": "object",
            "properties": {"x": {"type": "integer"}},
            "required": ["x"],
            "additionalProperties": False,
        },
    }
    with FakeAnthropic(refusing) as fake:
        for rejudge, expected in ((False, 1), (False, 1), (True, 2)):
            judge = claude_judge(fake, tmp_path, rejudge=rejudge)
            with pytest.raises(ToolAnswerError, match="refused"):
                ask_tool(
                    judge.transport,
                    system=[{"type": "text", "text": "s"}],
                    user=[{"type": "text", "text": "q"}],
                    tool=tool,
                    parse=dict,
                    site=CallSite("plugin:x", "skill", 1, 1),
                )
            assert len(fake.requests) == expected


def always_max_tokens(turn: Turn) -> Reply:
    return Reply([text("thinking...")], stop_reason="max_tokens", output_tokens=16000)


def test_max_tokens_gets_one_larger_retry_then_replays(tmp_path: Path) -> None:
    request = demo_request(checks=MIXED_CHECKS[:1])
    with FakeAnthropic(always_max_tokens) as fake:
        verdict = claude_judge(fake, tmp_path).score(request)[0]
        sizes = [body["max_tokens"] for body in fake.requests]
        claude_judge(fake, tmp_path).score(request)
        assert len(fake.requests) == len(sizes)
    assert verdict.status == "UNSCORED"
    # the answer, then once with twice the room; then the check ends (no retry turn)
    assert sizes == [16000, 32000]
    assert verdict.rationale == CUT_AT_MAX_TOKENS
    assert ClaudeSettings().max_tokens == 16000
