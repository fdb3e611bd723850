"""The Dagster resource carrying operator settings into assets (read at run time)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import dagster as dg
from pydantic import PrivateAttr

from evalflow.errors import InputError
from evalflow.io import settings
from evalflow.judges.base import Judge
from evalflow.judges.cost import Budget
from evalflow.judges.registry import make_judge
from evalflow.storage.warehouse import Warehouse


def budget_ledger(workdir: Path, run_key: str) -> Path:
    """Where the budget of `run_key` is kept across processes and invocations."""
    return workdir / "budgets" / f"{hashlib.sha256(run_key.encode()).hexdigest()[:16]}.json"


class EvalflowResource(dg.ConfigurableResource):
    """Empty fields fall back to EVALFLOW_WAREHOUSE / EVALFLOW_JUDGE and their defaults."""

    warehouse: str = ""
    judge: str = ""
    borderline_max: float = 0.2  # asset check `borderline_rate` warns above this share
    gate_timeout_s: float = 600.0  # per engineering gate; the process group is killed after it
    rerun_gates: bool = False  # ignore the gate-result cache (--rerun-gates)
    require_isolation: bool = False  # a missing sandbox feature fails the run (--require-isolation)
    # The judge's spend limit for one framework run (--max-cost; unset ⇒ $EVALFLOW_MAX_COST_USD,
    # unset too ⇒ no limit), one budget shared by its k scoring runs and PluginEval (see
    # `budget_for`). 0 means spend nothing.
    max_cost_usd: float | None = None
    labels: str = ""  # the labels judge's file; empty ⇒ $EVALFLOW_LABELS
    # "unscored" (--rejudge unscored): the LLM judges ask again the checks their stored
    # answers left UNSCORED; empty ⇒ every stored answer is replayed, nothing re-asked.
    rejudge: str = ""
    _budgets: dict[str, Budget] = PrivateAttr(default_factory=dict)

    def get_warehouse(self) -> Warehouse:
        return settings.warehouse(self.warehouse or None)

    def judge_name(self, manifest_judge: str | None) -> str:
        return self.judge or manifest_judge or settings.default_judge()

    def cost_limit(self) -> float | None:
        if self.max_cost_usd is not None:
            return self.max_cost_usd
        value = os.environ.get("EVALFLOW_MAX_COST_USD", "").strip()
        try:
            return float(value) if value else None
        except ValueError as exc:
            raise InputError(
                f"EVALFLOW_MAX_COST_USD={value!r} is not a number", fix="e.g. 5 (dollars)"
            ) from exc

    def budget_for(self, run_key: str | None) -> Budget | None:
        """The one budget of framework run `run_key` (None without a cost limit).

        Every judge of the run's scoring draws on it: the k scoring runs and side-metric
        judging. They are separate assets, possibly in separate processes (multiprocess
        executor, step retries), and a run may be killed and run again, so the budget keeps
        its ledger under the warehouse, `budgets/<run key digest>.json`: the limit bounds what
        was paid on that run key in total, over every invocation (raise --max-cost to allow
        more). Without a run key it lives in this resource."""
        limit = self.cost_limit()
        if limit is None:
            return None
        key = run_key or ""
        if key not in self._budgets:
            ledger = budget_ledger(self.get_warehouse().workdir, run_key) if run_key else None
            self._budgets[key] = Budget(limit, ledger=ledger)
        return self._budgets[key]

    def get_judge(self, manifest_judge: str | None, *, run_key: str | None = None) -> Judge:
        """The judge, with its response cache under the warehouse and the budget of framework
        run `run_key` (`budget_for`)."""
        warehouse = self.get_warehouse()
        return make_judge(
            self.judge_name(manifest_judge),
            cache_dir=warehouse.workdir / "cache",
            labels_path=Path(self.labels) if self.labels else None,
            budget=self.budget_for(run_key),
            rejudge=self.rejudge == "unscored",
        )
