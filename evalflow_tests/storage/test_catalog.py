"""The analyst catalog never blocks a refresh: it is rebuilt under a private name and renamed
into place while another process holds a read-only or read-write connection to it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from evalflow.storage.catalog import catalog_path, refresh_catalog
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
        analyst.wait()
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
