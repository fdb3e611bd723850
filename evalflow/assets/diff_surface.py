"""Asset `diff_surface`: the files this run changed, the first scope of every search."""

import dagster as dg
import pandas as pd

from evalflow.assets.common import CODE_VERSION, GROUP, IO, KINDS, prepare, run_output, stamp
from evalflow.assets.partitions import evaluations
from evalflow.evaluation import diff_frame
from evalflow.resources import EvalflowResource


@dg.asset(
    partitions_def=evaluations,
    io_manager_key=IO,
    group_name=GROUP,
    code_version=CODE_VERSION,
    kinds=KINDS,
)
def diff_surface(
    context: dg.AssetExecutionContext, evalflow: EvalflowResource, run_manifest: pd.DataFrame
) -> dg.Output:
    """`git diff --name-status base..head` with per-file status and line counts."""
    frame = stamp(diff_frame(prepare(context, evalflow)), run_manifest)
    return run_output("diff_surface", frame, run_manifest, {"files": len(frame)})
