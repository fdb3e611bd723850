"""Typed, engine-neutral Parquet: every table reads with its hive partitioning in pyarrow,
polars and DuckDB, each giving the column types docs/tables.md documents — also for
all-null columns and empty lists — and a value that does not fit its contract is refused."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args, get_origin

import dagster as dg
import duckdb
import pandas as pd
import polars as pl
import pyarrow.dataset as ds
import pytest
from pydantic import BaseModel

from evalflow.io.registry import register_manifest
from evalflow.pipeline.assets import cross_run_assets, harness_assets, per_run_assets
from evalflow.pipeline.assets.partitions import evaluations
from evalflow.pipeline.io_manager import ParquetIOManagerFactory
from evalflow.pipeline.resources import EvalflowResource
from evalflow.storage.arrow import TableContractError, _field_name, _optional, duckdb_type
from evalflow.storage.catalog import catalog_path, query, refresh_catalog
from evalflow.storage.tables import TABLES, TableSpec
from evalflow.storage.warehouse import Warehouse

DOCS = Path(__file__).resolve().parents[2] / "docs" / "tables.md"
WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def documented_types() -> dict[str, dict[str, str]]:
    """table → column → DuckDB type, as docs/tables.md states them."""
    types: dict[str, dict[str, str]] = {}
    table = None
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        if heading := re.match(r"## `(\w+)` \(", line):
            table = heading.group(1)
            types[table] = {}
        elif table and (row := re.match(r"\| `(\w+)` \| ([^|]+?) \|", line)):
            types[table][row.group(1)] = row.group(2).removesuffix(" (nullable)")
    return types


def _polars_type(dtype: Any) -> str:
    if isinstance(dtype, pl.List):
        return _polars_type(dtype.inner) + "[]"
    if isinstance(dtype, pl.Struct):
        fields = (f"{_field_name(f.name)} {_polars_type(f.dtype)}" for f in dtype.fields)
        return f"STRUCT({', '.join(fields)})"
    if dtype == pl.Datetime("us", "UTC"):
        return "TIMESTAMP WITH TIME ZONE"
    names = {pl.String: "VARCHAR", pl.Int64: "BIGINT", pl.Float64: "DOUBLE", pl.Boolean: "BOOLEAN"}
    return names.get(dtype, str(dtype))


def engine_types(
    root: Path, table: str, con: duckdb.DuckDBPyConnection, catalog: duckdb.DuckDBPyConnection
) -> dict[str, dict[str, str]]:
    """engine → column → type in DuckDB's spelling, each engine reading the hive layout
    (`con` an in-memory DuckDB, `catalog` the warehouse's catalog file opened read-only)."""
    folder = root / table
    arrow = ds.dataset(folder, partitioning="hive", format="parquet")
    arrow.to_table()  # every part reads, not only the schema
    frame = pl.scan_parquet(f"{folder}/**/*.parquet", hive_partitioning=True).collect()
    glob = f"{folder}/*/*.parquet"
    described = con.execute(
        f"DESCRIBE SELECT * FROM read_parquet('{glob}', hive_partitioning = true)"
    ).fetchall()
    view = catalog.execute(f'DESCRIBE "{table}"').fetchall()
    return {
        "pyarrow": {f.name: duckdb_type(f.type) for f in arrow.schema},
        "polars": {name: _polars_type(dtype) for name, dtype in frame.schema.items()},
        "duckdb": {name: kind for name, kind, *_ in described},
        "catalog": {name: kind for name, kind, *_ in view},
    }


def assert_engines_agree_with_docs(root: Path, tables: list[str]) -> None:
    documented = documented_types()
    # One DuckDB of each kind for every table: opening them per table was most of the test.
    with (
        duckdb.connect() as con,
        duckdb.connect(str(catalog_path(Warehouse(str(root)))), read_only=True) as catalog,
    ):
        for table in tables:
            for engine, types in engine_types(root, table, con, catalog).items():
                assert types == documented[table], (table, engine)


def _value(annotation: Any, full: bool) -> Any:
    inner, nullable = _optional(annotation)
    if not full and nullable:
        return None
    if get_origin(inner) is list:
        return [_value(get_args(inner)[0], True)] if full else []
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        return {n: _value(f.annotation, full) for n, f in inner.model_fields.items()}
    return {str: "x", int: 1, float: 0.5, bool: True, datetime: WHEN}[inner]


def synthetic(spec: TableSpec, run_key: str, full: bool) -> pd.DataFrame:
    """One row: every field set (`full`), or every nullable field null and every list empty."""
    row = {n: _value(f.annotation, full) for n, f in spec.model.model_fields.items()}
    if "run_key" in row:
        row["run_key"] = run_key
    return pd.DataFrame([row], columns=spec.columns)


def test_every_table_reads_in_every_engine_with_the_documented_types(tmp_path: Path) -> None:
    wh = Warehouse(str(tmp_path))
    for spec in TABLES.values():
        full, empty = (synthetic(spec, key, f) for key, f in (("b.f.r1", True), ("b.f.r2", False)))
        if spec.append_only:
            wh.append(spec.name, full, "b.f.r1", "one")
            wh.append(spec.name, empty, "b.f.r2", "one")
        elif spec.per_run:
            wh.write(spec.name, full, "b.f.r1")
            wh.write(spec.name, empty, "b.f.r2")  # a part of nulls and empty lists only
        else:
            wh.write(spec.name, pd.concat([full, empty], ignore_index=True))
    assert refresh_catalog(wh) == sorted(TABLES)
    assert_engines_agree_with_docs(tmp_path, sorted(TABLES))
    # The empty part keeps its types on its own, too.
    only_nulls = ds.dataset(tmp_path / "evaluation_history" / "run_key=b.f.r2").schema
    assert str(only_nulls.field("judge_model").type) == "string"
    assert str(ds.dataset(tmp_path / "test_inventory").schema.field("row_lines").type) == (
        "list<element: int64>"
    )


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("start_line", 2.5, r"column 'start_line' row 0: 2\.5 \(float\) does not fit int64"),
        ("start_line", "3", r"column 'start_line' row 0: '3' \(str\) does not fit int64"),
        ("asserts", 1, r"column 'asserts' row 0: 1 \(int\) does not fit bool"),
        ("name", 7, r"column 'name' row 0: 7 \(int\) does not fit string"),
        ("row_lines", ["1"], r"column 'row_lines' row 0: \['1'\] \(list\) does not fit list"),
        ("language", None, r"column 'language' has nulls but the contract forbids them"),
    ],
)
def test_a_value_that_does_not_fit_is_refused_not_coerced(
    tmp_path: Path, column: str, value: Any, message: str
) -> None:
    frame = synthetic(TABLES["test_inventory"], "b.f.r1", True)
    frame[column] = pd.Series([value], dtype=object)
    with pytest.raises(TableContractError, match=r"table 'test_inventory' " + message):
        Warehouse(str(tmp_path)).write("test_inventory", frame, "b.f.r1")
    assert not list(tmp_path.rglob("*.parquet")) and not list(tmp_path.rglob("*.tmp"))


