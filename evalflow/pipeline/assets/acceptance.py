"""Stage `acceptance_runs`: the frozen baseline's `run` probes, executed in the gate sandbox.

One row per `run` probe of the baseline (none when it has none, and then nothing runs): the
command or HTTP request, the expectation, whether it passed, and — when the environment
stopped it — why it was not run (SPEC §5: an environment failure is not-run, never a
failure of the project). Same settings, limits, hidden paths and result cache as `gates`;
the scoring runs read it as behavioural evidence (`evalflow.domain.acceptance.with_runs`).
Rows carry no clock and no cache flag, so an unchanged run writes an identical table.
"""

import dagster as dg
import pandas as pd

from evalflow.domain.acceptance import acceptance_rows
from evalflow.gates import GateCaches, gate_limits
from evalflow.gates.acceptance import run_acceptance
from evalflow.gates.runner import gate_commands
from evalflow.pipeline.assets.common import prepare, run_output, stamp
from evalflow.pipeline.resources import EvalflowResource
from evalflow.storage.tables import columns


def acceptance_runs(
    context: dg.AssetExecutionContext, evalflow: EvalflowResource, run_manifest: pd.DataFrame
) -> dg.Output:
    """Every `run` probe of the baseline, run after setup and build in a clone of head."""
    prepared = prepare(context, evalflow)
    bench = prepared.benchmark
    settings = prepared.manifest.gate_settings.over(bench.gate_defaults)
    warehouse = evalflow.get_warehouse()
    build = gate_commands(prepared.manifest.gates, bench.baseline.build_command)["build"]
    rows = run_acceptance(
        prepared.repo,
        prepared.head_sha,
        [check for _, check in bench.baseline.checks()],
        serve=bench.baseline.serve,
        build_command=build,
        settings=settings,
        limits=gate_limits(settings, evalflow.gate_timeout_s),
        caches=GateCaches.under(warehouse.workdir),
        hidden=[warehouse.workdir, bench.baseline_path.parent],
        rerun=evalflow.rerun_gates,
        require_isolation=evalflow.require_isolation,
        root=prepared.manifest.root,
    )
    frame = pd.DataFrame(acceptance_rows(rows), columns=columns("acceptance_runs", stamped=False))
    outcome = frame["passed"].map({True: "passed", False: "failed"}).fillna("not_run")
    summary = {name: int(n) for name, n in outcome.value_counts().sort_index().items()}
    return run_output("acceptance_runs", stamp(frame, run_manifest), run_manifest, summary)
