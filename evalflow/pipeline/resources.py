"""The Dagster resource carrying operator settings into assets (read at run time)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Literal

import dagster as dg
from pydantic import PrivateAttr

from evalflow.errors import InputError
from evalflow.io import settings
from evalflow.judges.base import Judge
from evalflow.judges.cost import Budget
from evalflow.judges.registry import check_judge_name, make_judge
from evalflow.storage.warehouse import Warehouse

# The judges PluginEval's judged layers run under (Claude only); any other judge leaves them
# offline and PluginEval spends nothing.
PLUGINEVAL_JUDGES = ("anthropic", "hybrid")
PLUGINEVAL_SHARE_ENV = "EVALFLOW_PLUGINEVAL_COST_SHARE"
# PluginEval's part of --max-cost when it is judged: its own budget, so it never starves the
# checks (it runs first and, sharing one, left no check judged at --max-cost 0.3/1/2).
DEFAULT_PLUGINEVAL_SHARE = 0.25
BudgetPart = Literal["checks", "plugineval"]


def budget_ledger(
    workdir: Path, run_key: str, part: BudgetPart = "checks", fingerprint: str = ""
) -> Path:
    """Where one budget of an evaluation of `run_key` (its `fingerprint`: inputs and
    settings) is kept across processes and invocations."""
    digest = hashlib.sha256(f"{run_key}\0{fingerprint}".encode()).hexdigest()[:16]
    return workdir / "budgets" / (f"{digest}.json" if part == "checks" else f"{digest}.{part}.json")


def plugineval_share() -> float:
    """PluginEval's part of a judged run's cost limit (`EVALFLOW_PLUGINEVAL_COST_SHARE`)."""
    value = os.environ.get(PLUGINEVAL_SHARE_ENV, "").strip()
    if not value:
        return DEFAULT_PLUGINEVAL_SHARE
    try:
        share = float(value)
    except ValueError:
        share = -1.0
    if not 0 <= share <= 1:
        raise InputError(
            f"{PLUGINEVAL_SHARE_ENV}={value!r} is not a share between 0 and 1",
            fix=f"e.g. {DEFAULT_PLUGINEVAL_SHARE} (a quarter of --max-cost for PluginEval)",
        )
    return share


class EvalflowResource(dg.ConfigurableResource):
    """Empty fields fall back to EVALFLOW_WAREHOUSE / EVALFLOW_JUDGE and their defaults."""

    warehouse: str = ""
    judge: str = ""
    # The judge the rankings use (`leaderboard --judge`); empty ⇒ $EVALFLOW_RANK_JUDGE, unset
    # too ⇒ per benchmark the judge covering the most runs.
    rank_judge: str = ""
    borderline_max: float = 0.2  # asset check `borderline_rate` warns above this share
    gate_timeout_s: float = 600.0  # per engineering gate; the process group is killed after it
    rerun_gates: bool = False  # ignore the gate-result cache (--rerun-gates)
    require_isolation: bool = False  # a missing sandbox feature fails the run (--require-isolation)
    # The judge's spend limit for one framework run (--max-cost; unset ⇒ $EVALFLOW_MAX_COST_USD,
    # unset too ⇒ no limit): one budget for its k scoring runs and, when PluginEval is judged,
    # a separate share of it for PluginEval (see `budget_for`). 0 means spend nothing.
    max_cost_usd: float | None = None
    labels: str = ""  # the labels judge's file; empty ⇒ $EVALFLOW_LABELS
    # "unscored" (--rejudge unscored): the LLM judges ask again the checks their stored
    # answers left UNSCORED; empty ⇒ every stored answer is replayed, nothing re-asked.
    rejudge: str = ""
    _budgets: dict[str, Budget] = PrivateAttr(default_factory=dict)

    def get_warehouse(self) -> Warehouse:
        return settings.warehouse(self.warehouse or None)

    def judge_name(self, manifest_judge: str | None) -> str:
        return check_judge_name(self.judge or manifest_judge or settings.default_judge())

    def ranking_judge(self) -> str | None:
        """The judge name the ranking assets are pinned to, or None (the most runs)."""
        name = self.rank_judge or settings.rank_judge()
        return check_judge_name(name) if name else None

    def judge_for(self, run_key: str) -> str:
        """The judge this run's evaluation of partition `run_key` uses (`--judge`, else the
        manifest's `judge:`, else the default): the name its judge-dependent parts go under."""
        from evalflow.io.inputs import load_manifest
        from evalflow.io.registry import manifest_for

        manifest = load_manifest(manifest_for(self.get_warehouse(), run_key)).manifest
        return self.judge_name(manifest.judge)

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

    def plugineval_judged(self, manifest_judge: str | None, skills_dir: object) -> bool:
        """Whether PluginEval's judge and Monte Carlo layers call Claude for this run."""
        return skills_dir is not None and self.judge_name(manifest_judge) in PLUGINEVAL_JUDGES

    def budget_for(
        self,
        run_key: str | None,
        part: BudgetPart = "checks",
        *,
        split: bool = False,
        fingerprint: str = "",
    ) -> Budget | None:
        """One budget of framework run `run_key` (None without a cost limit).

        `checks`: every judge of the run's scoring draws on it (the k scoring runs, side
        metrics); `plugineval`: PluginEval's judged layers have their own, so they can never
        starve the checks. When PluginEval is judged (`split`, for the checks' budget) the
        limit is divided: `plugineval_share()` of it for PluginEval, the rest for the checks,
        so the run's total stays within the limit. The parts run in separate assets, possibly
        separate processes (multiprocess executor, step retries), and a run may be killed and
        run again, so each keeps its ledger under the warehouse (`budget_ledger`): the limit
        bounds what one evaluation — the run key at one `fingerprint` of its inputs and
        settings — paid in total, over every invocation; a nightly re-evaluation of changed
        inputs is a new evaluation with its own budget. Without a run key it lives in this
        resource."""
        limit = self.cost_limit()
        if limit is None:
            return None
        if part == "plugineval":
            limit *= plugineval_share()
        elif split:
            limit *= 1 - plugineval_share()
        key = f"{run_key or ''}\0{fingerprint}\0{part}\0{limit!r}"
        if key not in self._budgets:
            ledger = None
            if run_key:
                workdir = self.get_warehouse().workdir
                ledger = budget_ledger(workdir, run_key, part, fingerprint)
            self._budgets[key] = Budget(limit, ledger=ledger)
        return self._budgets[key]

    def get_judge(
        self,
        manifest_judge: str | None,
        *,
        run_key: str | None = None,
        fingerprint: str = "",
        split: bool = False,
    ) -> Judge:
        """The judge, with its response cache under the warehouse and the checks' budget of
        the evaluation of `run_key` at `fingerprint` (`budget_for`; `split` when PluginEval
        is judged too)."""
        warehouse = self.get_warehouse()
        return make_judge(
            self.judge_name(manifest_judge),
            cache_dir=warehouse.workdir / "cache",
            labels_path=Path(self.labels) if self.labels else None,
            budget=self.budget_for(run_key, split=split, fingerprint=fingerprint),
            rejudge=self.rejudge == "unscored",
        )
