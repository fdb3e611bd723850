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


BASE_MANIFEST = {"benchmark": "b", "framework": "f", "run": "r1", "repo": "/r", "base": "a",
                 "head": "b"}  # fmt: skip
# One change per manifest key that changes a result (issue 27: a fixed gate reprinted the
# stale failure because the fingerprint ignored it).
CHANGES = {
    "gates": {"unit": "pytest -q"},
    "setup": "pip install -e .",
    "gate_env": {"CI": "1"},
    "gate_limits": {"timeout_s": 60},
    "require_isolation": True,
    "author_model": "claude-x",
    "framework_cost_usd": 1.5,
    "judge": "labels",
    "spec_dir": "specs/001",
    "skills_dir": ".claude/skills",
}


def _fingerprint(tmp_path, manifest: dict, defaults: dict | None = None) -> str:
    from evalflow.domain.models import GateSettings, RunManifest
    from evalflow.io.evaluation import PreparedRun, fingerprint
    from evalflow.io.inputs import Benchmark

    benchmark = Benchmark(
        prd=None,  # type: ignore[arg-type]  # the fingerprint reads the PRD's text only
        prd_text="# PRD",
        baseline=None,  # type: ignore[arg-type]  # and the baseline's hash
        baseline_sha256="0" * 64,
        baseline_path=tmp_path / "_ac-baseline.yaml",
        gate_defaults=GateSettings(**(defaults or {})),
    )
    prepared = PreparedRun(
        RunManifest(**manifest), tmp_path / "m.yaml", benchmark, tmp_path, "a" * 40, "b" * 40,
        False, (),
    )  # fmt: skip
    return fingerprint(prepared, HeuristicJudge())


@pytest.mark.parametrize("key", sorted(CHANGES))
def test_each_result_changing_manifest_key_changes_the_fingerprint(tmp_path, key) -> None:
    before = _fingerprint(tmp_path, BASE_MANIFEST)
    assert _fingerprint(tmp_path, {**BASE_MANIFEST, key: CHANGES[key]}) != before


def test_a_key_at_its_default_and_the_location_leave_it_unchanged(tmp_path) -> None:
    before = _fingerprint(tmp_path, BASE_MANIFEST)
    assert _fingerprint(tmp_path, {**BASE_MANIFEST, "gate_env": {}, "judge": None}) == before
    # The resolved commits pin the code; where the repository lives does not change it.
    assert _fingerprint(tmp_path, {**BASE_MANIFEST, "repo": "/elsewhere"}) == before


def test_the_benchmark_gate_defaults_enter_as_the_gates_use_them(tmp_path) -> None:
    before = _fingerprint(tmp_path, BASE_MANIFEST)
    assert _fingerprint(tmp_path, BASE_MANIFEST, {"setup": "npm ci"}) != before
    # The same setup from the manifest or from the benchmark's defaults is the same run.
    assert _fingerprint(tmp_path, {**BASE_MANIFEST, "setup": "npm ci"}) == _fingerprint(
        tmp_path, BASE_MANIFEST, {"setup": "npm ci"}
    )
