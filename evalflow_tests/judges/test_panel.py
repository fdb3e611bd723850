"""Judge panels: the k runs split across model families, and the self-preference rule that
uses the votes of the other family instead of degrading borderlines."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pandas as pd
import pytest

from evalflow.cli import main
from evalflow.domain.vote import majority_vote
from evalflow.errors import InputError
from evalflow.judges.anthropic_judge import ClaudeJudge
from evalflow.judges.cost import Budget
from evalflow.judges.heuristic import HeuristicJudge
from evalflow.judges.openai_judge import OpenAIJudge
from evalflow.judges.panel import PanelJudge, independent_votes, judge_models
from evalflow.judges.registry import JudgeName, check_judge_name, make_judge
from evalflow_tests.judges import fake_anthropic as fa
from evalflow_tests.judges import fake_openai as fo

BYE_TEST = {
    "path": "tests/test_core.py",
    "start_line": 9,
    "end_line": 9,
    "quote": 'assert bye() == "bye"',
}
EVIDENCE = {
    "S1-AC1-I1": ("app/core.py", 2, 'return f"Hello, {name}"'),
    "S1-AC1-T1": ("tests/test_core.py", 5, 'assert greet("Ada") == "Hello, Ada"'),
    "S2-AC1-I1": ("app/core.py", 6, 'return "bye"'),
    "S2-AC1-T1": ("tests/test_core.py", 9, 'assert bye() == "bye"'),
}


def claude_splits_on_bye_test(turn: fa.Turn) -> fa.Reply:
    """Claude's usual answers (S2-AC1-T1 UNMET), except MET for it in scoring run 1."""
    if turn.check_id == "S2-AC1-T1" and turn.run == 1 and turn.turn == 2:
        search = {"pattern": r"\bbye\(", "scope": "**", "hits": 2}
        return fa.submit(turn, "MET", evidence=[BYE_TEST], searches=[search])
    return fa.grep_then_submit(turn)


def openai_meets_everything(turn: fo.Turn) -> fo.Reply:
    target = "bye" if turn.check_id.startswith("S2") else "greet"
    pattern = rf"\b{target}\("
    if turn.turn == 1:
        return fo.calls(fo.tool_call("grep", {"pattern": pattern, "path_glob": "**"}, turn))
    path, line, quote = EVIDENCE[turn.check_id]
    evidence = [{"path": path, "start_line": line, "end_line": line, "quote": quote}]
    search = {"pattern": pattern, "scope": "**", "hits": 1}
    return fo.submit(turn, "MET", evidence=evidence, searches=[search])


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", fa.TEST_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", fo.TEST_KEY)
    for name in ("EVALFLOW_CLAUDE_MODEL", "EVALFLOW_OPENAI_MODEL", "EVALFLOW_MAX_COST_USD"):
        monkeypatch.delenv(name, raising=False)


def test_panel_names_parse_and_fail_in_one_line() -> None:
    assert check_judge_name("panel: anthropic , openai") == "panel:anthropic,openai"
    assert check_judge_name("openai") == "openai"
    for bad, message in (
        ("panel:anthropic", "2 to 3 different judges"),
        ("panel:openai,openai", "2 to 3 different judges"),
        ("panel:anthropic,openai,heuristic,hybrid", "2 to 3 different judges"),
        ("panel:anthropic,labels", "unknown panel member 'labels'"),
        ("panel:anthropic,panel:openai", "unknown panel member"),
    ):
        with pytest.raises(InputError, match=message) as err:
            check_judge_name(bad)
        assert "e.g. --judge panel:anthropic,openai" in err.value.one_line()
    assert JudgeName().convert("panel:openai,anthropic", None, None) == "panel:openai,anthropic"
    with pytest.raises(click.BadParameter, match="unknown judge 'gpt'"):
        JudgeName().convert("gpt", None, None)


