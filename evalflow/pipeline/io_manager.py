"""The Dagster IO manager: the cross-run assets' outputs ⇄ warehouse Parquet parts.

A cross-run asset's output is its table's cross-run part; an input from a per-run table is
every part of it (every run's, every judge's: the ranking picks one judge per benchmark). The
per-run tables are written by the `evaluation` step itself (`assets.evaluation`). The
warehouse's write checks every frame against its table contract (`evalflow.storage.tables`)
and casts it to the contract's Arrow schema, so a frame that does not fit fails the step
before anything is written. Configured with the factory form so the warehouse location
(`EVALFLOW_WAREHOUSE`) is read when a run starts, not at import.
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
        path = self.warehouse.write(self._table(context), obj)
        context.add_output_metadata({"path": dg.MetadataValue.path(path), "rows": len(obj)})

    def load_input(self, context: dg.InputContext) -> pd.DataFrame:
        table = self._table(context)
        if context.has_asset_partitions:
            # a cross-run step ranks the runs that have the table: a run that failed before
            # writing it (even the only one) leaves it out instead of failing the ranking
            keys = context.asset_partition_keys
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
