"""Asset `gates`: build, lint, unit and e2e gates, each run in a throw-away sandboxed clone.

A confirmed ✗ (status `fail`) makes the roll-up report Adjusted Final = Final × 0.5;
`not-run` (always with its probe) and `pre-existing` never adjust. Durations and output
tails are observations of one execution: unlike scores, they differ between runs.
"""

import dagster as dg
import pandas as pd

from evalflow.assets.common import GROUP, IO, benchmark, prepare, stamp
from evalflow.assets.partitions import evaluations
from evalflow.domain.gates import gates_frame
from evalflow.gates import run_gates
from evalflow.resources import EvalflowResource


@dg.asset(partitions_def=evaluations, io_manager_key=IO, group_name=GROUP)
def gates(
    context: dg.AssetExecutionContext,
    evalflow: EvalflowResource,
    run_manifest: pd.DataFrame,
    diff_surface: pd.DataFrame,
) -> pd.DataFrame:
    """The manifest's exact gate commands (the benchmark's fixed build command first)."""
    prepared = prepare(context, evalflow)
    results = run_gates(
        prepared.repo,
        prepared.head_sha,
        prepared.base_sha,
        prepared.manifest.gates,
        diff_surface.loc[diff_surface["status"] != "deleted", "path"].tolist(),
        timeout_s=evalflow.gate_timeout_s,
        build_command=benchmark(context, evalflow).baseline.build_command,
    )
    if prepared.worktree:
        note = "gates ran on the HEAD commit: uncommitted working-tree changes are not gated"
        results = [r.model_copy(update={"notes": (*r.notes, note)}) for r in results]
    frame = stamp(gates_frame(prepared.run_key, results), run_manifest)
    context.add_output_metadata({r.gate: r.status for r in results})
    return frame
