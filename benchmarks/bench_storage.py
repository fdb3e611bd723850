"""Benchmark the typed warehouse write: a contract-cast part against an inferred one.

A `scoring_run_1` part of N verdict rows (default 200,000; `--quick` 20,000) is written
through `Warehouse.write` (the contract's Arrow schema, lossless-only casts, null checks) and,
as the baseline computed in the same run, as the same frame with `pyarrow.Table.from_pandas`
type inference and `pyarrow.parquet.write_table` (what the warehouse did before typed
Parquet). Medians over repeats; the machine is shared. Run from the repository root:
`.venv/bin/python benchmarks/bench_storage.py [--quick]`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalflow.storage.tables import columns  # noqa: E402
from evalflow.storage.warehouse import Warehouse  # noqa: E402


def verdicts(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    frame = pd.DataFrame(
        {
            "run_key": "bench.fw.r1",
            "fingerprint": "f" * 64,
            "benchmark": "bench",
            "framework": "fw",
            "judge_name": "heuristic",
            "check_id": [f"C{i:06d}" for i in range(rows)],
            "run": 1,
            "status": rng.choice(["MET", "UNMET", "UNSCORED"], rows),
            "judge_id": "heuristic",
            "evidence": [[] for _ in range(rows)],
            "evidence_refs": "app/core.py:2",
            "searches": [[] for _ in range(rows)],
            "n_searches": rng.integers(0, 5, rows),
            "rationale": "probe matched",
            "flags": [[] for _ in range(rows)],
            "api_calls": 0,
            "input_tokens": rng.integers(0, 5000, rows),
            "output_tokens": rng.integers(0, 500, rows),
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "cost_usd": rng.random(rows),
            "spent_usd": 0.0,
            "usage": [[] for _ in range(rows)],
            "read_blobs": [[] for _ in range(rows)],
        }
    )
    return frame[columns("scoring_run_1")]


def timed(action, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 rows, 3 repeats")
    parser.add_argument("--smoke", action="store_true", help="2,000 rows, 1 repeat (CI)")
    args = parser.parse_args()
    rows, repeats = (2_000, 1) if args.smoke else (20_000, 3) if args.quick else (200_000, 5)
    frame = verdicts(rows)
    with tempfile.TemporaryDirectory() as tmp:
        wh = Warehouse(tmp)
        typed = timed(lambda: wh.write("scoring_run_1", frame, "bench.fw.r1"), repeats)
        baseline = timed(
            lambda: pq.write_table(
                pa.Table.from_pandas(frame, preserve_index=False), f"{tmp}/inferred.parquet"
            ),
            repeats,
        )
    print(f"write one scoring_run_1 part of {rows:,} rows (median of {repeats})")
    print(f"   inferred types (baseline): {baseline * 1000:7.0f} ms")
    print(f"   contract-typed write:      {typed * 1000:7.0f} ms  (ratio {typed / baseline:.2f}×)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
