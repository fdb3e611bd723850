"""Stage `run_manifest`: the resolved run (commits, hashes, judge, fingerprint, repo state)."""

import hashlib
from pathlib import Path

import dagster as dg
import pandas as pd

from evalflow import __version__
from evalflow.errors import InputError
from evalflow.io.evaluation import comparability, fingerprint
from evalflow.io.registry import register_manifest
from evalflow.judges.family import same_family
from evalflow.judges.panel import judge_models
from evalflow.pipeline.assets.common import MANIFEST_TAG, prepare, run_output
from evalflow.pipeline.resources import EvalflowResource
from evalflow.repo.guard import capture_state


def _register_requested(context: dg.AssetExecutionContext, evalflow: EvalflowResource) -> None:
    """A run the manifest sensor requested registers its manifest here, when it runs: the
    sensor itself only reads, so evaluating (or previewing) it changes nothing."""
    path = context.run.tags.get(MANIFEST_TAG)
    if not path:
        return
    key = register_manifest(evalflow.get_warehouse(), Path(path))
    if key != context.partition_key:
        raise InputError(
            f"manifest {path} is run {key!r}, not partition {context.partition_key!r}",
            fix="let the sensor request it again after the manifest change",
        )


def run_manifest(context: dg.AssetExecutionContext, evalflow: EvalflowResource) -> dg.Output:
    """One row per run: manifest fields, resolved SHAs, baseline hash, judge and fingerprint.

    It also records the evaluated repository's state (HEAD, status, content hash) so the
    read-only guard can prove nothing changed by the end of the run.
    """
    _register_requested(context, evalflow)
    prepared = prepare(context, evalflow)
    m = prepared.manifest
    judge = evalflow.get_judge(m.judge)
    state = capture_state(prepared.repo)
    prompt_version, comparability_key = comparability(prepared.benchmark.baseline_sha256, judge)
    row = {
        "run_key": prepared.run_key,
        "fingerprint": fingerprint(prepared, judge),
        "benchmark": m.benchmark,
        "framework": m.framework,
        "judge_name": evalflow.judge_name(m.judge),
        "run": m.run,
        "manifest_path": str(prepared.manifest_path),
        "repo": str(prepared.repo),
        "base_sha": prepared.base_sha,
        "head_sha": prepared.head_sha,
        "worktree": prepared.worktree,
        "prd_sha256": hashlib.sha256(prepared.benchmark.prd_text.encode()).hexdigest(),
        "baseline_sha256": prepared.benchmark.baseline_sha256,
        "judge_id": judge.judge_id,
        "judge_deterministic": judge.deterministic,
        "judge_model": judge.model,
        "judge_prompt_version": prompt_version,
        "comparability_key": comparability_key,
        # A panel shares the author's family when any member does (`judges.panel`).
        "self_preference": any(same_family(j, m.author_model) for j in judge_models(judge)),
        "author_model": m.author_model,
        "framework_cost_usd": m.framework_cost_usd,
        "spec_dir": m.spec_dir,
        "skills_dir": m.skills_dir,
        "gate_build": m.gates.build,
        "gate_lint": m.gates.lint,
        "gate_unit": m.gates.unit,
        "gate_e2e": m.gates.e2e,
        "evalflow_version": __version__,
        "repo_head_before": state.head,
        "repo_status_before": state.status,
        "repo_content_sha256_before": state.content_sha256,
    }
    frame = pd.DataFrame([row])
    return run_output(
        "run_manifest", frame, frame, {"fingerprint": row["fingerprint"], "head": row["head_sha"]}
    )
