"""The analyst catalog never blocks a refresh: it is rebuilt under a private name and renamed
into place while another process holds a read-only or read-write connection to it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from evalflow.errors import InputError
from evalflow.storage.catalog import (
    CatalogUnavailableError,
    _reads,
    _view_sql,
    catalog_path,
    connect,
    query,
    refresh_catalog,
)
from evalflow.storage.warehouse import Warehouse

# A separate process, as an analyst's DuckDB client would be: it holds its connection (and
# the file lock that comes with it) until told to finish, and checks it can still read.
ANALYST = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=sys.argv[2] == "ro")
print(con.execute("SELECT count(*) FROM t").fetchone()[0], flush=True)
sys.stdin.readline()
print(con.execute("SELECT count(*) FROM t").fetchone()[0], flush=True)
con.close()
"""


@pytest.mark.parametrize("mode", ["ro", "rw"])
def test_refresh_completes_while_an_analyst_holds_the_catalog(tmp_path: Path, mode: str) -> None:
    wh = Warehouse(str(tmp_path / "warehouse"))
    wh.write("t", pd.DataFrame({"x": [1]}), "a")
    refresh_catalog(wh)
    path = catalog_path(wh)
    analyst = subprocess.Popen(
        [sys.executable, "-c", ANALYST, str(path), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert analyst.stdout is not None and analyst.stdin is not None
        assert analyst.stdout.readline().strip() == "1"  # connected, lock held
        wh.write("t", pd.DataFrame({"x": [2]}), "b")
        wh.write("u", pd.DataFrame({"y": [3]}), "a")
        assert refresh_catalog(wh) == ["t", "u"]
        analyst.stdin.write("\n")
        analyst.stdin.flush()
        assert analyst.stdout.readline().strip() == "2"  # its views glob the new part too
        assert analyst.wait(timeout=30) == 0
    finally:
        analyst.kill()
        analyst.wait(timeout=30)
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.execute("SELECT y FROM u").fetchall() == [(3,)]
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(".")) == []


def test_views_use_absolute_paths_from_a_relative_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    wh = Warehouse("warehouse")
    wh.write("t", pd.DataFrame({"x": [1]}), "a")
    refresh_catalog(wh)
    monkeypatch.chdir("/")
    with duckdb.connect(str(tmp_path / "warehouse" / "evalflow.duckdb"), read_only=True) as con:
        assert con.execute("SELECT x FROM t").fetchall() == [(1,)]


def test_view_definitions_are_unchanged(tmp_path: Path) -> None:
    # The exact text the catalog writes (a quote in a path doubled), so analysts' files and
    # tools see the same views whatever the reader of `evalflow query` does; `[!_]*` skips
    # the table's `_compact` cache, whose rows the parts already hold.
    root = tmp_path / "it's"
    wh = Warehouse(str(root))
    wh.write("t", pd.DataFrame({"x": [1]}), "a")
    refresh_catalog(wh)
    folder = f"{root.resolve().as_posix()}/t".replace("'", "''")
    with duckdb.connect(str(catalog_path(wh)), read_only=True) as con:
        assert con.execute("SELECT x FROM t").fetchall() == [(1,)]
    assert _view_sql(wh, "t") == (
        f"CREATE VIEW \"t\" AS SELECT * FROM read_parquet('{folder}/[!_]*/*.parquet', "
        "union_by_name = true, hive_partitioning = false)"
    )


def test_query_reads_parts_of_a_changed_contract_like_the_views(tmp_path: Path) -> None:
    # `evalflow query` copies a local table with the views' read options: a later part with
    # a new column and a widened type reads as one table, as through the catalog file.
    wh = Warehouse(str(tmp_path / "warehouse"))
    wh.write("t", pd.DataFrame({"run_key": ["a"], "x": [1]}), "a")
    wh.write("t", pd.DataFrame({"run_key": ["b"], "x": [2.5], "y": ["new"]}), "b")
    refresh_catalog(wh)
    sql = "SELECT run_key, x, y FROM t ORDER BY run_key"
    with duckdb.connect(str(catalog_path(wh)), read_only=True) as con:
        through_views = con.execute(sql).fetchall()
    assert query(wh, sql)[1] == through_views == [("a", 1.0, None), ("b", 2.5, "new")]


@pytest.mark.parametrize(
    ("sql", "reads"),
    [
        ("SELECT * FROM T JOIN u ON T.x = u.x WHERE y IN (SELECT y FROM v)", {"t", "u", "v"}),
        ("WITH c AS (SELECT * FROM w) SELECT * FROM c", {"w"}),
        ("SELECT * FROM query_table('q')", {"q"}),
        ("SHOW TABLES", set()),
        ("SELEC 1", None),  # does not parse: every table is copied, running it fails
        ("SELECT * FROM a JOIN b USING (x)", None),  # needs the tables to plan: all copied
    ],
)
def test_query_copies_the_tables_the_parser_names(sql: str, reads: set[str] | None) -> None:
    assert _reads(sql) == reads


def test_a_table_the_sql_does_not_name_is_listed_and_never_reads_as_empty(tmp_path: Path) -> None:
    wh = Warehouse(str(tmp_path / "warehouse"))
    wh.write("t", pd.DataFrame({"x": [1]}), "a")
    wh.write("u", pd.DataFrame({"y": [2]}), "a")
    con = connect(wh, "SELECT * FROM u")
    try:
        assert con.execute("SELECT * FROM u").fetchall() == [(2,)]
        assert con.execute("SHOW TABLES").fetchall() == [("t",), ("u",)]
        columns = "SELECT table_name, column_name FROM information_schema.columns ORDER BY 1"
        assert con.execute(columns).fetchall() == [("t", "x"), ("u", "y")]
        with pytest.raises(duckdb.PermissionException):
            con.execute("SELECT * FROM t").fetchall()
    finally:
        con.close()
    assert query(wh, "SELECT * FROM t")[1] == [(1,)]
    assert query(wh, "DESCRIBE t")[1][0][:2] == ("x", "BIGINT")


def test_a_query_binds_only_one_part_of_a_table_it_does_not_read(tmp_path: Path) -> None:
    # Binding every part of every table made `SELECT 1` cost a schema read per part: a
    # table the SQL does not name is bound from its first part only, so a broken later
    # part of it (never read) cannot even be noticed, while reading that table reports it.
    wh = Warehouse(str(tmp_path / "warehouse"))
    wh.write("t", pd.DataFrame({"x": [1]}), "a")
    wh.write("u", pd.DataFrame({"y": [2]}), "a")
    broken = Path(wh.write("u", pd.DataFrame({"y": [3]}), "b"))
    broken.write_bytes(b"not parquet")
    assert query(wh, "SELECT 1")[1] == [(1,)]
    assert query(wh, "SELECT x FROM t")[1] == [(1,)]
    assert query(wh, "SELECT table_name FROM information_schema.tables ORDER BY 1")[1] == [
        ("t",),
        ("u",),
    ]
    with pytest.raises(InputError, match="table 'u' cannot be read"):
        query(wh, "SELECT y FROM u")


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from evalflow.cli import main

    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


def _analyst(path: Path, mode: str, sql: str) -> subprocess.Popen:
    script = ANALYST.replace("SELECT count(*) FROM t", sql)
    return subprocess.Popen(
        [sys.executable, "-c", script, str(path), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow  # two CLI materialisations: 40-100 s on the shared machine
def test_a_run_completes_while_analysts_hold_the_catalog_and_the_warehouse_moves(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    root = tmp_path / "wh"
    code, _, err = _cli(
        capsys, "register", str(mini / "runs" / "good.yaml"), "--warehouse", str(root)
    )
    assert code == 0, err
    assert _cli(capsys, "catalog", "--warehouse", str(root))[0] == 0
    path = catalog_path(Warehouse(str(root)))
    # Each kind of connection an analyst may hold, with the file lock it takes (DuckDB lets
    # one process hold a read-write connection, or any number hold read-only ones): the
    # first run evaluates, the second finds the run unchanged; both swap the catalog.
    for mode in ("ro", "rw"):
        analyst = _analyst(path, mode, "SELECT count(*) FROM run_registry")
        try:
            assert analyst.stdout is not None and analyst.stdin is not None
            assert analyst.stdout.readline().strip() == "1"  # connected, lock held
            code, _, err = _cli(capsys, "materialize", "--workers", "1", "--warehouse", str(root))
            assert code == 0, err  # the catalog was swapped, never locked
            analyst.stdin.write("\n")
            analyst.stdin.flush()
            assert analyst.stdout.readline().strip() == "1"  # its old file still reads
            assert analyst.wait(timeout=30) == 0
        finally:
            analyst.kill()
            analyst.wait(timeout=30)
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.execute("SELECT final FROM final_score").fetchall() == [(1.0,)]

    moved = tmp_path / "elsewhere" / "wh"
    moved.parent.mkdir()
    shutil.move(root, moved)
    # `evalflow query` never needs the catalog file; the file itself needs one refresh.
    code, out, _ = _cli(
        capsys, "query", "SELECT final FROM final_score", "--warehouse", str(moved), "--csv"
    )
    assert (code, out) == (0, "final\n1.0\n")
    stale = duckdb.connect(str(moved / "evalflow.duckdb"), read_only=True)
    with stale, pytest.raises(duckdb.Error):  # its views still point at the old place
        stale.execute("SELECT final FROM final_score").fetchall()
    code, out, _ = _cli(capsys, "catalog", "--warehouse", str(moved))
    assert code == 0 and out.startswith(f"{moved / 'evalflow.duckdb'}: ")
    monkeypatch.chdir("/")
    with duckdb.connect(str(moved / "evalflow.duckdb"), read_only=True) as con:
        assert con.execute("SELECT final FROM final_score").fetchall() == [(1.0,)]
        (evaluations,) = con.execute("SELECT count(*) FROM evaluation_history").fetchone()
        assert evaluations >= 1  # 2 unless the second run was skipped as unchanged


def test_an_object_store_catalog_without_httpfs_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The views of a URI warehouse need DuckDB's httpfs; without it (an offline host) the file
    # is not written, with the install command, and the tables stay readable through `connect`.
    monkeypatch.setattr("evalflow.storage.catalog._httpfs_installed", lambda: False)
    local = Warehouse((tmp_path / "local").as_uri(), str(tmp_path / "local_work"))
    local.write("notes", pd.DataFrame({"run_key": ["a.b.r1"]}), "a.b.r1")
    refresh_catalog(local)  # a file:// warehouse's views read local paths: no httpfs needed
    assert catalog_path(local).is_file()
    warehouse = Warehouse("s3://bucket/wh", str(tmp_path / "work"))
    monkeypatch.setattr(Warehouse, "tables", lambda self: ["notes"])
    with pytest.raises(CatalogUnavailableError) as raised:
        refresh_catalog(warehouse)
    assert "INSTALL httpfs" in raised.value.one_line()
    assert not catalog_path(warehouse).exists()
