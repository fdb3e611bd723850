"""A warehouse written before the typed columns: read by every command, rewritten by migrate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalflow.cli import main
from evalflow.storage.catalog import query
from evalflow.storage.migration import current
from evalflow.storage.tables import TABLES
from evalflow.storage.warehouse import COMPACT_DIR, Warehouse

KEY = "trialist.bmad.r1"
VERDICTS = "scoring_run_1"


TYPED = {
    "evidence", "searches", "usage", "read_blobs", "flags", "isolation_missing", "ran_at",
    "scores", "anti_patterns", "confidence_basis", "check_ids", "failing_p0_acs", "categories",
    "keywords",
}  # fmt: skip


def _old_text(name: str, values: list) -> list:
    """A typed column's values as the text the previous layout stored."""

    def evidence(items: list[dict]) -> str:
        # A cited range had no `kind`; no field was written as null.
        kept = [
            {k: v for k, v in item.items() if v is not None and (k, v) != ("kind", "lines")}
            for item in items
        ]
        return json.dumps(kept)

    encode = {
        "evidence": evidence,
        "searches": json.dumps,
        "usage": json.dumps,
        "read_blobs": lambda items: json.dumps({i["path"]: i["blob"] for i in items}),
        "flags": ",".join,
        "isolation_missing": ", ".join,
        "ran_at": lambda moment: moment.isoformat(),
        "scores": lambda items: json.dumps({i["name"]: i["score"] for i in items}, sort_keys=True),
        "anti_patterns": ",".join,
        "confidence_basis": ", ".join,
        "check_ids": ",".join,
        "failing_p0_acs": ",".join,
        "categories": ",".join,
        "keywords": ",".join,
    }[name]
    return [None if v is None else encode(v) for v in values]


def old_layout(table: str, part: pa.Table) -> pa.Table:
    """`part` as the previous evalflow wrote it: no benchmark/framework in a per-run table
    (but run_manifest), no judge_name in evaluation_history,
    JSON text for lists and structs, comma-separated flags, ISO text for `ran_at`."""
    columns: dict[str, pa.Array] = {}
    for name in part.column_names:
        if name in ("benchmark", "framework") and TABLES[table].per_run and table != "run_manifest":
            continue
        if (table, name) == ("evaluation_history", "judge_name"):
            continue
        column = part.column(name)
        if name in TYPED and not pa.types.is_string(column.type):
            column = pa.array(_old_text(name, column.to_pylist()), pa.string())
        columns[name] = column
    return pa.table(columns)


