"""Benchmark the read side (`evalflow query`) as runs accumulate: 12, 200 and 1,000 runs.

A synthetic warehouse holds 20 per-run tables with one small part per run each (what a
materialised run leaves: 1,000 runs are 20,000 parts), and the append-only
`evaluation_history` with a part per evaluation, 3 per run. Timed per size, medians of wall
and CPU seconds of this process:

1. `query("SELECT 1")`: a statement that reads no table;
2. `query(<a leaderboard read>)`: one table (`final_score`), every run's part;
3. `query(<a history read>)`: every evaluation of every run (`evaluation_history`);
4. `query(<the drift view>)`: `final_drift`, which pairs each evaluation with the one before.

Baselines, in the same run: the same `query` over the parts before the warehouse is
compacted (`evalflow.storage.compaction`, issue 28 item 3: the table the SQL reads is one
file plus the parts written since), and how `connect` bound the tables before issue 33 —
every table listed part by part and bound as a view over all of its parts, even those the
SQL never reads. Target < 0.5 s at 1,000 runs. Run from the repository root:
`.venv/bin/python benchmarks/bench_reads.py [--smoke]`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalflow.storage import catalog, compaction  # noqa: E402
from evalflow.storage.history import HISTORY_TABLE  # noqa: E402
from evalflow.storage.tables import TABLES  # noqa: E402
from evalflow.storage.warehouse import Warehouse  # noqa: E402

N_TABLES = 20
EVALUATIONS = 3
LEADERBOARD_SQL = "SELECT run_key, final FROM final_score ORDER BY final DESC, run_key"
HISTORY_SQL = (
    f"SELECT run_key, count(*) AS evaluations, max(final) AS best FROM {HISTORY_TABLE} "
    "GROUP BY run_key ORDER BY run_key"
)
DRIFT_SQL = "SELECT run_key, to_evaluation, cause FROM final_drift ORDER BY ALL"
TARGET_S = 0.5


def history_row(key: str, r: int, n: int) -> pa.Table:
    """One evaluation of run `key` in the history table's contract; the Final moves on
    every other evaluation, so `final_drift` has rows."""
    fields = TABLES[HISTORY_TABLE].model.model_fields
    values: dict[str, object] = {name: "x" for name in fields}
    values |= {
        "run_key": key,
        "evaluation_number": n,
        "evaluated_at": datetime(2026, 12, 1, tzinfo=UTC) + timedelta(hours=n),
        "final": (r * 37 % 100 + n % 2) / 100,
        "adjusted_final": None,
        "complete": True,
        "cost_usd": None,
    }
    return pa.Table.from_pylist([values])


def build(root: Path, n_runs: int) -> Warehouse:
    """`final_score` plus 19 other per-run tables, one part per run each, and the history."""
    names = ["final_score", *(f"table_{i:02d}" for i in range(N_TABLES - 1))]
    for r in range(n_runs):
        key = f"bench.fw{r % 20:02d}.r{r:04d}"
        part = pa.table({"run_key": [key], "final": [(r * 37 % 100) / 100], "n": [r]})
        for name in names:
            folder = root / name / f"run_key={key}"
            folder.mkdir(parents=True)
            pq.write_table(part, folder / "part.parquet")
        folder = root / HISTORY_TABLE / f"run_key={key}"
        folder.mkdir(parents=True)
        for n in range(1, EVALUATIONS + 1):
            pq.write_table(history_row(key, r, n), folder / f"{n:06d}-eval.parquet")
    return Warehouse(str(root))


def old_query(warehouse: Warehouse, sql: str) -> list[tuple]:
    """The previous `connect`: every part of every table listed, every table bound."""
    con = duckdb.connect(config=catalog._NO_EXTENSIONS)
    try:
        reads = catalog._reads(sql)
        if reads is not None and catalog.DRIFT_VIEW in reads:
            reads.add(HISTORY_TABLE)
        tables = warehouse.table_parts()
        for table, parts in tables.items():
            catalog._load(con, table, parts, copy=reads is None or table in reads)
        catalog._derived_views(con, list(tables))
        for statement in catalog._LOCKDOWN:
            con.execute(statement)
        return con.execute(sql).fetchall()
    finally:
        con.close()


def timed(fn: Callable[[], object], repeats: int) -> tuple[float, float, object]:
    """(median wall s, median CPU s of this process, last result)."""
    walls, cpus, result = [], [], None
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="12 runs, 1 repeat (CI)")
    args = parser.parse_args()
    sizes, repeats = ((12,), 1) if args.smoke else ((12, 200, 1000), 5)
    ok = True
    for n_runs in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            wh = build(Path(tmp) / "wh", n_runs)
            parts_n = n_runs * (N_TABLES + EVALUATIONS)
            print(
                f"{n_runs} runs × {N_TABLES} tables + {EVALUATIONS} evaluations each in "
                f"{HISTORY_TABLE} = {parts_n:,} parts"
            )
            queries = (
                ("SELECT 1", "SELECT 1"),
                ("leaderboard read", LEADERBOARD_SQL),
                ("history read", HISTORY_SQL),
                ("drift view", DRIFT_SQL),
            )
            parts = {
                sql: timed(lambda s=sql, w=wh: catalog.query(w, s)[1], repeats)
                for _, sql in queries
            }
            start = time.process_time()
            compaction.compact(wh)
            print(f"  compaction of {N_TABLES + 1} tables: {time.process_time() - start:.3f} s CPU")
            for label, sql in queries:
                new_s, new_cpu, new = timed(lambda s=sql, w=wh: catalog.query(w, s)[1], repeats)
                part_s, part_cpu, from_parts = parts[sql]
                old_s, old_cpu, old = timed(lambda s=sql, w=wh: old_query(w, s), repeats)
                same = new == from_parts == old
                ok &= same
                verdict = "" if n_runs < 1000 else (" met" if new_s < TARGET_S else " MISSED")
                print(
                    f"  {label:17} compacted {new_s:6.3f} s wall {new_cpu:6.3f} s CPU; "
                    f"parts: {part_s:6.3f} s wall {part_cpu:6.3f} s CPU "
                    f"({part_cpu / new_cpu:4.1f}×); before issue 33: {old_s:6.3f} s wall "
                    f"{old_cpu:6.3f} s CPU ({old_cpu / new_cpu:4.1f}×); same rows: {same}{verdict}"
                )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
