"""The operator resource: one judge budget per framework run, across assets, processes and
invocations."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from evalflow.judges.cost import BudgetExceededError
from evalflow.pipeline.resources import EvalflowResource, budget_ledger


def test_no_limit_means_no_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALFLOW_MAX_COST_USD", raising=False)
    assert EvalflowResource(warehouse=str(tmp_path)).budget_for("rk") is None
    monkeypatch.setenv("EVALFLOW_MAX_COST_USD", "2")
    budget = EvalflowResource(warehouse=str(tmp_path)).budget_for("rk")
    assert budget is not None and budget.limit_usd == 2.0
    assert budget.ledger == budget_ledger(tmp_path, "rk")
    unkeyed = EvalflowResource(warehouse=str(tmp_path)).budget_for(None)
    assert unkeyed is not None and unkeyed.ledger is None


def test_every_run_of_one_run_key_shares_one_ledgered_budget(tmp_path: Path) -> None:
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
    assert ledger == budget_ledger(tmp_path, "rk")
    assert result.output_for_node("second") == pytest.approx(0.3)
    # A later `evalflow run` of the same run key (say after a kill) continues from what was
    # spent: the limit bounds the run key's total, 0.6 > 0.5 is refused.
    again = dg.materialize([first], resources={"evalflow": resource}, raise_on_error=False)
    assert not again.success
    raised = EvalflowResource(warehouse=str(tmp_path), max_cost_usd=1.0).budget_for("rk")
    assert raised is not None and raised.spent == pytest.approx(0.3)  # more with a higher limit
    other = EvalflowResource(warehouse=str(tmp_path), max_cost_usd=0.5).budget_for("rk2")
    assert other is not None and other.spent == 0.0


def test_a_new_evaluation_of_a_run_key_gets_its_own_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Killed and run again (same inputs and settings): the same ledger, so the limit holds over
    # both. A nightly re-evaluation of changed inputs: its own ledger, not an exhausted one.
    monkeypatch.setenv("EVALFLOW_MAX_COST_USD", "1")
    first = EvalflowResource(warehouse=str(tmp_path)).budget_for("rk", fingerprint="f1")
    again = EvalflowResource(warehouse=str(tmp_path)).budget_for("rk", fingerprint="f1")
    changed = EvalflowResource(warehouse=str(tmp_path)).budget_for("rk", fingerprint="f2")
    assert first is not None and again is not None and changed is not None
    first.settle(first.reserve(0.9), 0.9)
    with pytest.raises(BudgetExceededError):
        again.reserve(0.2)
    changed.settle(changed.reserve(0.2), 0.2)
    assert first.ledger == again.ledger != changed.ledger
