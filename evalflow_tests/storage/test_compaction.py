"""Compaction is a cache: every read answers as from the per-run parts alone, whatever was
written, re-written or deleted around it."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pandas as pd
import pytest

from evalflow.errors import InputError
from evalflow.storage import compaction
from evalflow.storage.catalog import query, refresh_catalog
from evalflow.storage.warehouse import COMPACT_DIR, Warehouse

SQL = "SELECT run_key, x FROM t ORDER BY run_key, x"


def _warehouse(tmp_path: Path, runs: int = 5) -> Warehouse:
    wh = Warehouse(str(tmp_path / "wh"))
    for r in range(runs):
        wh.write("t", pd.DataFrame({"run_key": [f"k{r}"] * 2, "x": [r, r + 100]}), f"k{r}")
    wh.write("cross", pd.DataFrame({"z": [1]}))
    return wh


def _rows(wh: Warehouse, sql: str = SQL) -> list[tuple]:
    return query(wh, sql)[1]


def test_compacted_reads_equal_the_parts_and_deleting_the_cache_is_harmless(
    tmp_path: Path,
) -> None:
    wh = _warehouse(tmp_path)
    wh.write("t", pd.DataFrame({"run_key": ["k9"], "x": [9], "y": ["new column"]}), "k9")
    before = _rows(wh, "SELECT * FROM t ORDER BY run_key, x")
    assert compaction.compact(wh, threshold=1) == ["t"]  # the cross-run table is not compacted
    assert compaction.source(wh, "t") is not None
    assert _rows(wh, "SELECT * FROM t ORDER BY run_key, x") == before
    assert _rows(wh, "SELECT count(*) FROM t") == [(11,)]
    assert sorted(wh.parts("t")) == wh.parts("t") and len(wh.parts("t")) == 6  # no cache part
    assert len(wh.read("t")) == 11 and wh.read("t", "k1")["x"].tolist() == [1, 101]
    shutil.rmtree(wh.workdir / "t" / COMPACT_DIR)
    assert compaction.source(wh, "t") is None
    assert _rows(wh, "SELECT * FROM t ORDER BY run_key, x") == before


def test_a_run_rewritten_or_added_after_compaction_wins(tmp_path: Path) -> None:
    wh = _warehouse(tmp_path)
    compaction.compact(wh, threshold=1)
    wh.write("t", pd.DataFrame({"run_key": ["k2"], "x": [-2]}), "k2")  # re-evaluated
    wh.write("t", pd.DataFrame({"run_key": ["k7"], "x": [7]}), "k7")  # new since
    rows = _rows(wh)
    assert [r for r in rows if r[0] == "k2"] == [("k2", -2)]
    assert ("k7", 7) in rows and len(rows) == 10
    shutil.rmtree(wh.workdir / "t" / "run_key=k3")  # a deleted part leaves the table too
    assert all(r[0] != "k3" for r in _rows(wh))
    assert compaction.compact(wh, threshold=64) == []  # 2 parts outside: below the threshold
    before = _rows(wh)
    assert compaction.compact(wh, threshold=2) == ["t"]  # the old file plus the 2 new parts
    assert _rows(wh) == before and [r for r in before if r[0] == "k2"] == [("k2", -2)]


def test_the_catalog_compacts_and_its_views_skip_the_cache(tmp_path: Path) -> None:
    import duckdb

    wh = _warehouse(tmp_path, runs=compaction.THRESHOLD)
    refresh_catalog(wh)
    assert (wh.workdir / "t" / COMPACT_DIR / compaction.MANIFEST).is_file()
    with duckdb.connect(str(wh.workdir / "evalflow.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM t").fetchone() == (2 * compaction.THRESHOLD,)


def test_a_read_during_compaction_sees_a_consistent_table(tmp_path: Path) -> None:
    wh = _warehouse(tmp_path, runs=40)
    expected = _rows(wh)
    stop = threading.Event()
    errors: list[BaseException] = []

    def rewrite_and_compact() -> None:
        # Each round re-writes a run with the same rows (a new part, so the compacted copy of
        # that run is stale) and rebuilds the compacted file.
        try:
            r = 0
            while not stop.is_set():
                key = f"k{r % 40}"
                wh.write(
                    "t", pd.DataFrame({"run_key": [key] * 2, "x": [r % 40, r % 40 + 100]}), key
                )
                assert compaction.compact(wh, threshold=1) == ["t"]
                r += 1
        except BaseException as exc:  # reported by the test, not lost in the thread
            errors.append(exc)

    worker = threading.Thread(target=rewrite_and_compact)
    worker.start()
    try:
        for _ in range(30):
            assert _rows(wh) == expected
    finally:
        stop.set()
        worker.join(timeout=60)
    assert not errors and len(list((wh.workdir / "t" / COMPACT_DIR).glob("part-*"))) > 1


def test_rows_are_kept_by_their_part_not_by_their_run_key(tmp_path: Path) -> None:
    wh = Warehouse(str(tmp_path / "wh"))
    wh.write("t", pd.DataFrame({"run_key": ["other"], "x": [1]}), "a")
    wh.write("u", pd.DataFrame({"x": [1]}), "a")  # no run_key column at all
    assert compaction.compact(wh, threshold=1) == ["t", "u"]
    wh.write("t", pd.DataFrame({"run_key": ["other"], "x": [2]}), "a")
    assert _rows(wh, "SELECT x FROM t") == [(2,)] and _rows(wh, "SELECT * FROM u") == [(1,)]


def test_append_only_parts_compact_and_stay_current(tmp_path: Path) -> None:
    """`evaluation_history` adds a file per evaluation to a run's folder."""
    wh = Warehouse(str(tmp_path / "wh"))
    for r in range(3):
        for n in range(3):
            row = pd.DataFrame({"run_key": [f"k{r}"], "n": [n]})
            wh.append("h", row, f"k{r}", f"{n:04d}-eval")
    history = "SELECT run_key, n FROM h ORDER BY run_key, n"
    before = _rows(wh, history)
    assert compaction.compact(wh, threshold=1) == ["h"]
    assert _rows(wh, history) == before
    wh.append("h", pd.DataFrame({"run_key": ["k1"], "n": [3]}), "k1", "0003-eval")
    (wh.workdir / "h" / "run_key=k2" / "0000-eval.parquet").unlink()
    expected = sorted([*before, ("k1", 3)])
    expected.remove(("k2", 0))
    assert _rows(wh, history) == expected
    assert compaction.compact(wh, threshold=1) == ["h"]  # only the new part is loose
    assert _rows(wh, history) == expected
    shutil.rmtree(wh.workdir / "h" / COMPACT_DIR)
    assert _rows(wh, history) == expected


