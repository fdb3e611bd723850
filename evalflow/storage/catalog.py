"""The DuckDB read side: `<warehouse>/evalflow.duckdb` holds one view per table.

Views glob the table's Parquet parts, so new partitions show up without touching the
catalog; it only needs a refresh when a new table appears. Writers never open it, so an
analyst holding a connection never blocks a run; a refresh that finds the file locked says
so and leaves the existing views in place.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from evalflow.errors import InputError
from evalflow.storage.warehouse import PART_FILE, Warehouse

CATALOG_FILE = "evalflow.duckdb"


def catalog_path(warehouse: Warehouse) -> Path:
    return warehouse.workdir / CATALOG_FILE


def _view_sql(warehouse: Warehouse, table: str) -> str:
    # DuckDB reads local paths and s3:// (its httpfs extension) but not file:// URIs.
    folder = warehouse.table_dir(table).removeprefix("file://")
    pattern = f"{folder}/*/{PART_FILE}".replace("'", "''")
    return (
        f'CREATE OR REPLACE VIEW "{table}" AS SELECT * FROM read_parquet('
        f"'{pattern}', union_by_name = true, hive_partitioning = false)"
    )


def refresh_catalog(warehouse: Warehouse) -> list[str]:
    """(Re)create a view per table; idempotent. Returns the table names."""
    tables = warehouse.tables()
    path = catalog_path(warehouse)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with duckdb.connect(str(path)) as con:
            existing = {
                row[0]
                for row in con.execute(
                    "SELECT view_name FROM duckdb_views() WHERE NOT internal"
                ).fetchall()
            }
            for table in tables:
                con.execute(_view_sql(warehouse, table))
            for stale in sorted(existing - set(tables)):
                con.execute(f'DROP VIEW IF EXISTS "{stale}"')
    except duckdb.IOException as exc:
        raise InputError(
            f"cannot update the DuckDB catalog ({str(exc).splitlines()[0]})",
            where=str(path),
            fix="close other connections to the catalog file, then rerun",
        ) from exc
    return tables


def connect(warehouse: Warehouse) -> duckdb.DuckDBPyConnection:
    """A connection with every table as a view: the catalog file read-only when it exists,
    else an in-memory database with the same views (nothing is written)."""
    path = catalog_path(warehouse)
    if path.is_file():
        try:
            return duckdb.connect(str(path), read_only=True)
        except duckdb.IOException:
            pass
    con = duckdb.connect()
    for table in warehouse.tables():
        con.execute(_view_sql(warehouse, table))
    return con


def query(warehouse: Warehouse, sql: str) -> tuple[list[str], list[tuple]]:
    """Run SQL against the warehouse; a bad query or a corrupt file is one clear error."""
    con = connect(warehouse)
    try:
        cursor = con.execute(sql)
        columns = [d[0] for d in cursor.description or []]
        return columns, cursor.fetchall()
    except duckdb.Error as exc:
        raise InputError(
            f"query failed: {str(exc).splitlines()[0]}",
            where=str(catalog_path(warehouse)),
            fix='check the SQL; `evalflow query "SHOW TABLES"` lists the tables',
        ) from exc
    finally:
        con.close()
