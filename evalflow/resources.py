"""The Dagster resource carrying operator settings into assets (read at run time)."""

from __future__ import annotations

import dagster as dg

from evalflow import settings
from evalflow.judges.base import Judge
from evalflow.judges.registry import make_judge
from evalflow.storage.warehouse import Warehouse


class EvalflowResource(dg.ConfigurableResource):
    """Empty fields fall back to EVALFLOW_WAREHOUSE / EVALFLOW_JUDGE and their defaults."""

    warehouse: str = ""
    judge: str = ""
    borderline_max: float = 0.2  # asset check `borderline_rate` warns above this share
    gate_timeout_s: float = 600.0  # per engineering gate; the process group is killed after it

    def get_warehouse(self) -> Warehouse:
        return settings.warehouse(self.warehouse or None)

    def judge_name(self, manifest_judge: str | None) -> str:
        return self.judge or manifest_judge or settings.default_judge()

    def get_judge(self, manifest_judge: str | None) -> Judge:
        return make_judge(self.judge_name(manifest_judge))
