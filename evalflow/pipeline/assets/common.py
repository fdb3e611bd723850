"""What every per-run stage needs: its partition's manifest, prepared, and shared metadata.

Metadata follows Dagster's conventions: `dagster/row_count` and `dagster/column_schema` (built
from the table contracts in `evalflow.storage.tables`) on every warehouse output, `kinds` for
the catalog's icons. Per-run outputs carry the run's fingerprint as their data version and
evalflow's version as their code version, which is how `evalflow.pipeline.assets.freshness` tells an
unchanged run from a stale one.
"""

import hashlib
import warnings
from functools import cache
from pathlib import Path
from types import NoneType
from typing import Any, get_args

import dagster as dg
import pandas as pd

from evalflow import __version__
from evalflow.io.evaluation import PreparedRun, prepare_run
from evalflow.io.inputs import Benchmark, load_benchmark, load_manifest
from evalflow.io.registry import manifest_for
from evalflow.pipeline.resources import EvalflowResource
from evalflow.reports import html, markdown
from evalflow.storage.arrow import arrow_type, duckdb_type
from evalflow.storage.tables import TABLES
from evalflow.storage.warehouse import JUDGE_COLUMN

# `Output(data_version=...)` is a Dagster beta parameter; it is how incremental re-evaluation
# knows a run is unchanged (docs/scaling.md, "Dagster preview and beta features"). Silenced
# because it is printed on every run.
warnings.filterwarnings("ignore", category=dg.BetaWarning, message=".*data_version.*")

IO = "warehouse_io"
GROUP = "evaluation"
# Every warehouse table is a Parquet part written by Python and a view in the DuckDB catalog.
KINDS = {"python", "parquet", "duckdb"}
# The fingerprint covers evalflow's version too; the code version makes it visible in Dagster.
CODE_VERSION = __version__
# Run tag of a run the manifest sensor requested: its manifest, registered when the run starts.
MANIFEST_TAG = "evalflow/manifest"


# The last run prepared in this process, by Dagster run and partition (see `prepare`).
_PREPARED: dict[tuple[str, str], PreparedRun] = {}


def prepare(context: dg.AssetExecutionContext, evalflow: EvalflowResource) -> PreparedRun:
    """The partition's run, prepared once per Dagster run in this process.

    Most stages of a run need it, and preparing syncs the mirror and resolves the commits
    with git each time (≈ 12 git processes). Keyed by the Dagster run, so a later run (a
    retry too) sees the repository as it is then."""
    key = (context.run.run_id, context.partition_key)
    prepared = _PREPARED.get(key)
    if prepared is None:
        warehouse = evalflow.get_warehouse()
        prepared = prepare_run(manifest_for(warehouse, context.partition_key), warehouse.workdir)
        _PREPARED.clear()
        _PREPARED[key] = prepared
    return prepared


def stamp(frame: pd.DataFrame, run_manifest: pd.DataFrame) -> pd.DataFrame:
    """Every row carries its run's run_key and fingerprint (DESIGN "Reproducibility"), and its
    benchmark and framework (what an analyst groups by)."""
    out = frame.copy()
    front = ["run_key", "fingerprint", "benchmark", "framework"]
    for name in front:
        out[name] = run_manifest[name].iloc[0]
    return out[front + [c for c in out.columns if c not in front]]


def benchmark(context: dg.AssetExecutionContext, evalflow: EvalflowResource) -> Benchmark:
    """The partition's PRD and frozen baseline, without touching its repository."""
    loaded = load_manifest(manifest_for(evalflow.get_warehouse(), context.partition_key))
    return load_benchmark(loaded.resolve(loaded.manifest.baseline))


@cache
def column_schema(table: str) -> dg.TableSchema:
    """The table contract's columns as Dagster's `dagster/column_schema`."""
    fields = TABLES[table].model.model_fields.items()
    return dg.TableSchema(
        columns=[
            dg.TableColumn(
                name,
                # The DuckDB type docs/tables.md shows (`STRUCT(…)[]` for evidence).
                type=duckdb_type(arrow_type(field.annotation)[0]),
                description=field.description,
                constraints=dg.TableColumnConstraints(
                    nullable=NoneType in get_args(field.annotation)
                ),
            )
            for name, field in fields
        ]
    )


def table_metadata(table: str, frame: pd.DataFrame) -> dict[str, Any]:
    return {"dagster/row_count": len(frame), "dagster/column_schema": column_schema(table)}


# The renderers' source digest: part of the report's data version, so a changed renderer makes
# an unchanged run's report (and nothing else) stale and the next materialize rewrites it.
RENDERER_VERSION = hashlib.sha256(
    b"".join(Path(module.__file__).read_bytes() for module in (markdown, html))  # type: ignore[arg-type]
).hexdigest()[:12]


def data_version(table: str, fingerprint: str) -> str:
    """A per-run output's data version: the run's fingerprint (the report's with the
    renderers' digest), which `freshness` compares to tell an unchanged run from a stale one."""
    return f"{fingerprint}+report.{RENDERER_VERSION}" if table == "report" else fingerprint


def run_output(
    table: str,
    frame: pd.DataFrame,
    run_manifest: pd.DataFrame,
    metadata: dict[str, Any] | None = None,
) -> dg.Output:
    """A per-run output, named after its table: its table metadata, and the run's fingerprint
    as data version (also for an empty table, which has no row to carry it).

    A judge-dependent table's rows also name the run's judge (`judge_name`, after run_key and
    fingerprint): the judge its part is stored under, beside other judges' parts.
    """
    if TABLES[table].per_judge and JUDGE_COLUMN not in frame.columns:
        frame = frame.copy()
        position = TABLES[table].columns.index(JUDGE_COLUMN)
        frame.insert(position, JUDGE_COLUMN, str(run_manifest[JUDGE_COLUMN].iloc[0]))
    return dg.Output(
        frame,
        output_name=table,
        data_version=dg.DataVersion(data_version(table, str(run_manifest["fingerprint"].iloc[0]))),
        metadata={**table_metadata(table, frame), **(metadata or {})},
    )
