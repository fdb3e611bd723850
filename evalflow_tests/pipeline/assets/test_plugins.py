"""Which PluginEval layers a run gets: offline by default, Claude when the run is judged by it."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalflow.errors import InputError
from evalflow.pipeline.assets.plugins import OFFLINE, plugin_options, plugin_tables
from evalflow.pipeline.resources import EvalflowResource
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


def test_plugineval_draws_on_the_framework_runs_one_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-used")
    resource = EvalflowResource(warehouse=str(tmp_path), judge="anthropic", max_cost_usd=0.5)
    options = plugin_options(resource, None, "demo.kiro.r1")
    shared = resource.budget_for("demo.kiro.r1")
    assert shared is not None and shared.limit_usd == 0.5  # the whole limit, not a share
    assert options.judges[0].transport.budget is shared
    assert options.mc_factory.transport.budget is shared
    judge = resource.get_judge(None, run_key="demo.kiro.r1")
    assert judge.budget is shared and resource.budget_for("other.run") is not shared
