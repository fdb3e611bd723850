"""Asset `rollup`: AC, story and final score tables (`ac_score`, `story_score`, `final_score`)."""

import dagster as dg
import pandas as pd

from evalflow.assets.common import GROUP, IO, benchmark, stamp
from evalflow.assets.partitions import evaluations
from evalflow.domain.gates import failed_by_run
from evalflow.domain.rollup import rollup as roll
from evalflow.domain.vote import agreement
from evalflow.evaluation import checks_frame, stories_frame
from evalflow.resources import EvalflowResource


@dg.multi_asset(
    name="rollup",
    partitions_def=evaluations,
    group_name=GROUP,
    outs={
        "ac_score": dg.AssetOut(io_manager_key=IO, description="I, T and AC_score per AC"),
        "story_score": dg.AssetOut(io_manager_key=IO, description="Story_score per story"),
        "final_score": dg.AssetOut(
            io_manager_key=IO, description="Final, band, bounds, Adjusted Final, agreement"
        ),
    },
)
def rollup(
    context: dg.AssetExecutionContext,
    evalflow: EvalflowResource,
    run_manifest: pd.DataFrame,
    majority_vote: pd.DataFrame,
    gates: pd.DataFrame,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """SPEC roll-up: AC = 0.6·I + 0.4·T, story mean, Final = Σ w·story / Σw, rounded once;
    Adjusted Final = Final × 0.5 iff a gate is a confirmed ✗."""
    bench = benchmark(context, evalflow)
    tables = roll(
        majority_vote,
        checks_frame(bench.baseline),
        stories_frame(bench.prd),
        failed_by_run(gates),
    )
    final = tables.final.merge(agreement(majority_vote), on="run_key", how="left")
    final["baseline_sha256"] = bench.baseline_sha256
    final["comparability_key"] = run_manifest["comparability_key"].iloc[0]
    row = final.iloc[0]
    # An undetermined Final is NULL: the metadata says so instead of showing a number.
    context.add_output_metadata(
        {"final": None if pd.isna(row["final"]) else float(row["final"]),
         "band": None if pd.isna(row["band"]) else str(row["band"]),
         "complete": bool(row["complete"]), "n_unscored": int(row["n_unscored"])},
        output_name="final_score",
    )  # fmt: skip
    return (
        stamp(tables.ac, run_manifest),
        stamp(tables.story, run_manifest),
        stamp(final, run_manifest),
    )
