"""The evaluation steps' guards: a judge that failed on every call, the comparability key,
and the re-asking of UNSCORED votes."""

from __future__ import annotations

from pathlib import Path

import anthropic
import httpx2 as httpx
import pytest

from evalflow.domain.models import Search, Verdict
from evalflow.io.evaluation import (
    JUDGE_ERROR_PREFIXES,
    comparability,
    fingerprint,
    judge_failure,
    judge_prompt_version,
    open_snapshot,
    prepare_run,
    resolve_run,
    score_run,
)
from evalflow.judges.anthropic_judge import failure_reason
from evalflow.judges.base import JudgeRequest
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


class AnswersOnSecondAsk:
    """A sampling judge whose first answer to every check is lost (UNSCORED, e.g. a stopped
    call) and whose second is a decided vote."""

    judge_id, model, deterministic = "anthropic:m", "m", False

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def score(self, request: JudgeRequest) -> list[Verdict]:
        ids = [check.id for _, check in request.checks]
        self.asked.append(ids)
        first = len(self.asked) == 1
        return [
            Verdict(
                check_id=check_id,
                run=request.run,
                status="UNSCORED" if first and n else "UNMET",
                searches=() if first else (Search(pattern="x", scope="repository"),),
                rationale="stopped" if first else "looked",
                judge_id=self.judge_id,
            )
            for n, check_id in enumerate(ids)
        ]


def test_an_unscored_vote_is_re_asked_once(mini: Path, tmp_path: Path) -> None:
    """SPEC §5: an UNSCORED vote is re-asked before it reaches the vote; only those checks
    are asked again, and the first check (UNMET without searches ⇒ UNSCORED by the
    validator) is re-asked too."""
    prepared = prepare_run(mini / "runs" / "good.yaml", tmp_path / "wh")
    judge = AnswersOnSecondAsk()
    verdicts = score_run(prepared, judge, 1, open_snapshot(prepared))
    every = [check.id for _, check in prepared.benchmark.baseline.checks()]
    assert judge.asked == [every, every]
    assert {v.status for v in verdicts} == {"UNMET"}
    heuristic = score_run(prepared, HeuristicJudge(), 1, open_snapshot(prepared))
    assert len(heuristic) == len(every)  # a deterministic judge is asked once


def test_resolving_gives_the_fingerprint_preparing_gives_without_a_diff(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The freshness check fingerprints a run from its resolved commits alone."""
    manifest = mini / "runs" / "good.yaml"
    prepared = prepare_run(manifest, tmp_path / "wh")
    monkeypatch.setattr(
        "evalflow.io.evaluation.diff_surface", lambda *a: pytest.fail("diffed to fingerprint")
    )
    resolved = resolve_run(manifest, tmp_path / "wh")
    judge = HeuristicJudge()
    assert resolved.diff == ()
    assert fingerprint(resolved, judge) == fingerprint(prepared, judge)
