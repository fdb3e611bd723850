"""The report's Assumptions say how an LLM judge meets SPEC reproducibility rule 5 (the
rendered line of a Claude-judged run is checked in evalflow_tests/cli/test_claude_pipeline)."""

from __future__ import annotations

from evalflow.reports.markdown import _sampling_disclosure


def test_claude_disclosure_says_no_sampling_parameter_can_be_set() -> None:
    line = _sampling_disclosure("anthropic:claude-sonnet-5-5")
    assert "accepts no sampling parameters, temperature included" in line
    assert "SPEC reproducibility rule 5 (low/zero temperature) cannot be met literally" in line
    assert "k = 3 runs are independent samples combined by majority vote" in line
    assert "response cache replays every cached answer" in line


def test_other_llm_judges_point_at_their_fingerprint() -> None:
    line = _sampling_disclosure("openai:gpt-x")
    assert "sampling settings, e.g. temperature, are in the fingerprint" in line
    assert "no sampling parameters" not in line
    assert "k = 3 runs are independent samples" in line
