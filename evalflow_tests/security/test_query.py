"""`evalflow query` is read-only for real: no file written or read outside the tables, no
extension, no attached database, no setting undone — and the warehouse's tables still work."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest

from evalflow.cli import main
from evalflow.errors import InputError
from evalflow.storage.catalog import catalog_path, connect, query, refresh_catalog
from evalflow.storage.warehouse import Warehouse


@pytest.fixture
def warehouse(tmp_path: Path) -> Warehouse:
    wh = Warehouse(str(tmp_path / "warehouse"))
    wh.write("scores", pd.DataFrame({"run_key": ["a"], "final": [0.5]}), "a")
    # A table without a contract (inferred types): a later part with a widened type and a new
    # column, and the union still reads.
    wh.write("scores", pd.DataFrame({"run_key": ["b"], "final": [1], "note": ["x"]}), "b")
    refresh_catalog(wh)
    return wh


def _part(wh: Warehouse) -> Path:
    return Path(wh.root) / "scores" / "run_key=a" / "part.parquet"


def test_reading_the_tables_works(warehouse: Warehouse) -> None:
    assert query(warehouse, "SELECT count(*) FROM scores")[1] == [(2,)]
    columns, rows = query(warehouse, "SELECT run_key, final, note FROM scores ORDER BY 1")
    assert columns == ["run_key", "final", "note"]
    assert rows == [("a", 0.5, None), ("b", 1.0, "x")]
    assert ("scores",) in query(warehouse, "SHOW TABLES")[1]


def test_copy_to_a_warehouse_part_is_refused_and_the_part_is_unchanged(
    warehouse: Warehouse,
) -> None:
    part = _part(warehouse)
    before = part.read_bytes()
    with pytest.raises(InputError, match="query failed: Permission Error"):
        query(warehouse, f"COPY (SELECT 'forged' AS run_key, 9.9 AS final) TO '{part}'")
    assert part.read_bytes() == before
    with pytest.raises(InputError, match="Permission Error"):
        query(warehouse, f"COPY scores TO '{warehouse.root}/leak.csv'")
    assert not (Path(warehouse.root) / "leak.csv").exists()


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM read_text('/etc/passwd')",
        "SELECT * FROM read_csv('/etc/passwd', sep = ':')",
        "SELECT * FROM read_blob('/etc/hostname')",
        "SELECT * FROM glob('/etc/*')",
        "SELECT * FROM read_parquet('{root}/scores/*/part.parquet')",
        "EXPORT DATABASE '{root}/export'",
    ],
)
def test_no_host_file_is_read_or_written(warehouse: Warehouse, sql: str) -> None:
    with pytest.raises(InputError, match="Permission Error"):
        query(warehouse, sql.format(root=warehouse.root))
    assert not (Path(warehouse.root) / "export").exists()


@pytest.mark.parametrize(
    "sql", ["INSTALL httpfs", "LOAD httpfs", "INSTALL h3 FROM community", "LOAD '/tmp/x.so'"]
)
def test_extensions_cannot_be_installed_or_loaded(warehouse: Warehouse, sql: str) -> None:
    with pytest.raises(InputError, match="query failed: Permission Error"):
        query(warehouse, sql)


def test_database_files_cannot_be_attached(warehouse: Warehouse, tmp_path: Path) -> None:
    for target in (catalog_path(warehouse), tmp_path / "other.duckdb"):
        with pytest.raises(InputError, match="Permission Error"):
            query(warehouse, f"ATTACH '{target}' AS other")
    assert not (tmp_path / "other.duckdb").exists()


@pytest.mark.parametrize(
    "sql",
    [
        "SET enable_external_access = true",
        "SET GLOBAL enable_external_access = true",
        "SET lock_configuration = false",
        "RESET lock_configuration",
        "SET allowed_directories = ['/']",
        "SET temp_directory = '/tmp'",
        "SET autoinstall_known_extensions = true",
    ],
)
def test_settings_cannot_be_unlocked(warehouse: Warehouse, sql: str) -> None:
    with pytest.raises(InputError, match="configuration has been locked"):
        query(warehouse, sql)


def test_the_lockdown_is_in_force_on_the_connection(warehouse: Warehouse) -> None:
    con = connect(warehouse)
    try:
        settings = dict(
            con.execute(
                "SELECT name, value FROM duckdb_settings() WHERE name IN ("
                "'enable_external_access', 'lock_configuration', 'allowed_directories', "
                "'allowed_paths', 'autoload_known_extensions', 'autoinstall_known_extensions')"
            ).fetchall()
        )
    finally:
        con.close()
    assert settings == {
        "enable_external_access": "false",
        "lock_configuration": "true",
        "allowed_directories": "[]",
        "allowed_paths": "[]",
        "autoload_known_extensions": "false",
        "autoinstall_known_extensions": "false",
    }


def test_query_cli_refuses_a_write_with_exit_2(
    warehouse: Warehouse, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("EVALFLOW_WAREHOUSE", warehouse.root)
    part = _part(warehouse)
    before = part.read_bytes()
    with pytest.raises(SystemExit) as done:
        main(["query", f"COPY (SELECT 1 AS final) TO '{part}'"])
    _, err = capsys.readouterr()
    assert done.value.code == 2 and "Permission Error" in err
    assert len(err.strip().splitlines()) == 1
    assert part.read_bytes() == before


def test_an_analyst_holding_the_catalog_does_not_stop_queries(warehouse: Warehouse) -> None:
    analyst = duckdb.connect(str(catalog_path(warehouse)))  # read-write: the exclusive lock
    try:
        assert query(warehouse, "SELECT count(*) FROM scores")[1] == [(2,)]
    finally:
        analyst.close()
