"""The hybrid judge: heuristic first, Claude only for unprobed or UNSCORED checks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from evalflow.domain.models import Check, Probe
from evalflow.judges.hybrid import HybridJudge
from evalflow_tests.judges.fake_anthropic import (
    TEST_KEY,
    FakeAnthropic,
    claude_judge,
    demo_request,
    grep_then_submit,
)

PROBED = Check(
    id="S1-AC1-I1",
    kind="I",
    proposition="greet(name) uses the name",
    probes=(Probe(kind="impl", pattern=r'f"Hello, \{name\}', path_globs=("app/**",)),),
)
PROBED_MISSING = Check(
    id="S1-AC1-I2",
    kind="I",
    proposition="farewell exists",
    probes=(Probe(kind="impl", pattern=r"def farewell\(", path_globs=("app/**",)),),
)
UNPROBED = Check(id="S2-AC1-I1", kind="I", proposition="bye() says goodbye")


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def test_only_undecided_checks_reach_claude(tmp_path: Path) -> None:
    with FakeAnthropic(grep_then_submit) as fake:
        judge = HybridJudge(claude_judge(fake, tmp_path))
        # PROBED_MISSING's probe is recorded portable, so its silence is a proven UNMET.
        request = replace(
            demo_request(checks=(PROBED, PROBED_MISSING, UNPROBED)),
            portable=frozenset({("S1-AC1-I2", 1)}),
        )
        verdicts = judge.score(request)
    assert [v.check_id for v in verdicts] == ["S1-AC1-I1", "S1-AC1-I2", "S2-AC1-I1"]
    assert [(v.status, v.judge_id) for v in verdicts] == [
        ("MET", "heuristic"),
        ("UNMET", "heuristic"),
        ("MET", "anthropic:claude-sonnet-5-5"),
    ]
    asked = {
        r["messages"][0]["content"][1]["text"].split("## Check ")[1][:9] for r in fake.requests
    }
    assert asked == {"S2-AC1-I1"}
    assert judge.judge_id == "hybrid:claude-sonnet-5-5" and judge.deterministic is False
    assert set(judge.fingerprint_fields()) == {"judge", "heuristic", "claude"}
    assert len(judge.drain_usage()) == 2


def test_all_probed_means_no_api_call(tmp_path: Path) -> None:
    with FakeAnthropic(grep_then_submit) as fake:
        judge = HybridJudge(claude_judge(fake, tmp_path))
        verdicts = judge.score(demo_request(checks=(PROBED,)))
    assert verdicts[0].status == "MET" and fake.requests == []


def test_a_silence_without_portable_proof_goes_to_claude(tmp_path: Path) -> None:
    with FakeAnthropic(grep_then_submit) as fake:
        judge = HybridJudge(claude_judge(fake, tmp_path))
        verdicts = judge.score(demo_request(checks=(PROBED, PROBED_MISSING)))
    assert [v.judge_id for v in verdicts] == ["heuristic", "anthropic:claude-sonnet-5-5"]
