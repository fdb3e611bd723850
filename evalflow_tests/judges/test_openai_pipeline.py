"""The OpenAI-compatible judge through the whole pipeline, against the local fake Chat
Completions API: the demo benchmark's speckit run (slow: 99 check conversations), and the
failure modes on the small benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalflow.cli import main
from evalflow_tests.conftest import DEMO
from evalflow_tests.judges.fake_openai import TEST_KEY, Fail, FakeOpenAI, grep_then_cite

SPECKIT = DEMO / "runs" / "speckit-r1.yaml"


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


def _point_at(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, key: str = TEST_KEY) -> None:
    monkeypatch.setenv("EVALFLOW_OPENAI_BASE_URL", fake.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.delenv("EVALFLOW_OPENAI_MODEL", raising=False)
    monkeypatch.delenv("EVALFLOW_MAX_COST_USD", raising=False)


@pytest.mark.slow
def test_openai_judge_scores_the_demo_run_and_reruns_from_cache(
    warehouse_dir: Path, monkeypatch, capsys
) -> None:
    with FakeOpenAI(grep_then_cite, expected_key=TEST_KEY) as fake:
        _point_at(fake, monkeypatch)
        code, out, err = run_cli(capsys, "score", str(SPECKIT), "--judge", "openai", "--json")
        assert code == 0, err
        sent = len(fake.requests)
        # --force: an unchanged run is otherwise not re-evaluated at all (no step, no call).
        code, out2, err = run_cli(
            capsys, "score", str(SPECKIT), "--judge", "openai", "--json", "--force"
        )
        assert code == 0, err
        assert len(fake.requests) == sent  # unchanged inputs: every call from the cache
    (row,) = json.loads(out)
    assert row["judge_id"] == "openai:gpt-5.5"
    assert row["final"] is not None and row["judge_cost_usd"] > 0
    assert json.loads(out2)[0]["final"] == row["final"]
    # 33 checks x 3 runs, two turns each (grep, then submit_verdict)
    assert sent == 33 * 3 * 2
    code, out, _ = run_cli(
        capsys,
        "query",
        "SELECT self_preference, judge_model, author_model FROM run_manifest",
        "--json",
    )
    assert json.loads(out) == [
        {"self_preference": False, "judge_model": "gpt-5.5", "author_model": "claude-sonnet-4-5"}
    ]
    code, out, _ = run_cli(
        capsys,
        "query",
        "SELECT sum(cost_usd) > 0 AS priced, sum(checks) AS checks FROM judge_cost "
        "WHERE part = 'checks'",
        "--json",
    )
    assert json.loads(out) == [{"priced": True, "checks": 33 * 3}]
    for path in warehouse_dir.rglob("*"):
        if path.is_file():
            assert TEST_KEY.encode() not in path.read_bytes(), path


@pytest.mark.slow  # a `score` run through the pipeline
def test_wrong_key_exits_non_zero_within_5_requests(
    mini: Path, warehouse_dir: Path, monkeypatch, capsys
) -> None:
    manifest = mini / "runs" / "good.yaml"
    with FakeOpenAI(grep_then_cite, expected_key=TEST_KEY) as fake:
        _point_at(fake, monkeypatch, key="sk-proj-wrong-key-0123456789")
        code, out, err = run_cli(capsys, "score", str(manifest), "--judge", "openai", "--json")
    assert code == 2
    assert len(fake.requests) <= 5
    assert "HTTP 401" in err and "Incorrect API key provided" in err
    assert "Traceback" not in err and "sk-proj-wrong-key-0123456789" not in err + out


@pytest.mark.slow  # a `score` run through the pipeline
def test_a_429_storm_exits_non_zero(mini: Path, warehouse_dir: Path, monkeypatch, capsys) -> None:
    storm = Fail(429, "rate_limit_error", "Rate limit reached for requests")
    with FakeOpenAI(lambda turn: storm) as fake:
        _point_at(fake, monkeypatch)
        monkeypatch.setenv("EVALFLOW_OPENAI_MAX_RETRIES", "0")
        monkeypatch.setenv("EVALFLOW_OPENAI_BREAKER_FAILURES", "3")
        monkeypatch.setenv("EVALFLOW_OPENAI_MAX_THROTTLE_S", "0.3")
        manifest = mini / "runs" / "good.yaml"
        code, _, err = run_cli(capsys, "score", str(manifest), "--judge", "openai", "--json")
    assert code == 2 and "consecutive API failures" in err
    # each call backs off and retries its 429s for 0.3 s (two attempts at most, the pause is
    # 1 s) before it counts as failed: the breaker's 3, plus calls already in flight
    assert len(fake.requests) <= 2 * (3 + 3)


@pytest.mark.slow
def test_max_cost_holds_on_the_demo_run(warehouse_dir: Path, monkeypatch, capsys) -> None:
    with FakeOpenAI(grep_then_cite) as fake:
        _point_at(fake, monkeypatch)
        code, out, err = run_cli(
            capsys, "score", str(SPECKIT), "--judge", "openai", "--max-cost", "1", "--json"
        )
    assert code == 0, err
    code, out, _ = run_cli(
        capsys,
        "query",
        "SELECT sum(spent_usd) AS spent, count(*) FILTER (WHERE rationale = 'budget stop') "
        "AS stopped FROM (SELECT * FROM scoring_run_1 UNION ALL SELECT * FROM scoring_run_2 "
        "UNION ALL SELECT * FROM scoring_run_3)",
        "--json",
    )
    (totals,) = json.loads(out)
    assert 0 < totals["spent"] <= 1.0
    assert totals["stopped"] > 0  # the limit stopped judging before it was passed
