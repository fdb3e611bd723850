from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest

from evalflow.errors import InputError
from evalflow.storage.catalog import catalog_path, query, refresh_catalog
from evalflow.storage.warehouse import Warehouse


def test_write_replaces_one_partition_atomically(tmp_path: Path) -> None:
    wh = Warehouse(str(tmp_path))
    wh.write("t", pd.DataFrame({"run_key": ["a"], "x": [1]}), "a")
    wh.write("t", pd.DataFrame({"run_key": ["b"], "x": [2]}), "b")
    wh.write("t", pd.DataFrame({"run_key": ["a"], "x": [3]}), "a")
    assert (tmp_path / "t" / "run_key=a" / "part.parquet").is_file()
    assert not list(tmp_path.rglob("*.tmp"))
    frame = wh.read("t").sort_values("run_key")
    assert frame["x"].tolist() == [3, 2]
    assert wh.read("t", "b")["x"].tolist() == [2]
    assert wh.tables() == ["t"]


def test_cross_run_table(tmp_path: Path) -> None:
    wh = Warehouse(str(tmp_path))
    wh.write("board", pd.DataFrame({"x": [1]}))
    assert (tmp_path / "board" / "all" / "part.parquet").is_file()
    assert wh.has("board") and not wh.has("board", "k")


def test_corrupt_file_is_reported_not_skipped(tmp_path: Path) -> None:
    wh = Warehouse(str(tmp_path))
    wh.write("t", pd.DataFrame({"x": [1]}), "a")
    wh.write("t", pd.DataFrame({"x": [2]}), "b")
    (tmp_path / "t" / "run_key=b" / "part.parquet").write_bytes(b"not parquet")
    with pytest.raises(InputError, match=r"run_key=b/part.parquet: corrupt Parquet file"):
        wh.read("t")


def test_missing_partition_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="has no data"):
        Warehouse(str(tmp_path)).read("t", "nope")


def test_catalog_views_and_query(tmp_path: Path) -> None:
    wh = Warehouse(str(tmp_path))
    wh.write("scores", pd.DataFrame({"run_key": ["a"], "final": [0.5]}), "a")
    assert refresh_catalog(wh) == ["scores"]
    assert refresh_catalog(wh) == ["scores"]  # idempotent
    wh.write("scores", pd.DataFrame({"run_key": ["b"], "final": [0.7]}), "b")
    columns, rows = query(wh, "SELECT run_key, final FROM scores ORDER BY run_key")
    assert columns == ["run_key", "final"] and rows == [("a", 0.5), ("b", 0.7)]
    with pytest.raises(InputError, match="query failed"):
        query(wh, "SELECT * FROM nope")


def test_reader_holding_the_catalog_never_blocks_queries(tmp_path: Path) -> None:
    wh = Warehouse(str(tmp_path))
    wh.write("t", pd.DataFrame({"x": [1]}), "a")
    refresh_catalog(wh)
    analyst = duckdb.connect(str(catalog_path(wh)), read_only=True)
    try:
        wh.write("t", pd.DataFrame({"x": [2]}), "b")  # writers never touch DuckDB
        assert sorted(query(wh, "SELECT x FROM t")[1]) == [(1,), (2,)]
    finally:
        analyst.close()


def test_table_contract_refuses_drift() -> None:
    from evalflow.storage.tables import TABLES, TableContractError, validate_frame

    good = pd.DataFrame([dict.fromkeys(TABLES["report"].columns, "x")])
    validate_frame("report", good)
    with pytest.raises(TableContractError, match="columns differ"):
        validate_frame("report", good.drop(columns=["report_path"]))
    with pytest.raises(TableContractError, match="has nulls"):
        validate_frame("report", good.assign(report_path=None))


def test_a_part_older_than_a_contract_column_reads_it_as_null(tmp_path: Path) -> None:
    # plugin_judge gained per-skill spend columns: a run evaluated before keeps its old part,
    # and reading it must give NULL spend (unmeasured), not a KeyError that stops ranking.
    import pyarrow as pa
    import pyarrow.parquet as pq

    warehouse = Warehouse(str(tmp_path))
    part = tmp_path / "plugin_judge" / "run_key=b.f.r1" / "part.parquet"
    part.parent.mkdir(parents=True)
    pq.write_table(pa.table({"run_key": ["b.f.r1"], "skill": ["s"]}), part)
    frame = warehouse.read("plugin_judge")
    assert frame["cost_usd"].isna().all() and frame["skill"].tolist() == ["s"]


