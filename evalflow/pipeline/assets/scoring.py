"""Stages `scoring_run_1`, `scoring_run_2`, `scoring_run_3`: the k independent scoring runs.

Each is its own asset, so one run can be re-materialised alone; each passes the judge's
verdicts through the shared evidence validator before they are stored. Each reads
`acceptance_runs`: the baseline's executed `run` probes are behavioural evidence; and
`gates`: a test the unit/e2e gates report failing at head proves no T-check.
"""

from collections.abc import Callable

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
from evalflow.pipeline.assets.common import prepare, run_output, stamp
from evalflow.pipeline.resources import EvalflowResource


def scoring_stage(run: int) -> Callable[..., dg.Output]:
    """Scoring run `run` of `K_RUNS` (it also reads the diff surface, through the prepared run)."""

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


scoring_runs = [scoring_stage(run) for run in range(1, K_RUNS + 1)]
