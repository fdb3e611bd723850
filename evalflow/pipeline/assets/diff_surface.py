"""Stage `diff_surface`: the files this run changed, the first scope of every search."""

import dagster as dg
import pandas as pd

from evalflow.io.evaluation import diff_frame
from evalflow.pipeline.assets.common import prepare, run_output, stamp
from evalflow.pipeline.resources import EvalflowResource


def diff_surface(
    context: dg.AssetExecutionContext, evalflow: EvalflowResource, run_manifest: pd.DataFrame
) -> dg.Output:
    """`git diff --name-status base..head` with per-file status and line counts."""
    frame = stamp(diff_frame(prepare(context, evalflow)), run_manifest)
    return run_output("diff_surface", frame, run_manifest, {"files": len(frame)})