def test_lossless_casts_pass(tmp_path: Path) -> None:
    frame = synthetic(TABLES["final_score"], "b.f.r1", False)
    frame["n_checks"] = 4.0  # pandas turns an int column with NaN into floats
    frame["final_lower"] = 0  # an int where a float is due
    wh = Warehouse(str(tmp_path))
    wh.write("final_score", frame, "b.f.r1")
    back = wh.read("final_score", "b.f.r1")
    assert back["n_checks"].tolist() == [4] and back["final_lower"].tolist() == [0.0]


@pytest.mark.slow  # the mini benchmark, the cross-run and harness assets: ~40 s
def test_a_materialised_warehouse_reads_in_every_engine(mini: Path, tmp_path: Path) -> None:
    root = tmp_path / "wh"
    wh = Warehouse(str(root))
    instance = dg.DagsterInstance.ephemeral()
    keys = [register_manifest(wh, m) for m in sorted((mini / "runs").glob("*.yaml"))]
    instance.add_dynamic_partitions(evaluations.name, keys)
    resources = {
        "evalflow": EvalflowResource(warehouse=str(root)),
        "warehouse_io": ParquetIOManagerFactory(warehouse=str(root)),
    }
    for key in keys:
        assert dg.materialize(
            per_run_assets, partition_key=key, resources=resources, instance=instance
        ).success
    assert dg.materialize(
        [*per_run_assets, *cross_run_assets],
        selection=cross_run_assets,
        resources=resources,
        instance=instance,
    ).success
    assert dg.materialize(harness_assets, resources=resources, instance=instance).success
    tables = refresh_catalog(wh)
    missing = set(TABLES) - set(tables)
    # Suite tables need a suite file; the mini benchmark has none.
    assert {t for t in missing if not t.startswith("suite_")} == set()
    assert_engines_agree_with_docs(root, tables)
    # `evalflow query` reads the same types (its in-memory catalog unifies the parts).
    _, rows = query(wh, "SELECT typeof(timestamp), typeof(head_sha) FROM ledger_entry LIMIT 1")
    assert rows == [("TIMESTAMP WITH TIME ZONE", "VARCHAR")]
