"""The Dagster resource carrying operator settings into assets (read at run time)."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from evalflow import settings
from evalflow.errors import InputError
from evalflow.judges.base import Judge
from evalflow.judges.cost import Budget
from evalflow.judges.registry import make_judge
from evalflow.storage.warehouse import Warehouse


class EvalflowResource(dg.ConfigurableResource):
    """Empty fields fall back to EVALFLOW_WAREHOUSE / EVALFLOW_JUDGE and their defaults."""

    warehouse: str = ""
    judge: str = ""
    borderline_max: float = 0.2  # asset check `borderline_rate` warns above this share
    gate_timeout_s: float = 600.0  # per engineering gate; the process group is killed after it
    rerun_gates: bool = False  # ignore the gate-result cache (--rerun-gates)
    require_isolation: bool = False  # a missing sandbox feature fails the run (--require-isolation)
    # The judge's spend limit for one framework run (--max-cost; unset ⇒ $EVALFLOW_MAX_COST_USD,
    # unset too ⇒ no limit), split evenly over its k scoring runs: each is its own asset,
    # possibly in its own process. 0 means spend nothing.
    max_cost_usd: float | None = None
    labels: str = ""  # the labels judge's file; empty ⇒ $EVALFLOW_LABELS

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

    def get_judge(self, manifest_judge: str | None, *, share: int = 1) -> Judge:
        """The judge, with its response cache under the warehouse; `share` splits the cost
        limit between the scoring runs that each build their own judge."""
        warehouse = self.get_warehouse()
        return make_judge(
            self.judge_name(manifest_judge),
            cache_dir=warehouse.workdir / "cache",
            labels_path=Path(self.labels) if self.labels else None,
            budget=Budget(limit / share) if (limit := self.cost_limit()) is not None else None,
        )