def test_make_judge_builds_members_sharing_one_budget(tmp_path: Path, keys) -> None:
    budget = Budget(2.0)
    panel = make_judge("panel:anthropic,openai", cache_dir=tmp_path, budget=budget)
    assert isinstance(panel, PanelJudge)
    claude, gpt = panel.members
    assert isinstance(claude, ClaudeJudge) and isinstance(gpt, OpenAIJudge)
    assert claude.budget is budget and gpt.budget is budget
    assert panel.judge_id == "panel:anthropic:claude-sonnet-5-5+openai:gpt-5.5"
    assert panel.model == "claude-sonnet-5-5+gpt-5.5"
    assert judge_models(panel) == ("claude-sonnet-5-5", "gpt-5.5")
    fields = panel.fingerprint_fields()
    assert fields["members"]["1"]["model"] == "claude-sonnet-5-5"
    assert fields["members"]["2"]["model"] == "gpt-5.5"
    assert not panel.deterministic


def test_runs_are_assigned_round_robin_and_usage_is_drained_from_both(tmp_path: Path, keys) -> None:
    with (
        fa.FakeAnthropic(fa.grep_then_submit) as claude_api,
        fo.FakeOpenAI(openai_meets_everything) as openai_api,
    ):
        claude = fa.claude_judge(claude_api, tmp_path)
        gpt = fo.openai_judge(openai_api, tmp_path)
        panel = PanelJudge([claude, gpt])
        ids = {
            run: {v.judge_id for v in panel.score(fa.demo_request(run=run))} for run in (1, 2, 3)
        }
    assert ids == {
        1: {"anthropic:claude-sonnet-5-5"},
        2: {"openai:gpt-5.5"},
        3: {"anthropic:claude-sonnet-5-5"},
    }
    usage = panel.drain_usage()
    assert {r.model for r in usage} == {"claude-sonnet-5-5", "gpt-5.5"}
    assert len(usage) == len(claude_api.requests) + len(openai_api.requests) == 24
    assert {p.relative_to(tmp_path).parts[0] for p in tmp_path.rglob("*.json")} == {
        "anthropic",
        "openai",
    }


def _votes(statuses: list[str], judges: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "run_key": "b.f.r1",
            "check_id": "c",
            "run": [1, 2, 3],
            "status": statuses,
            "judge_id": judges,
        }
    )


PANEL_RUNS = ["anthropic:claude-sonnet-5-5", "openai:gpt-5.5", "anthropic:claude-sonnet-5-5"]


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        # The other family's vote decides the MET majority together with it: rule 4's
        # condition is lifted for this check.
        (["MET", "MET", "UNMET"], "MET"),
        (["MET", "UNMET", "MET"], "UNMET"),  # it disagrees: a borderline MET is UNMET
        (["UNMET", "MET", "UNMET"], "UNMET"),  # one vote never overrules a 2:1 majority
        (["MET", "UNSCORED", "MET"], "MET"),  # two agreeing votes: not borderline
        (["MET", "UNMET", "UNSCORED"], "UNSCORED"),  # no majority: never UNMET
        (["MET", "MET", "MET"], "MET"),  # not borderline: untouched
    ],
)
def test_self_preference_uses_the_other_family(statuses: list[str], expected: str) -> None:
    frame = _votes(statuses, PANEL_RUNS)
    independent = independent_votes(frame["judge_id"], "claude-opus-4-6")
    assert independent.tolist() == [False, True, False]
    (row,) = majority_vote(frame, 3, borderline_to_unmet=True, independent=independent).to_dict(
        "records"
    )
    assert row["majority"] == expected


def test_a_single_family_judge_still_degrades_borderlines() -> None:
    frame = _votes(["MET", "MET", "UNMET"], ["anthropic:claude-sonnet-5-5"] * 3)
    independent = independent_votes(frame["judge_id"], "claude-opus-4-6")
    assert not independent.any()
    votes = majority_vote(frame, 3, borderline_to_unmet=True, independent=independent)
    assert votes["majority"].tolist() == ["UNMET"]
    assert independent_votes(frame["judge_id"], None) is None
    assert independent_votes(frame["judge_id"], float("nan")) is None
    heuristic = HeuristicJudge()
    assert judge_models(heuristic) == ()


