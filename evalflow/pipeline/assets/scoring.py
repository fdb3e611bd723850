"""Assets `scoring_run_1`, `scoring_run_2`, `scoring_run_3`: the k independent scoring runs.

Each is its own asset, so one run can be retried or re-materialised alone; each passes the
judge's verdicts through the shared evidence validator before they are stored. Each reads
`acceptance_runs`: the baseline's executed `run` probes are behavioural evidence; and
`gates`: a test the unit/e2e gates report failing at head proves no T-check.
"""

import dagster as dg
import pandas as pd

from evalflow.io.evaluation import (
    K_RUNS,
    acceptance_from_frame,
    failing_from_gates,
    open_snapshot,
    score_run,
    verdicts_frame,
)
from evalflow.pipeline.assets.common import (
    CODE_VERSION,
    GROUP,
    IO,
    KINDS,
    prepare,
    run_output,
    stamp,
)
from evalflow.pipeline.assets.partitions import evaluations
from evalflow.pipeline.resources import EvalflowResource


def _scoring_asset(run: int) -> dg.AssetsDefinition:
    @dg.asset(
        name=f"scoring_run_{run}",
        partitions_def=evaluations,
        io_manager_key=IO,
        group_name=GROUP,
        deps=["diff_surface"],
        retry_policy=dg.RetryPolicy(max_retries=2, delay=5),
        # Concurrency pool: size it to the judge API's rate limit (docs/scaling.md).
        pool="judge_api",
        description=f"Verdicts of scoring run {run} of {K_RUNS} (validated evidence).",
        code_version=CODE_VERSION,
        kinds=KINDS,
    )
    def scoring_run(
        context: dg.AssetExecutionContext,
        evalflow: EvalflowResource,
        run_manifest: pd.DataFrame,
        acceptance_runs: pd.DataFrame,
        gates: pd.DataFrame,
    ) -> dg.Output:
        prepared = prepare(context, evalflow)
        manifest = prepared.manifest
        judge = evalflow.get_judge(
            manifest.judge,
            run_key=prepared.run_key,
            fingerprint=str(run_manifest["fingerprint"].iloc[0]),
            split=evalflow.plugineval_judged(manifest.judge, manifest.skills_dir),
        )
        acceptance = acceptance_from_frame(acceptance_runs)
        failing = failing_from_gates(gates)
        verdicts = score_run(prepared, judge, run, open_snapshot(prepared), acceptance, failing)
        frame = stamp(verdicts_frame(prepared.run_key, verdicts, judge.drain_usage()), run_manifest)
        counts = frame["status"].value_counts().to_dict()
        summary = {
            **{status: int(n) for status, n in counts.items()},
            "cost_usd": float(frame["cost_usd"].sum()),
            "api_calls": int(frame["api_calls"].sum()),
        }
        return run_output(f"scoring_run_{run}", frame, run_manifest, summary)

    return scoring_run


scoring_runs = [_scoring_asset(run) for run in range(1, K_RUNS + 1)]