def test_a_cache_of_the_earlier_format_is_ignored(tmp_path: Path) -> None:
    wh = _warehouse(tmp_path)
    assert compaction.compact(wh, threshold=1) == ["t"]
    manifest = wh.workdir / "t" / COMPACT_DIR / compaction.MANIFEST
    manifest.write_text(manifest.read_text().replace('"format": 2', '"format": 1'))
    assert compaction.source(wh, "t") is None
    assert _rows(wh) == [(f"k{r}", x) for r in range(5) for x in (r, r + 100)]


def test_a_corrupt_part_is_not_compacted_and_the_read_reports_it(tmp_path: Path) -> None:
    wh = _warehouse(tmp_path)
    (wh.workdir / "t" / "run_key=k1" / "part.parquet").write_bytes(b"not parquet")
    assert compaction.compact(wh, threshold=1) == []
    with pytest.raises(InputError, match="cannot be read"):
        _rows(wh)


def test_parts_of_several_judges_per_run_compact_and_a_rescore_wins(tmp_path: Path) -> None:
    """A judge-dependent table holds one part per run and judge: compaction keeps each."""
    wh = Warehouse(str(tmp_path / "wh"))
    for r in range(3):
        for judge in ("heuristic", "labels"):
            frame = pd.DataFrame({"run_key": [f"k{r}"], "judge_name": [judge], "x": [r]})
            wh.write("t", frame, f"k{r}")
            (wh.workdir / "t" / f"run_key=k{r}" / "part.parquet").rename(
                wh.workdir / "t" / f"run_key=k{r}" / f"{judge}.parquet"
            )
    sql = "SELECT run_key, judge_name, x FROM t ORDER BY 1, 2"
    before = _rows(wh, sql)
    assert len(before) == 6
    assert compaction.compact(wh, threshold=1) == ["t"]
    assert compaction.source(wh, "t") is not None and _rows(wh, sql) == before
    rescored = pd.DataFrame({"run_key": ["k1"], "judge_name": ["labels"], "x": [-1]})
    wh.write("t", rescored, "k1")
    (wh.workdir / "t" / "run_key=k1" / "part.parquet").replace(
        wh.workdir / "t" / "run_key=k1" / "labels.parquet"
    )
    after = _rows(wh, sql)
    assert ("k1", "labels", -1) in after and ("k1", "heuristic", 1) in after and len(after) == 6
    shutil.rmtree(wh.workdir / "t" / COMPACT_DIR)
    assert _rows(wh, sql) == after
