"""The Claude pairwise judge for ranking against the local fake Messages API (no network)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalflow.domain.models import Evidence, Verdict
from evalflow.errors import InputError
from evalflow.judges.anthropic_judge import ClaudeSettings
from evalflow.judges.claude_pairwise import (
    PREFERENCE_TOOL_NAME,
    ClaudePairwiseJudge,
    PairwiseItem,
    comparison_text,
    evidence_text,
    judge_pairs,
    judged_matches,
)
from evalflow.judges.cost import Budget
from evalflow_tests.judges.fake_anthropic import (
    TEST_KEY,
    TEST_PRICES,
    Fail,
    FakeAnthropic,
    Reply,
    Turn,
    tool_use,
)


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    for name in ("MODEL", "MAX_TOKENS", "CONCURRENCY", "BATCH", "EFFORT", "MAX_TURNS"):
        monkeypatch.delenv(f"EVALFLOW_CLAUDE_{name}", raising=False)
    monkeypatch.delenv("EVALFLOW_MAX_COST_USD", raising=False)


def item(unit: str, a_good: bool, a: str = "bmad", b: str = "speckit") -> PairwiseItem:
    good, weak = f"GOOD implementation of {unit}", f"weak implementation of {unit}"
    return PairwiseItem(
        unit_id=unit,
        a_label=a,
        b_label=b,
        a_text=good if a_good else weak,
        b_text=weak if a_good else good,
        ac_text=f"The service does {unit}.",
    )


def text_of(turn: Turn) -> str:
    return turn.body["messages"][0]["content"][0]["text"]


def answer(preference: str, turn: Turn) -> Reply:
    payload = {"preference": preference, "reason": "scripted"}
    return Reply([tool_use(PREFERENCE_TOOL_NAME, payload, turn)], "tool_use", 40)


def always_first(turn: Turn) -> Reply:
    """A judge that follows the position, not the content."""
    return answer("first", turn)


def prefers_good(turn: Turn) -> Reply:
    """A judge that follows the content: the implementation marked GOOD wins."""
    first = text_of(turn).split("## Implementation 2", 1)[0]
    return answer("first" if "GOOD" in first else "second", turn)


def judge_for(fake: FakeAnthropic, cache_dir: Path | None, **kwargs: Any) -> ClaudePairwiseJudge:
    budget = kwargs.pop("budget", None)
    return ClaudePairwiseJudge(
        ClaudeSettings(**{"timeout_s": 20.0, **kwargs}),
        cache_dir=cache_dir,
        base_url=fake.base_url,
        prices=TEST_PRICES,
        budget=budget,
    )


def test_both_orders_are_two_distinct_cached_requests(tmp_path: Path) -> None:
    one = item("S1-AC1", a_good=True)
    with FakeAnthropic(prefers_good) as fake:
        judge = judge_for(fake, tmp_path)
        judged_matches([one], judge)
        assert len(fake.requests) == 2
        judged_matches([one], judge)
        assert len(fake.requests) == 2  # both orders replayed from the cache
    texts = [r["messages"][0]["content"][0]["text"] for r in fake.requests]
    # the thread pool may send them in either order
    first, second = sorted(texts, key=lambda t: t.index(one.a_text))
    assert first.index(one.a_text) < first.index(one.b_text)
    assert second.index(one.b_text) < second.index(one.a_text)
    assert "bmad" not in first and "speckit" not in first  # labels are never shown
    assert "The service does S1-AC1." in first
    assert len(list((tmp_path / "anthropic").rglob("*.json"))) == 2
    records = judge.drain_usage()
    assert [r.check_id for r in records[:2]] in (
        ["S1-AC1:a-first", "S1-AC1:b-first"],
        ["S1-AC1:b-first", "S1-AC1:a-first"],
    )


def test_a_position_following_judge_is_flagged_and_counted(tmp_path: Path) -> None:
    items = [item(f"S1-AC{i}", a_good=i % 2 == 0) for i in range(1, 4)]
    with FakeAnthropic(always_first) as fake:
        result = judged_matches(items, judge_for(fake, tmp_path))
    assert result.n_judged == 3 and result.n_position_bias == 3
    assert result.position_bias_rate == 1.0
    assert result.matches()["score_a"].tolist() == [0.5, 0.5, 0.5]
    assert result.table["a_first"].tolist() == ["first"] * 3
    assert result.table["b_first"].tolist() == ["first"] * 3


def test_a_consistent_judge_produces_matches(tmp_path: Path) -> None:
    items = [item("S1-AC1", a_good=True), item("S1-AC2", a_good=False)]
    with FakeAnthropic(prefers_good) as fake:
        result = judged_matches(items, judge_for(fake, tmp_path, model="claude-opus-4-6"))
    assert result.n_position_bias == 0
    matches = result.matches()
    assert matches["unit_id"].tolist() == ["S1-AC1", "S1-AC2"]
    assert matches["score_a"].tolist() == [1.0, 0.0]
    assert fake.requests[0]["tool_choice"] == {"type": "tool", "name": PREFERENCE_TOOL_NAME}


def test_labels_are_put_in_match_table_order_and_grouped_by_pair(tmp_path: Path) -> None:
    items = [
        item("S1-AC1", a_good=True, a="zeta", b="alpha"),
        item("S1-AC1", a_good=True, a="alpha", b="beta"),
        item("S1-AC2", a_good=False, a="zeta", b="alpha"),
    ]
    with FakeAnthropic(prefers_good) as fake:
        run = judge_pairs(items, judge_for(fake, tmp_path))
    assert [(v.a, v.b, v.unit_ids) for v in run.verdicts] == [
        ("alpha", "beta", ["S1-AC1"]),
        ("alpha", "zeta", ["S1-AC1", "S1-AC2"]),
    ]
    # zeta had the GOOD text on S1-AC1, so alpha (now a) loses it, in both orders
    assert run.verdicts[1].a_first == ["second", "first"]
    assert run.verdicts[1].b_first == ["first", "second"]


def test_a_failed_judgement_is_left_out_not_decided(tmp_path: Path) -> None:
    def respond(turn: Turn) -> Reply | Fail:
        return Fail(500, "api_error", "boom") if "S1-AC2" in text_of(turn) else prefers_good(turn)

    items = [item("S1-AC1", a_good=True), item("S1-AC2", a_good=True)]
    with FakeAnthropic(respond) as fake:
        judge = judge_for(fake, tmp_path, max_retries=0)
        run = judge_pairs(items, judge)
        result = judged_matches(items, judge)
    assert [f.unit_id for f in run.failures] == ["S1-AC2"]
    assert "API failure: HTTP 500" in run.failures[0].reason
    assert result.matches()["unit_id"].tolist() == ["S1-AC1"]


def test_malformed_twice_and_budget_stop_are_failures(tmp_path: Path) -> None:
    with FakeAnthropic(lambda turn: answer("better", turn)) as fake:
        run = judge_pairs([item("S1-AC1", True)], judge_for(fake, None))
    assert len(fake.requests) == 4 and run.verdicts == []
    assert "malformed answer twice" in run.failures[0].reason
    with FakeAnthropic(prefers_good) as fake:
        run = judge_pairs([item("S1-AC1", True)], judge_for(fake, None, budget=Budget(0.0)))
    assert fake.requests == [] and run.failures[0].reason == "budget stop"


def test_duplicate_or_self_pairs_are_refused(tmp_path: Path) -> None:
    with FakeAnthropic(prefers_good) as fake:
        judge = judge_for(fake, None)
        with pytest.raises(InputError, match="given twice"):
            judge_pairs([item("S1-AC1", True), item("S1-AC1", False, a="speckit", b="bmad")], judge)
        with pytest.raises(InputError, match="itself"):
            judge_pairs([item("S1-AC1", True, a="x", b="x")], judge)
    assert fake.requests == []


def test_evidence_text_keeps_met_evidence_only() -> None:
    met = Verdict(
        check_id="S1-AC1-I1",
        run=1,
        status="MET",
        evidence=(Evidence(path="app/core.py", start_line=2, end_line=2, quote="return 1"),),
        judge_id="heuristic",
    )
    unmet = Verdict(check_id="S1-AC1-T1", run=1, status="UNMET", judge_id="heuristic")
    text = evidence_text([unmet, met], {"S1-AC1-I1": "greet returns the greeting"})
    assert text == "### S1-AC1-I1: greet returns the greeting\napp/core.py:2-2\nreturn 1"
    assert evidence_text([unmet]) == "(no MET evidence)"
    long = item("S1-AC1", True).model_copy(update={"a_text": "x" * 40_000})
    assert "[truncated: 10000 more characters]" in comparison_text(long, a_first=True)