@pytest.mark.slow  # two `score` runs through the pipeline (the panel's parts: tests above)
def test_panel_run_end_to_end(mini: Path, warehouse_dir: Path, monkeypatch, capsys, keys) -> None:
    import yaml

    manifest = mini / "runs" / "good.yaml"
    data = yaml.safe_load(manifest.read_text())
    manifest.write_text(yaml.safe_dump({**data, "author_model": "claude-opus-4-6"}))
    with (
        fa.FakeAnthropic(claude_splits_on_bye_test) as claude_api,
        fo.FakeOpenAI(openai_meets_everything, expected_key=fo.TEST_KEY) as openai_api,
    ):
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude_api.base_url)
        monkeypatch.setenv("EVALFLOW_OPENAI_BASE_URL", openai_api.base_url)
        judge = "panel:anthropic,openai"
        code, out, err = run_cli(capsys, "score", str(manifest), "--judge", judge, "--json")
        assert code == 0, err
        sent = (len(claude_api.requests), len(openai_api.requests))
        # --force: an unchanged run is otherwise not re-evaluated at all (no step, no call).
        code, out2, err = run_cli(
            capsys, "score", str(manifest), "--judge", judge, "--json", "--force"
        )
        assert code == 0, err
        assert (len(claude_api.requests), len(openai_api.requests)) == sent  # all cached
    assert sent == (4 * 2 * 2, 4 * 2)  # Claude judged runs 1 and 3, GPT run 2
    (row,) = json.loads(out)
    assert row["judge_id"] == "panel:anthropic:claude-sonnet-5-5+openai:gpt-5.5"
    # S2-AC1-T1 split MET (Claude, run 1), MET (GPT), UNMET (Claude, run 3): borderline, and
    # the independent GPT vote keeps it MET instead of the single-judge rule's UNMET (0.84).
    assert row["final"] == 1.0 and json.loads(out2)[0]["final"] == 1.0
    code, out, _ = run_cli(
        capsys,
        "query",
        "SELECT self_preference, judge_model, comparability_key FROM run_manifest",
        "--json",
    )
    (manifest_row,) = json.loads(out)
    assert manifest_row["self_preference"] is True
    assert manifest_row["judge_model"] == "claude-sonnet-5-5+gpt-5.5"
    code, out, _ = run_cli(
        capsys,
        "query",
        "SELECT run, judge_id, status FROM scoring_run_1 WHERE check_id = 'S2-AC1-T1' "
        "UNION ALL SELECT run, judge_id, status FROM scoring_run_2 WHERE check_id = 'S2-AC1-T1' "
        "UNION ALL SELECT run, judge_id, status FROM scoring_run_3 WHERE check_id = 'S2-AC1-T1' "
        "ORDER BY run",
        "--json",
    )
    assert json.loads(out) == [
        {"run": 1, "judge_id": "anthropic:claude-sonnet-5-5", "status": "MET"},
        {"run": 2, "judge_id": "openai:gpt-5.5", "status": "MET"},
        {"run": 3, "judge_id": "anthropic:claude-sonnet-5-5", "status": "UNMET"},
    ]
    code, out, _ = run_cli(
        capsys,
        "query",
        "SELECT majority, borderline FROM majority_vote WHERE check_id = 'S2-AC1-T1'",
        "--json",
    )
    assert json.loads(out) == [{"majority": "MET", "borderline": True}]
    reports = sorted(warehouse_dir.rglob("reports/**/*.md"))
    assert reports  # one per materialisation of the report
    text = reports[-1].read_text()
    assert (
        "Judges of the panel: run 1 `anthropic:claude-sonnet-5-5`, run 2 `openai:gpt-5.5`" in text
    )
    assert "judges of another family were MET with the majority" in text
