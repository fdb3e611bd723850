"""The Dagster IO manager: asset outputs ⇄ warehouse Parquet parts.

A partitioned asset's output is the part of its table for that run_key — for a
judge-dependent table, the part of the run's judge (`EvalflowResource.judge_for`), beside the
other judges' parts; a per-run step reads its own judge's parts, a cross-run asset every part
of an upstream partitioned table (every judge's: the ranking picks one per benchmark). The
warehouse's write checks every frame against its table contract (`evalflow.storage.tables`)
and casts it to the contract's Arrow schema, so a frame that does not fit fails the step
before anything is written. Configured with the factory form so the warehouse location
(`EVALFLOW_WAREHOUSE`) is read when a run starts, not at import.
"""

from __future__ import annotations

import dagster as dg
import pandas as pd

from evalflow.io import settings
from evalflow.pipeline.resources import EvalflowResource
from evalflow.storage.tables import TABLES
from evalflow.storage.warehouse import Warehouse


class ParquetIOManager(dg.IOManager):
    def __init__(self, warehouse: Warehouse, evalflow: EvalflowResource) -> None:
        self.warehouse = warehouse
        self.evalflow = evalflow
        self._judges: dict[str, str] = {}

    def _judge(
        self, context: dg.OutputContext | dg.InputContext, table: str, run_key: str
    ) -> str | None:
        """The judge of this run's evaluation of `run_key`, for a judge-dependent table: the
        `evalflow` resource's `judge` in the run's config (`--judge`, the launchpad), else
        this IO manager's, else the manifest's or the default (`judge_for`)."""
        spec = TABLES.get(table)
        if spec is None or not spec.per_judge:
            return None
        if run_key not in self._judges:
            configured = _run_config_judge(context)
            evalflow = (
                self.evalflow.model_copy(update={"judge": configured})
                if configured
                else self.evalflow
            )
            self._judges[run_key] = evalflow.judge_for(run_key)
        return self._judges[run_key]

    @staticmethod
    def _table(context: dg.OutputContext | dg.InputContext) -> str:
        return context.asset_key.path[-1]

    def handle_output(self, context: dg.OutputContext, obj: pd.DataFrame) -> None:
        run_key = context.partition_key if context.has_asset_partitions else None
        table = self._table(context)
        judge = self._judge(context, table, run_key) if run_key is not None else None
        path = self.warehouse.write(table, obj, run_key, judge)
        context.add_output_metadata({"path": dg.MetadataValue.path(path), "rows": len(obj)})

    def load_input(self, context: dg.InputContext) -> pd.DataFrame:
        table = self._table(context)
        if context.has_asset_partitions:
            keys = context.asset_partition_keys
            if context.has_partition_key:
                # a per-run step reads its own run's part (its judge's), which must exist
                return self.warehouse.read(table, keys[0], self._judge(context, table, keys[0]))
            # a cross-run step ranks the runs that have the table: a run that failed before
            # writing it (even the only one) leaves it out instead of failing the ranking
            present = [k for k in keys if self.warehouse.has(table, k)]
            if not present:
                spec = TABLES.get(table)
                return pd.DataFrame(columns=spec.columns if spec else [])
            return pd.concat([self.warehouse.read(table, k) for k in present], ignore_index=True)
        return self.warehouse.read(table)


def _run_config_judge(context: dg.OutputContext | dg.InputContext) -> str:
    """The `evalflow` resource's `judge` as the run's config sets it ("" when it does not)."""
    try:
        config = context.step_context.run_config
    except dg.DagsterInvariantViolationError:  # a context built outside a run
        return ""
    resource = (config.get("resources") or {}).get("evalflow") or {}
    return str((resource.get("config") or {}).get("judge") or "")


class ParquetIOManagerFactory(dg.ConfigurableIOManagerFactory):
    """`warehouse`: a path or pyarrow-fs URI; empty ⇒ $EVALFLOW_WAREHOUSE or data/warehouse."""

    warehouse: str = ""
    # The judge naming the judge-dependent parts a step writes and reads when the run's
    # config gives the `evalflow` resource none (a nested resource would not see that config).
    judge: str = ""

    def create_io_manager(self, context: dg.InitResourceContext) -> ParquetIOManager:
        warehouse = settings.warehouse(self.warehouse or None)
        judges = EvalflowResource(warehouse=self.warehouse, judge=self.judge)
        return ParquetIOManager(warehouse, judges)
