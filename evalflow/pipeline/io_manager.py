"""The Dagster IO manager: asset outputs ⇄ warehouse Parquet parts.

A partitioned asset's output is the part of its table for that run_key; a cross-run asset
reads every part of an upstream partitioned table. The warehouse's write checks every frame
against its table contract (`evalflow.storage.tables`) and casts it to the contract's Arrow
schema, so a frame that does not fit fails the step before anything is written. Configured
with the factory form so the warehouse location (`EVALFLOW_WAREHOUSE`) is read when a run
starts, not at import.
"""

from __future__ import annotations

import dagster as dg
import pandas as pd

from evalflow.io import settings
from evalflow.storage.tables import TABLES
from evalflow.storage.warehouse import Warehouse


class ParquetIOManager(dg.IOManager):
    def __init__(self, warehouse: Warehouse) -> None:
        self.warehouse = warehouse

    @staticmethod
    def _table(context: dg.OutputContext | dg.InputContext) -> str:
        return context.asset_key.path[-1]

    def handle_output(self, context: dg.OutputContext, obj: pd.DataFrame) -> None:
        run_key = context.partition_key if context.has_asset_partitions else None
        table = self._table(context)
        path = self.warehouse.write(table, obj, run_key)
        context.add_output_metadata({"path": dg.MetadataValue.path(path), "rows": len(obj)})

    def load_input(self, context: dg.InputContext) -> pd.DataFrame:
        table = self._table(context)
        if context.has_asset_partitions:
            keys = context.asset_partition_keys
            if context.has_partition_key:
                # a per-run step reads its own run's part, which must exist
                return self.warehouse.read(table, keys[0])
            # a cross-run step ranks the runs that have the table: a run that failed before
            # writing it (even the only one) leaves it out instead of failing the ranking
            present = [k for k in keys if self.warehouse.has(table, k)]
            if not present:
                spec = TABLES.get(table)
                return pd.DataFrame(columns=spec.columns if spec else [])
            return pd.concat([self.warehouse.read(table, k) for k in present], ignore_index=True)
        return self.warehouse.read(table)


class ParquetIOManagerFactory(dg.ConfigurableIOManagerFactory):
    """`warehouse`: a path or pyarrow-fs URI; empty ⇒ $EVALFLOW_WAREHOUSE or data/warehouse."""

    warehouse: str = ""

    def create_io_manager(self, context: dg.InitResourceContext) -> ParquetIOManager:
        return ParquetIOManager(settings.warehouse(self.warehouse or None))
