"""Benchmark the Dagster pipeline and the DuckDB read side.

1. `evalflow demo` wall time split into Dagster overhead and domain work: the demo's three
   runs through `orchestrate.materialize` (what `evalflow demo` runs after start-up), against
   the same steps called directly (prepare, snapshot, 3 scoring runs, vote, roll-up, gates,
   side metrics, PluginEval). Overhead = pipeline − domain. The CLI's process start-up
   (imports) is timed separately with `python -c "import evalflow.pipeline.definitions"`.
2. Per-asset overhead: a chain of no-op assets executed in-process and with the multiprocess
   executor, per step.
3. N partitions of a small synthetic benchmark through `orchestrate.materialize` with 2
   workers (default N = 100; `--quick` 10): wall time and runs per minute.
4. A per-framework aggregate over 1M synthetic verdict rows in DuckDB (target < 0.5 s), with
   the ratio against pandas reading the same Parquet parts and grouping.

Medians over repeats; the machine is shared. Run from the repository root:
`.venv/bin/python benchmarks/bench_pipeline.py [--quick | --smoke]`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dagster as dg
import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalflow.domain.rollup import rollup  # noqa: E402
from evalflow.domain.vote import majority_vote  # noqa: E402
from evalflow.gates import run_gates  # noqa: E402
from evalflow.io.evaluation import (  # noqa: E402
    K_RUNS,
    checks_frame,
    open_snapshot,
    prepare_run,
    score_run,
    stories_frame,
    verdicts_frame,
)
from evalflow.io.side_metrics import side_metrics_for_run  # noqa: E402
from evalflow.judges.heuristic import HeuristicJudge  # noqa: E402
from evalflow.pipeline import orchestrate  # noqa: E402
from evalflow.pipeline.assets.plugins import plugin_tables  # noqa: E402
from evalflow.repo.diff_surface import unified_diff  # noqa: E402
from evalflow.storage.catalog import query, refresh_catalog  # noqa: E402
from evalflow.storage.warehouse import Warehouse  # noqa: E402
from evalflow_tests.mini_benchmark import make_mini  # noqa: E402

DEMO_RUNS = sorted((ROOT / "data" / "benchmarks" / "trialist" / "runs").glob("*.yaml"))
CHAIN = 8


def median(values: list[float]) -> float:
    return statistics.median(values)


def domain_only(warehouse: Path, manifests: list[Path]) -> float:
    """The work the assets call, without Dagster: scoring, vote, roll-up, gates, side
    metrics and PluginEval for each demo run."""
    start = time.perf_counter()
    for manifest in manifests:
        prepared = prepare_run(manifest, warehouse)
        snapshot = open_snapshot(prepared)
        judge = HeuristicJudge()
        verdicts = pd.concat(
            [
                verdicts_frame(prepared.run_key, score_run(prepared, judge, run, snapshot))
                for run in range(1, K_RUNS + 1)
            ]
        )
        votes = majority_vote(verdicts, K_RUNS)
        bench = prepared.benchmark
        rollup(votes, checks_frame(bench.baseline), stories_frame(bench.prd))
        run_gates(
            prepared.repo,
            prepared.head_sha,
            prepared.base_sha,
            prepared.manifest.gates,
            prepared.diff_paths,
        )
        side_metrics_for_run(
            prd=bench.prd,
            baseline=bench.baseline,
            snapshot=snapshot,
            unified_diff=unified_diff(prepared.repo, prepared.base_sha, prepared.head_sha),
            spec_dir=prepared.manifest.spec_dir,
            benchmark_dir=bench.baseline_path.parent,
            framework=prepared.manifest.framework,
            votes=votes,
            verdicts=verdicts,
        )
        plugin_tables(prepared.resolve(prepared.manifest.skills_dir))
    return time.perf_counter() - start


def demo_split(repeats: int, manifests: list[Path]) -> None:
    pipeline, domain = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            root = str(Path(tmp) / "wh")
            keys = orchestrate.register(root, manifests)
            start = time.perf_counter()
            orchestrate.materialize(root, keys, workers=1)
            pipeline.append(time.perf_counter() - start)
            domain.append(domain_only(Path(root), manifests))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    imports = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", "import evalflow.pipeline.definitions"], env=env, check=True
        )
        imports.append(time.perf_counter() - start)
    p, d = median(pipeline), median(domain)
    print(f"1. {len(manifests)} demo runs, sequential, in-process executor")
    print(f"   pipeline (materialise + rank + catalog): {p:6.2f} s")
    print(f"   domain work alone:                       {d:6.2f} s")
    print(f"   Dagster + storage overhead:              {p - d:6.2f} s ({(p - d) / p:.0%})")
    print(f"   process start-up (imports):              {median(imports):6.2f} s")


@dg.asset
def step_0() -> int:
    return 0


def _chain() -> list[dg.AssetsDefinition]:
    assets = [step_0]
    for i in range(1, CHAIN):

        @dg.asset(name=f"step_{i}", ins={"prev": dg.AssetIn(f"step_{i - 1}")})
        def step(prev: int) -> int:
            return prev + 1

        assets.append(step)
    return assets


def chain_job() -> dg.JobDefinition:
    defs = dg.Definitions(
        assets=_chain(),
        jobs=[dg.define_asset_job("chain", executor_def=dg.multi_or_in_process_executor)],
    )
    return defs.resolve_job_def("chain")


def per_asset_overhead(repeats: int) -> None:
    results = {}
    for executor in ("in_process", "multiprocess"):
        times = []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory() as tmp:
                instance = dg.DagsterInstance.local_temp(tempdir=tmp)
                start = time.perf_counter()
                with dg.execute_job(
                    dg.reconstructable(chain_job),
                    instance=instance,
                    run_config={
                        "execution": {"config": {executor: {}}},
                        "loggers": orchestrate.QUIET_LOGS,
                    },
                ) as result:
                    assert result.success
                times.append(time.perf_counter() - start)
        results[executor] = median(times) / CHAIN
    print(f"2. per-asset overhead ({CHAIN} no-op assets, persistent SQLite instance)")
    for executor, seconds in results.items():
        print(f"   {executor:<12} {seconds * 1000:7.0f} ms per asset")
    ratio = results["multiprocess"] / results["in_process"]
    print(f"   ratio multiprocess / in-process: {ratio:.1f}×")


def many_partitions(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bench = make_mini(Path(tmp))
        template = (bench / "runs" / "good.yaml").read_text()
        for i in range(n):
            text = template.replace("framework: good", f"framework: fw{i:03d}")
            (bench / "runs" / f"fw{i:03d}.yaml").write_text(text)
        (bench / "runs" / "good.yaml").unlink()
        (bench / "runs" / "partial.yaml").unlink()
        root = str(Path(tmp) / "wh")
        keys = orchestrate.register(root, sorted((bench / "runs").glob("fw*.yaml")))
        start = time.perf_counter()
        outcomes = orchestrate.materialize(root, keys, workers=2)
        seconds = time.perf_counter() - start
    ok = sum(o.success for o in outcomes[:-1])
    print(f"3. {n} partitions (mini benchmark, 2 workers, in-process executor per run)")
    per_run, per_minute = seconds / n, n / seconds * 60
    print(f"   wall {seconds:6.1f} s · {per_run:5.2f} s per run · {per_minute:5.1f} runs/min")
    print(f"   succeeded: {ok}/{n}")


def duckdb_aggregate(rows: int, repeats: int) -> None:
    rng = np.random.default_rng(7)
    per_part = 1000
    parts = rows // per_part
    with tempfile.TemporaryDirectory() as tmp:
        wh = Warehouse(tmp)
        frameworks = [f"fw{i:02d}" for i in range(20)]
        for p in range(parts):
            run_key = f"bench.{frameworks[p % 20]}.r{p:04d}"
            wh.write(
                "verdict_sample",  # three columns only: a table without a contract
                pd.DataFrame(
                    {
                        "run_key": run_key,
                        "check_id": [f"C{i:03d}" for i in range(per_part)],
                        "status": rng.choice(
                            ["MET", "UNMET", "UNSCORED"], per_part, p=[0.7, 0.27, 0.03]
                        ),
                    }
                ),
                run_key,
            )
        refresh_catalog(wh)
        sql = (
            "SELECT split_part(run_key, '.', 2) AS framework, count(*) AS verdicts, "
            "avg(CASE WHEN status = 'MET' THEN 1.0 ELSE 0.0 END) AS met_rate "
            "FROM verdict_sample GROUP BY 1 ORDER BY 1"
        )
        duck = []
        for _ in range(repeats):
            start = time.perf_counter()
            _, result = query(wh, sql)
            duck.append(time.perf_counter() - start)
        panda = []
        for _ in range(max(1, repeats // 2)):
            start = time.perf_counter()
            frame = wh.read("verdict_sample")
            frame["framework"] = frame["run_key"].str.split(".").str[1]
            expected = frame.groupby("framework")["status"].agg(lambda s: (s == "MET").mean())
            panda.append(time.perf_counter() - start)
        assert len(result) == len(expected) == 20
    d, p = median(duck), median(panda)
    print(f"4. per-framework aggregate over {rows:,} verdict rows in {parts} Parquet parts")
    print(f"   DuckDB view:            {d * 1000:7.0f} ms  (target < 500 ms)")
    print(f"   pandas read + groupby:  {p * 1000:7.0f} ms  (ratio {p / d:.1f}×)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and partitions")
    parser.add_argument("--smoke", action="store_true", help="1 repeat, 2 partitions (CI)")
    args = parser.parse_args()
    repeats = 1 if args.smoke else 2 if args.quick else 5
    demo_split(repeats, DEMO_RUNS[:1] if args.smoke else DEMO_RUNS)
    per_asset_overhead(repeats)
    many_partitions(2 if args.smoke else 10 if args.quick else 100)
    duckdb_aggregate(100_000 if args.smoke else 1_000_000, repeats)
    shutil.rmtree(ROOT / "benchmarks" / "__pycache__", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
