"""Benchmark the read side (`evalflow query`) as runs accumulate: 12, 200 and 1,000 runs.

A synthetic warehouse holds 20 per-run tables with one small part per run each (what a
materialised run leaves: 1,000 runs are 20,000 parts). Timed per size, medians of wall and
CPU seconds of this process:

1. `query("SELECT 1")`: a statement that reads no table;
2. `query(<a leaderboard read>)`: one table (`final_score`), every run's part.

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
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalflow.storage import catalog, compaction  # noqa: E402
from evalflow.storage.warehouse import Warehouse  # noqa: E402

N_TABLES = 20
LEADERBOARD_SQL = "SELECT run_key, final FROM final_score ORDER BY final DESC, run_key"
TARGET_S = 0.5


def build(root: Path, n_runs: int) -> Warehouse:
    """`final_score` plus 19 other per-run tables, one part per run each."""
    names = ["final_score", *(f"table_{i:02d}" for i in range(N_TABLES - 1))]
    for r in range(n_runs):
        key = f"bench.fw{r % 20:02d}.r{r:04d}"
        part = pa.table({"run_key": [key], "final": [(r * 37 % 100) / 100], "n": [r]})
        for name in names:
            folder = root / name / f"run_key={key}"
            folder.mkdir(parents=True)
            pq.write_table(part, folder / "part.parquet")
    return Warehouse(str(root))


def old_query(warehouse: Warehouse, sql: str) -> list[tuple]:
    """The previous `connect`: every part of every table listed, every table bound."""
    con = duckdb.connect(config=catalog._NO_EXTENSIONS)
    try:
        reads = catalog._reads(sql)
        for table, parts in warehouse.table_parts().items():
            catalog._load(con, table, parts, copy=reads is None or table in reads)
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
            print(f"{n_runs} runs × {N_TABLES} tables = {n_runs * N_TABLES:,} parts")
            queries = (("SELECT 1", "SELECT 1"), ("leaderboard read", LEADERBOARD_SQL))
            parts = {
                sql: timed(lambda s=sql, w=wh: catalog.query(w, s)[1], repeats)
                for _, sql in queries
            }
            start = time.process_time()
            compaction.compact(wh)
            print(f"  compaction of {N_TABLES} tables: {time.process_time() - start:.3f} s CPU")
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
