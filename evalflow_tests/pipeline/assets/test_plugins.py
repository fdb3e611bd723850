"""Which PluginEval layers a run gets: offline by default, Claude when the run is judged by it."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalflow.domain.plugineval.evaluate import EvalOptions
from evalflow.errors import InputError
from evalflow.judges.cost import UsageRecord
from evalflow.pipeline.assets.plugins import OFFLINE, plugin_options, plugin_tables
from evalflow.pipeline.resources import PLUGINEVAL_SHARE_ENV, EvalflowResource, budget_ledger
from evalflow_tests.conftest import REPO_ROOT


def test_offline_judges_keep_the_simulated_monte_carlo(tmp_path: Path) -> None:
    resource = EvalflowResource(warehouse=str(tmp_path), judge="heuristic")
    assert plugin_options(resource, None) is OFFLINE
    static, judge, mc, composite = plugin_tables(REPO_ROOT / "data/demo/skills/kiro")
    assert not judge["measured"].any() and set(judge["reason"]) == {"no LLM judge configured"}
    assert mc["simulated"].all() and len(composite) == 1 and len(static) == 6


def test_claude_runs_get_claude_layers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    resource = EvalflowResource(warehouse=str(tmp_path), judge="anthropic")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(InputError, match="ANTHROPIC_API_KEY is not set"):
        plugin_options(resource, None)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-used")
    options = plugin_options(resource, None)
    assert len(options.judges) == 1 and options.mc_factory is not None


def test_plugineval_has_its_own_share_of_the_limit_so_it_never_starves_the_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-used")
    monkeypatch.delenv(PLUGINEVAL_SHARE_ENV, raising=False)
    resource = EvalflowResource(warehouse=str(tmp_path), judge="anthropic", max_cost_usd=1.0)
    options = plugin_options(resource, None, "demo.kiro.r1")
    plugineval = resource.budget_for("demo.kiro.r1", "plugineval")
    assert plugineval is not None and plugineval.limit_usd == 0.25
    assert options.judges[0].transport.budget is plugineval
    assert options.mc_factory.transport.budget is plugineval
    assert plugineval.ledger == budget_ledger(tmp_path, "demo.kiro.r1", "plugineval")
    judge = resource.get_judge(None, run_key="demo.kiro.r1", split=True)
    assert judge.budget.limit_usd == 0.75 and judge.budget is not plugineval
    plugineval.settle(plugineval.reserve(0.25), 0.25)  # PluginEval spends all it may
    assert judge.budget.reserve(0.7) == 0.7  # the checks still have theirs
    alone = resource.get_judge(None, run_key="other.run")  # no judged PluginEval: all of it
    assert alone.budget.limit_usd == 1.0
    monkeypatch.setenv(PLUGINEVAL_SHARE_ENV, "1.5")
    with pytest.raises(InputError, match="EVALFLOW_PLUGINEVAL_COST_SHARE"):
        resource.budget_for("x", "plugineval")


class _PaidJudge:
    """A judge layer backend whose call was paid (and recorded) but gave no report."""

    name = "paid"

    def judge(self, skill: object) -> None:
        raise RuntimeError("no report")

    def drain_usage(self) -> list[UsageRecord]:
        record = UsageRecord(
            run_key="plugineval:task-breakdown", check_id="plugin-judge", run=1, turn=1,
            model="claude-sonnet-5-5", attempt=1, input_tokens=1000, output_tokens=200, usd=0.57,
        )  # fmt: skip
        return [record, record.model_copy(update={"cached": True, "attempt": 0})]


def test_plugineval_spend_is_recorded_per_skill() -> None:
    """Before, PluginEval's calls reached no table (its $0.57 of $1.62 was not in judge_cost)."""
    options = EvalOptions(depth="deep", seed=0, judges=(_PaidJudge(),))
    _, judge, _, _ = plugin_tables(REPO_ROOT / "data/demo/skills/kiro", options)
    (row,) = judge.to_dict("records")
    assert row["skill"] == "task-breakdown" and row["api_calls"] == 1
    assert row["spent_usd"] == pytest.approx(0.57) and row["cost_usd"] == pytest.approx(1.14)
    assert row["input_tokens"] == 2000