@pytest.fixture
def old_warehouse(scored_demo_run: Path, tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A copy of the scored demo run with every part in the previous layout; returns it and
    the current parts' bytes by relative path."""
    root = tmp_path / "wh"
    shutil.copytree(scored_demo_run, root, ignore=shutil.ignore_patterns(COMPACT_DIR))
    original = {}
    for path in sorted(root.glob("*/*/*.parquet")):
        table = path.relative_to(root).parts[0]
        original[str(path.relative_to(root))] = path.read_bytes()
        pq.write_table(old_layout(table, pq.read_table(path)), path)
    return root, original


def test_the_typed_columns_unnest_in_duckdb(scored_demo_run: Path) -> None:
    wh = Warehouse(str(scored_demo_run))
    folder = scored_demo_run / VERDICTS
    with duckdb.connect() as con:
        rows = con.execute(
            "SELECT check_id, e.kind, e.path, e.start_line FROM "
            f"read_parquet('{folder}/*/*.parquet'), unnest(evidence) AS t(e) "
            "WHERE e.kind = 'lines' ORDER BY ALL LIMIT 1"
        ).fetchall()
        assert rows and rows[0][2] and rows[0][3] >= 1
        searches = con.execute(
            f"SELECT count(*), sum(s.hits) >= 0 FROM read_parquet('{folder}/*/*.parquet'), "
            "unnest(searches) AS t(s)"
        ).fetchone()
        assert searches[0] > 0 and searches[1]
        flags = con.execute(
            f"SELECT list_contains(flags, 'x'), typeof(flags) FROM "
            f"read_parquet('{folder}/*/*.parquet') LIMIT 1"
        ).fetchone()
        assert flags == (False, "VARCHAR[]")
    _, rows = query(wh, "SELECT typeof(ran_at), typeof(isolation_missing) FROM gates LIMIT 1")
    assert rows == [("TIMESTAMP WITH TIME ZONE", "VARCHAR[]")]


# Columns once JSON or comma-separated text, now lists (of structs): DuckDB's type of each.
LISTS = {
    ("static_analysis", "anti_patterns"): "VARCHAR[]",
    ("plugin_judge", "scores"): 'STRUCT("name" VARCHAR, score DOUBLE)[]',
    ("plugin_composite", "confidence_basis"): "VARCHAR[]",
    ("plugin_composite", "anti_patterns"): "VARCHAR[]",
    ("test_tier", "check_ids"): "VARCHAR[]",
    ("distribution", "failing_p0_acs"): "VARCHAR[]",
    ("elicitation_addition", "categories"): "VARCHAR[]",
    ("elicitation_addition", "keywords"): "VARCHAR[]",
    ("ledger_entry", "scores"): 'STRUCT("name" VARCHAR, score DOUBLE)[]',
}


def test_list_columns_are_lists_in_the_files(scored_demo_run: Path) -> None:
    """Each part as written, read by DuckDB itself (no evalflow upgrade in between)."""
    found = {}
    with duckdb.connect() as con:
        for table, column in LISTS:
            glob = f"{scored_demo_run / table}/[!_]*/*.parquet"
            described = con.execute(f"DESCRIBE SELECT {column} FROM read_parquet('{glob}')")
            found[table, column] = described.fetchone()[1]
        scores = con.execute(
            "SELECT s.name, s.score FROM read_parquet("
            f"'{scored_demo_run / 'ledger_entry'}/*/*.parquet'), unnest(scores) AS t(s) "
            "WHERE entry_key LIKE 'framework_run:%' AND s.name = 'final'"
        ).fetchall()
    assert found == LISTS
    assert scores and all(isinstance(score, float) for _, score in scores)


def test_an_old_part_reads_as_the_current_contract(
    scored_demo_run: Path, old_warehouse: tuple[Path, dict[str, bytes]]
) -> None:
    root, _ = old_warehouse
    new, old = Warehouse(str(scored_demo_run)), Warehouse(str(root))
    for table in (VERDICTS, "gates", "ac_score", "evaluation_history", "run_registry"):
        assert not current(table, pq.read_schema(old.parts(table)[0])), table
        assert old.read_arrow(table).to_pylist() == new.read_arrow(table).to_pylist(), table
        assert list(old.read(table).columns) == list(new.read(table).columns), table
    # `evalflow query` upgrades them as it copies them in: unnest works on the old parts.
    sql = f"SELECT count(*) FROM {VERDICTS}, unnest(evidence) AS t(e) WHERE e.kind = 'lines'"
    assert query(old, sql)[1] == query(new, sql)[1]
    assert query(old, "SELECT DISTINCT benchmark, framework FROM gates")[1] == [
        ("trialist", "bmad")
    ]


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


def test_commands_read_an_old_warehouse_and_migrate_rewrites_it(
    old_warehouse: tuple[Path, dict[str, bytes]], capsys
) -> None:
    root, original = old_warehouse
    wh = ["--warehouse", str(root)]
    code, out, err = _cli(capsys, "leaderboard", "--json", *wh)
    assert code == 0, err
    assert [r["run_key"] for r in json.loads(out)] == [KEY]
    code, out, err = _cli(capsys, "history", KEY, "--json", *wh)
    assert code == 0, err
    code, out, err = _cli(capsys, "query", "SELECT count(*) AS n FROM gates", "--json", *wh)
    assert code == 0 and json.loads(out)[0]["n"] > 0, err
    # The catalog file reads the history parts unmigrated: final_drift names their judge.
    code, out, err = _cli(capsys, "catalog", *wh)
    assert code == 0, err
    with duckdb.connect(str(root / "evalflow.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM final_drift").fetchone() == (0,)
        assert "judge_name" not in [
            r[0] for r in con.execute("DESCRIBE evaluation_history").fetchall()
        ]
    # A SQL client reading the files directly sees the old text until migrate rewrites them.
    code, out, err = _cli(capsys, "migrate", *wh)
    assert code == 0, err
    assert out.startswith("rewrote ") and f"{VERDICTS} (1)" in out
    migrated = {str(p.relative_to(root)): p.read_bytes() for p in root.glob("*/*/*.parquet")}
    assert migrated == original  # byte-identical to what the current evalflow writes
    with duckdb.connect(str(root / "evalflow.duckdb"), read_only=True) as con:
        assert con.execute(f"SELECT typeof(flags) FROM {VERDICTS} LIMIT 1").fetchone() == (
            "VARCHAR[]",
        )
        assert con.execute("SELECT DISTINCT judge_name FROM evaluation_history").fetchall() == [
            ("heuristic",)
        ]
    code, out, _ = _cli(capsys, "migrate", *wh)
    assert code == 0 and out.startswith("every part is in the current table types")
