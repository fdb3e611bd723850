"""Stage `gates`: dependency setup, then build, lint, unit and e2e in a throw-away sandboxed clone.

A confirmed ✗ (status `fail` of a gate) makes the roll-up report Adjusted Final = Final × 0.5;
`not-run` (an environment or setup failure, always with its attempt and evidence),
`pre-existing`, `unscored` (no command) and the `setup` row never adjust. Settings: the
manifest's `setup`/`gate_env`/`gate_limits`/`require_isolation` over the benchmark's
`_benchmark.yaml`. Results are reused from the warehouse's gate cache while their key is
unchanged (resource `rerun_gates` forces a re-run); durations and output tails are
observations of the execution a result comes from.
"""

import dagster as dg
import pandas as pd

from evalflow.domain.gates import gates_frame
from evalflow.gates import GateCaches, gate_limits, run_gates
from evalflow.pipeline.assets.common import prepare, run_output, stamp
from evalflow.pipeline.resources import EvalflowResource


def gates(
    context: dg.AssetExecutionContext,
    evalflow: EvalflowResource,
    run_manifest: pd.DataFrame,
    diff_surface: pd.DataFrame,
) -> dg.Output:
    """The manifest's exact gate commands (the benchmark's fixed build command first)."""
    prepared = prepare(context, evalflow)
    bench = prepared.benchmark
    settings = prepared.manifest.gate_settings.over(bench.gate_defaults)
    warehouse = evalflow.get_warehouse()
    # A local warehouse's root is its work dir; a remote one is not reachable by path.
    hidden = [warehouse.workdir, bench.baseline_path.parent]
    results = run_gates(
        prepared.repo,
        prepared.head_sha,
        prepared.base_sha,
        prepared.manifest.gates,
        diff_surface.loc[diff_surface["status"] != "deleted", "path"].tolist(),
        limits=gate_limits(settings, evalflow.gate_timeout_s),
        build_command=bench.baseline.build_command,
        settings=settings,
        caches=GateCaches.under(warehouse.workdir),
        hidden=hidden,
        rerun=evalflow.rerun_gates,
        require_isolation=evalflow.require_isolation,
        root=prepared.manifest.root,
    )
    if prepared.worktree:
        note = "gates ran on the HEAD commit: uncommitted working-tree changes are not gated"
        results = [r.model_copy(update={"notes": (*r.notes, note)}) for r in results]
    frame = stamp(gates_frame(prepared.run_key, results), run_manifest)
    return run_output(
        "gates",
        frame,
        run_manifest,
        {r.gate: f"{r.status}{' (cached)' if r.cached else ''}" for r in results},
    )
