"""The warehouse: typed Parquet parts written atomically, the DuckDB catalog of views over
them, the append-only evaluation history and the table contracts (docs/tables.md)."""
