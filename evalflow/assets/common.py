"""What every per-run asset needs: its partition's manifest, prepared, and shared metadata."""

import dagster as dg
import pandas as pd

from evalflow.evaluation import PreparedRun, prepare_run
from evalflow.inputs import Benchmark, load_benchmark, load_manifest
from evalflow.registry import manifest_for
from evalflow.resources import EvalflowResource

IO = "warehouse_io"
GROUP = "evaluation"


def prepare(context: dg.AssetExecutionContext, evalflow: EvalflowResource) -> PreparedRun:
    warehouse = evalflow.get_warehouse()
    return prepare_run(manifest_for(warehouse, context.partition_key), warehouse.workdir)


def stamp(frame: pd.DataFrame, run_manifest: pd.DataFrame) -> pd.DataFrame:
    """Every row carries its run's run_key and fingerprint (DESIGN "Reproducibility")."""
    out = frame.copy()
    out["run_key"] = run_manifest["run_key"].iloc[0]
    out["fingerprint"] = run_manifest["fingerprint"].iloc[0]
    front = ["run_key", "fingerprint"]
    return out[front + [c for c in out.columns if c not in front]]


def benchmark(context: dg.AssetExecutionContext, evalflow: EvalflowResource) -> Benchmark:
    """The partition's PRD and frozen baseline, without touching its repository."""
    loaded = load_manifest(manifest_for(evalflow.get_warehouse(), context.partition_key))
    return load_benchmark(loaded.resolve(loaded.manifest.baseline))
