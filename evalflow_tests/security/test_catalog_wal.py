"""A read-write analyst client killed mid-session leaves `evalflow.duckdb.wal`; the catalog
swap removes it with the file it belongs to, so every later client still opens the catalog."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from evalflow.cli import main
from evalflow.storage.catalog import catalog_path, refresh_catalog
from evalflow.storage.warehouse import Warehouse

# Writes into the catalog (DuckDB keeps small writes in the WAL until a checkpoint), says so,
# then waits to be killed: the WAL outlives it.
WRITER = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("SET checkpoint_threshold = '1GB'")
con.execute("CREATE TABLE scratch AS SELECT range AS i FROM range(1000)")
print("written", flush=True)
sys.stdin.readline()
"""


def test_a_stale_wal_from_a_killed_client_does_not_break_the_swapped_catalog(
    tmp_path: Path, warehouse_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wh = Warehouse(str(warehouse_dir))
    wh.write("t", pd.DataFrame({"x": [1]}), "a")
    refresh_catalog(wh)
    path = catalog_path(wh)
    wal = path.with_name(path.name + ".wal")
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "written"
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
    finally:
        writer.kill()
        writer.wait(timeout=30)
    assert wal.exists()  # the control: the killed client's WAL is left behind
    refresh_catalog(wh)
    assert not wal.exists()
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.execute("SELECT x FROM t").fetchall() == [(1,)]
    with duckdb.connect(str(path)) as con:  # a read-write client as well
        assert con.execute("SELECT count(*) FROM t").fetchone() == (1,)
    with pytest.raises(SystemExit) as done:
        main(["catalog"])
    _, err = capsys.readouterr()
    assert done.value.code in (0, None), err
