"""The evaluation steps' guards: a judge that failed on every call, and the comparability key."""

from __future__ import annotations

import anthropic
import httpx2 as httpx
import pytest

from evalflow.domain.models import Verdict
from evalflow.io.evaluation import (
    JUDGE_ERROR_PREFIXES,
    comparability,
    judge_failure,
    judge_prompt_version,
)
from evalflow.judges.anthropic_judge import failure_reason
from evalflow.judges.heuristic import JUDGE_VERSION, HeuristicJudge


def unscored(check_id: str, reason: str) -> Verdict:
    return Verdict(check_id=check_id, run=1, status="UNSCORED", rationale=reason, judge_id="j")


def test_every_check_errored_is_a_judge_failure() -> None:
    verdicts = [unscored(f"C{n}", "API failure: HTTP 401 AuthenticationError:\n bad key")
                for n in range(3)]  # fmt: skip
    assert judge_failure(verdicts) == "API failure: HTTP 401 AuthenticationError: bad key"


@pytest.mark.parametrize(
    "reasons",
    [
        ["API failure: HTTP 429 RateLimitError", "budget stop"],  # the operator's limit
        ["API failure: HTTP 529", "no probes for this check"],  # one check was answered
        [],
    ],
)
def test_anything_less_is_not(reasons: list[str]) -> None:
    assert judge_failure([unscored(f"C{n}", r) for n, r in enumerate(reasons)]) is None


def test_the_prefixes_are_the_claude_judges_failure_reasons() -> None:
    request = httpx.Request("POST", "https://example.invalid/v1/messages")
    response = httpx.Response(401, request=request)
    errors = [
        anthropic.AuthenticationError("invalid x-api-key", response=response, body=None),
        anthropic.APIConnectionError(request=request),
        RuntimeError("boom"),
    ]
    assert all(failure_reason(e).startswith(JUDGE_ERROR_PREFIXES) for e in errors)


class FakeJudge:
    def __init__(self, judge_id: str, model: str | None, fields: dict) -> None:
        self.judge_id, self.model, self._fields = judge_id, model, fields

    def fingerprint_fields(self) -> dict:
        return self._fields


def test_comparability_key_parts() -> None:
    assert judge_prompt_version(HeuristicJudge()) == JUDGE_VERSION
    claude = FakeJudge("anthropic:m", "m", {"model": "m", "prompt_version": "p1"})
    hybrid = FakeJudge(
        "hybrid:m", "m", {"heuristic": {"version": "h3"}, "claude": {"prompt_version": "p1"}}
    )
    labels = FakeJudge("labels:run-a", None, {"labels_sha256": "x"})
    assert judge_prompt_version(hybrid) == "p1+h3" and judge_prompt_version(labels) is None
    version, key = comparability("b" * 64, claude)
    assert version == "p1" and len(key) == 16
    other_prompt = FakeJudge("anthropic:m", "m", {"prompt_version": "p2"})
    other_model = FakeJudge("anthropic:n", "n", {"prompt_version": "p1"})
    keys = {comparability("b" * 64, j)[1] for j in (claude, other_prompt, other_model, hybrid)}
    assert len(keys) == 4 and comparability("c" * 64, claude)[1] != key
    # One labels file per run: the file name is not part of the judge's identity.
    labels_b = FakeJudge("labels:run-b", None, {"labels_sha256": "y"})
    assert comparability("b" * 64, labels)[1] == comparability("b" * 64, labels_b)[1]
