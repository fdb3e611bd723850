"""The operator resource: one judge budget per framework run, across assets and processes."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from evalflow.judges.cost import BudgetExceededError
from evalflow.pipeline.resources import EvalflowResource


def test_no_limit_means_no_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALFLOW_MAX_COST_USD", raising=False)
    assert EvalflowResource(warehouse=str(tmp_path)).budget_for("rk") is None
    monkeypatch.setenv("EVALFLOW_MAX_COST_USD", "2")
    budget = EvalflowResource(warehouse=str(tmp_path)).budget_for("rk")
    assert budget is not None and budget.limit_usd == 2.0 and budget.ledger is None


def test_assets_of_one_dagster_run_share_one_ledgered_budget(tmp_path: Path) -> None:
    @dg.asset
    def first(evalflow: EvalflowResource) -> str:
        budget = evalflow.budget_for("rk")
        assert budget is not None
        budget.settle(budget.reserve(0.3), 0.3)
        return str(budget.ledger)

    @dg.asset
    def second(evalflow: EvalflowResource, first: str) -> float:
        budget = evalflow.budget_for("rk")
        assert budget is not None and str(budget.ledger) == first
        with pytest.raises(BudgetExceededError):
            budget.reserve(0.3)  # 0.3 already spent by the other asset, limit 0.5
        return budget.spent

    resource = EvalflowResource(warehouse=str(tmp_path), max_cost_usd=0.5)
    result = dg.materialize([first, second], resources={"evalflow": resource})
    ledger = Path(result.output_for_node("first"))
    assert ledger.parent == tmp_path / "budgets" / result.run_id
    assert result.output_for_node("second") == pytest.approx(0.3)
    again = dg.materialize([first], resources={"evalflow": resource})
    assert Path(again.output_for_node("first")).parent.name == again.run_id  # a fresh budget