def _judged(table: str, run_key: str, judge: str, value: float) -> pd.DataFrame:
    """A one-row frame of a judge-dependent table (every contract column set)."""
    from evalflow_tests.suite_tables import contract_frame

    row = {"run_key": run_key, "fingerprint": f"fp-{judge}", "judge_name": judge}
    if table == "run_manifest":
        row |= {"judge_id": judge, "benchmark": "b", "framework": "f", "run": "r1"}
    else:
        row |= {"final_lower": value, "final_upper": value}
    return contract_frame(table, [row])


def test_each_judge_of_a_run_has_its_own_part_and_rescoring_replaces_only_it(
    tmp_path: Path,
) -> None:
    wh = Warehouse(str(tmp_path))
    wh.write("run_manifest", _judged("run_manifest", "b.f.r1", "heuristic", 0), "b.f.r1")
    wh.write("run_manifest", _judged("run_manifest", "b.f.r1", "labels", 0), "b.f.r1")
    wh.write("t", pd.DataFrame({"run_key": ["b.f.r1"], "x": [1]}), "b.f.r1")  # no contract
    folder = tmp_path / "run_manifest" / "run_key=b.f.r1"
    assert sorted(p.name for p in folder.iterdir()) == ["heuristic.parquet", "labels.parquet"]
    assert wh.judges("run_manifest", "b.f.r1") == ["heuristic", "labels"]
    assert wh.read("run_manifest", "b.f.r1", "labels")["judge_id"].tolist() == ["labels"]
    assert wh.has("run_manifest", "b.f.r1", "labels")
    assert not wh.has("run_manifest", "b.f.r1", "anthropic")
    with pytest.raises(InputError, match="judged by anthropic"):
        wh.read("run_manifest", "b.f.r1", "anthropic")
    again = _judged("run_manifest", "b.f.r1", "labels", 0).assign(framework="g")
    wh.write("run_manifest", again, "b.f.r1")
    both = wh.read("run_manifest", "b.f.r1").set_index("judge_name")["framework"]
    assert both.to_dict() == {"heuristic": "f", "labels": "g"}
    with pytest.raises(ValueError, match="one part per judge"):
        wh.write("run_manifest", again, "b.f.r1", "heuristic")  # rows of another judge
    assert (tmp_path / wh.part_path("run_manifest", "b.f.r1", "labels")).is_file()


def test_an_old_single_part_run_reads_as_its_judges_and_moves_on_the_first_write(
    tmp_path: Path,
) -> None:
    """A warehouse written before one part per judge: `part.parquet` without judge_name."""
    import pyarrow.parquet as pq

    from evalflow.storage.warehouse import _arrow

    wh = Warehouse(str(tmp_path))
    for table in ("run_manifest", "final_score"):
        frame = _judged(table, "b.f.r1", "x", 0.5)
        if table == "run_manifest":
            frame["judge_id"] = "anthropic:claude-x"
        folder = tmp_path / table / "run_key=b.f.r1"
        folder.mkdir(parents=True)
        pq.write_table(_arrow(table, frame).drop_columns("judge_name"), folder / "part.parquet")
    old = wh.read("final_score", "b.f.r1")
    assert old["judge_name"].tolist() == ["anthropic"]  # the manifest part's judge
    assert wh.has("final_score", "b.f.r1", "anthropic")
    assert not wh.has("final_score", "b.f.r1", "heuristic")
    assert query(wh, "SELECT count(*) FROM final_score")[1] == [(1,)]
    # a second judge: the old result moves to its judge's name, beside the new one
    wh.write("final_score", _judged("final_score", "b.f.r1", "heuristic", 0.9), "b.f.r1")
    names = sorted(p.name for p in (tmp_path / "final_score" / "run_key=b.f.r1").iterdir())
    assert names == ["anthropic.parquet", "heuristic.parquet"]
    assert not (tmp_path / "run_manifest" / "run_key=b.f.r1" / "part.parquet").exists()
    assert wh.judges("run_manifest", "b.f.r1") == ["anthropic"]
    both = wh.read("final_score", "b.f.r1").set_index("judge_name")["final_lower"]
    assert both.to_dict() == {"anthropic": 0.5, "heuristic": 0.9}
    refresh_catalog(wh)
    sql = "SELECT judge_name, final_lower FROM final_score ORDER BY 1"
    assert query(wh, sql)[1] == [("anthropic", 0.5), ("heuristic", 0.9)]
    assert wh.migrate() == []  # nothing left to move
