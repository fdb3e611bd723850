"""The steps of one framework-run evaluation, shared by the CLI and the Dagster assets.

prepare (manifest → resolved commits, baseline, diff surface, fingerprint) → snapshot →
k scoring runs through a judge and the shared validator → majority vote → roll-up. Each step
is a plain function over plain values so an asset can call exactly one of them.

Two guards live here because every judge passes through them:
- a scoring run in which the judge failed on every call (each verdict UNSCORED with the
  judge's error as its reason: auth, quota, network) is an error, never a run of UNSCORED
  checks that looks like an evaluation (`JudgeFailedError`, exit 2);
- the comparability key: runs are ranked together only when baseline hash, judge id,
  judge model and prompt version are equal (`comparability`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from evalflow import __version__
from evalflow.domain.acceptance import AcceptanceRun
from evalflow.domain.models import PRD, Baseline, RunManifest, Verdict
from evalflow.domain.portability import portable_probes
from evalflow.errors import EvalflowError, InputError
from evalflow.io.inputs import Benchmark, load_benchmark, load_manifest
from evalflow.io.side_metrics import elicitation_files_digest
from evalflow.judges.base import Judge, JudgeRequest
from evalflow.judges.cost import UsageRecord, usage_sums
from evalflow.judges.evidence_kinds import EvidenceRules
from evalflow.judges.validator import validate_verdict
from evalflow.repo.builder import build_repo
from evalflow.repo.diff_surface import DiffFile, diff_surface
from evalflow.repo.git import git, require_repo, resolve_commit, use_work_root
from evalflow.repo.limits import PREPARE_S, budget
from evalflow.repo.run_view import confine_diff, confine_snapshot
from evalflow.repo.snapshot import (
    WORKTREE,
    RepoSnapshot,
    check_tree,
    load_snapshot,
    load_worktree_snapshot,
)
from evalflow.repo.test_inventory import FailedTest, LevelConventions, failed_tests

K_RUNS = 3
# The reasons `evalflow.judges.anthropic_judge.failure_reason` gives a check whose model call
# failed (a test pins them): such an UNSCORED verdict says nothing about the code.
JUDGE_ERROR_PREFIXES = ("API failure:", "judge error:")


class JudgeFailedError(EvalflowError):
    """The judge failed on every call of a scoring run: nothing was judged (exit 2)."""


@dataclass(frozen=True)
class PreparedRun:
    manifest: RunManifest
    manifest_path: Path
    benchmark: Benchmark
    repo: Path
    base_sha: str
    head_sha: str
    worktree: bool
    diff: tuple[DiffFile, ...]

    @property
    def run_key(self) -> str:
        return self.manifest.run_key

    @property
    def diff_paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.diff if f.status != "deleted")

    def resolve(self, value: str) -> Path:
        return (self.manifest_path.parent / value).resolve()


def prepare_run(manifest_path: Path, warehouse: Path) -> PreparedRun:
    """Load and resolve everything one run needs; every failure is a one-line InputError.

    Git's scratch state (the repository's mirror) lives under `warehouse`, and the whole
    preparation — build or mirror, fetch, commits, diff — runs under the wall-clock bound
    `EVALFLOW_PREPARE_TIMEOUT_S`."""
    use_work_root(warehouse)
    with budget(PREPARE_S, "preparing the run (mirror, fetch, diff)"):
        return _prepare(manifest_path, warehouse)


def resolve_run(manifest_path: Path, warehouse: Path) -> PreparedRun:
    """What `fingerprint` reads, without the tree check and the diff surface `prepare_run`
    adds (the diff is left empty): the commits pin the diff, so an unchanged run is told
    from a changed one without diffing it. Same errors, same bound as `prepare_run`."""
    use_work_root(warehouse)
    with budget(PREPARE_S, "resolving the run's commits (mirror, fetch)"):
        return _resolve(manifest_path, warehouse)


def _resolve(manifest_path: Path, warehouse: Path) -> PreparedRun:
    loaded = load_manifest(manifest_path)
    manifest = loaded.manifest
    benchmark = load_benchmark(loaded.resolve(manifest.baseline))
    if benchmark.baseline.benchmark != manifest.benchmark:
        raise InputError(
            f"manifest benchmark {manifest.benchmark!r} differs from the baseline's "
            f"{benchmark.baseline.benchmark!r}",
            where=str(manifest_path),
            fix="point 'baseline' at this benchmark's _ac-baseline.yaml",
        )
    if manifest.source is not None:
        repo = build_repo(loaded.resolve(manifest.source), warehouse / "repos" / manifest.run_key)
    else:
        repo = require_repo(loaded.resolve(manifest.repo or ""))
    base_sha = resolve_commit(repo, manifest.base)
    worktree = manifest.head == WORKTREE
    head_sha = resolve_commit(repo, "HEAD" if worktree else manifest.head)
    if head_sha == base_sha and not worktree:
        # Refused, not scored: an empty change would score as a framework that built nothing.
        raise InputError(
            f"head {manifest.head!r} is the same commit as base {manifest.base!r} "
            f"({head_sha[:12]}): the run changed nothing",
            where=str(manifest_path),
            fix="set head to the commit the framework run ended on",
        )
    return PreparedRun(manifest, loaded.path, benchmark, repo, base_sha, head_sha, worktree, ())


def _prepare(manifest_path: Path, warehouse: Path) -> PreparedRun:
    run = _resolve(manifest_path, warehouse)
    check_tree(run.repo, run.head_sha)
    surface = diff_surface(run.repo, run.base_sha, WORKTREE if run.worktree else run.head_sha)
    root = run.manifest.root
    if root is not None:
        _require_root(run.repo, run.head_sha, run.worktree, root, run.manifest_path)
    shared = run.benchmark.baseline.shared_paths
    return replace(run, diff=confine_diff(surface, root, shared))


def _require_root(repo: Path, head_sha: str, worktree: bool, root: str, where: Path) -> None:
    exists = (
        (repo / root).is_dir()
        if worktree
        else bool(git(repo, "ls-tree", "-d", "--name-only", head_sha, "--", root).strip())
    )
    if not exists:
        raise InputError(
            f"root {root!r} is no folder of the repository at head {head_sha[:12]}",
            where=str(where),
            fix="set root: to the run's own folder (relative to the repository top)",
        )


def open_snapshot(prepared: PreparedRun) -> RepoSnapshot:
    """The repository at head as this run sees it: its `root:` and the shared paths only."""
    if prepared.worktree:
        snapshot = load_worktree_snapshot(prepared.repo, prepared.head_sha)
    else:
        snapshot = load_snapshot(prepared.repo, prepared.head_sha)
    root = prepared.manifest.root
    return confine_snapshot(snapshot, root, prepared.benchmark.baseline.shared_paths)


def _inputs(
    benchmark: Benchmark, framework: str, base_sha: str, head_sha: str, worktree: bool
) -> dict[str, Any]:
    """What the evaluated run brings: PRD, baseline, commits, elicitation files and k."""
    return {
        "prd": hashlib.sha256(benchmark.prd_text.encode()).hexdigest(),
        "baseline": benchmark.baseline_sha256,
        "base": base_sha,
        "head": head_sha + (f"+{WORKTREE}" if worktree else ""),
        "elicitation": elicitation_files_digest(benchmark.baseline_path.parent, framework),
        "k": K_RUNS,
    }


def _digest(material: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


# Manifest keys the fingerprint takes from elsewhere: the run_key's parts (the partition),
# where the code is (the resolved commits pin its content) and the baseline file (its hash).
# Every other key — gates, setup, gate_env, gate_limits, author_model, framework_cost_usd,
# judge, spec_dir, skills_dir and any key added later — enters as the manifest states it.
_LOCATION_KEYS = frozenset(
    {"benchmark", "framework", "run", "repo", "source", "base", "head", "baseline"}
)


def manifest_settings(prepared: PreparedRun) -> dict[str, Any]:
    """The manifest's result-changing keys, the gate keys merged over the benchmark's
    `_benchmark.yaml` defaults (what the gates really use). A key left at its default is
    omitted, so a key added to the manifest model leaves existing fingerprints unchanged."""
    manifest = prepared.manifest
    gate_keys = set(type(manifest.gate_settings).model_fields)
    fields = manifest.model_dump(
        mode="json", exclude_defaults=True, exclude=_LOCATION_KEYS | gate_keys
    )
    gate_settings = manifest.gate_settings.over(prepared.benchmark.gate_defaults)
    return {**fields, **gate_settings.model_dump(mode="json", exclude_defaults=True)}


def fingerprint(prepared: PreparedRun, judge: Judge) -> str:
    """sha256 over everything that can change a result (DESIGN.md "Reproducibility"): the
    run's inputs, the manifest's settings, the judge's settings and evalflow's version."""
    inputs = _inputs(
        prepared.benchmark,
        prepared.manifest.framework,
        prepared.base_sha,
        prepared.head_sha,
        prepared.worktree,
    )
    material = {**inputs, "judge": judge.fingerprint_fields(), "evalflow": __version__}
    settings = manifest_settings(prepared)
    # Absent when every key is at its default: such a run keeps the fingerprint it had.
    if settings:
        material["manifest"] = settings
    return _digest(material)


def inputs_fingerprint(
    benchmark: Benchmark, framework: str, base_sha: str, head_sha: str, worktree: bool
) -> str:
    """sha256 over the run's inputs alone (no judge, no evalflow version): equal for two
    evaluations of the same code against the same PRD, whoever judged them."""
    return _digest(_inputs(benchmark, framework, base_sha, head_sha, worktree))


def judge_prompt_version(judge: Judge) -> str | None:
    """The version of the judge's instructions, read from its fingerprint fields:
    `prompt_version` (Claude) or `version` (the heuristic's rules); a composite judge
    (hybrid) joins its parts'. A labels file has none: the labels are the verdicts."""

    def versions(fields: dict[str, Any]) -> list[str]:
        found: list[str] = []
        for name in sorted(fields):
            value = fields[name]
            if isinstance(value, dict):
                found += versions(value)
            elif name in ("prompt_version", "version") and value is not None:
                found.append(str(value))
        return found

    return "+".join(versions(judge.fingerprint_fields())) or None


def comparability(baseline_sha256: str, judge: Judge) -> tuple[str | None, str]:
    """(prompt version, comparability key): the key is sha256 (16 hex) over the baseline
    hash, judge id, judge model and prompt version — what must be equal to rank runs.

    The judge id enters as its backend (the part before ":"): the rest is the model, which
    enters on its own, or a labels file's name, which differs per run by design (one
    adjudicated labels file per run) and says nothing about how the verdicts were made."""
    version = judge_prompt_version(judge)
    parts = [baseline_sha256, judge.judge_id.split(":", 1)[0], judge.model, version]
    return version, hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]


def judge_failure(verdicts: list[Verdict]) -> str | None:
    """The judge's error when every verdict is UNSCORED because its call failed, else None."""
    if verdicts and all(
        v.status == "UNSCORED" and v.rationale.startswith(JUDGE_ERROR_PREFIXES) for v in verdicts
    ):
        return " ".join(verdicts[0].rationale.split())  # one line, whatever the API said
    return None


def acceptance_from_frame(frame: pd.DataFrame) -> tuple[AcceptanceRun, ...]:
    """The `acceptance_runs` rows of one run as the judge reads them."""
    fields = list(AcceptanceRun.model_fields)
    values = frame[fields].astype(object)
    records = values.where(values.notna(), None).to_dict("records")
    return tuple(AcceptanceRun.model_validate(record) for record in records)


def score_run(
    prepared: PreparedRun,
    judge: Judge,
    run: int,
    snapshot: RepoSnapshot,
    acceptance: tuple[AcceptanceRun, ...] = (),
    failing: frozenset[FailedTest] = frozenset(),
) -> list[Verdict]:
    """Scoring run `run` (1..k): the judge's verdicts after the shared validator;
    `acceptance` are the run's executed `run` probes (behavioural evidence), `failing` the
    tests its unit/e2e gates report failing at head (`failing_from_gates`).

    Raises JudgeFailedError (one line: the judge's first error) when the judge failed on
    every check, so the run is neither stored as scored nor ranked."""
    request = JudgeRequest(
        run_key=prepared.run_key,
        run=run,
        checks=tuple(prepared.benchmark.baseline.checks()),
        snapshot=snapshot,
        diff_paths=prepared.diff_paths,
        anchors=prepared.benchmark.baseline.anchors,
        test_levels=prepared.benchmark.baseline.test_levels,
        author_model=prepared.manifest.author_model,
        acceptance=acceptance,
        portable=portable_probes(prepared.benchmark.baseline.checked_against, prepared.run_key),
        failing=failing,
    )
    verdicts = judge.score(request)
    expected = {check.id for _, check in request.checks}
    got = [v.check_id for v in verdicts]
    if sorted(got) != sorted(expected):
        raise InputError(
            f"judge {judge.judge_id} returned verdicts for {len(set(got))} of "
            f"{len(expected)} checks",
            where=prepared.run_key,
        )
    error = judge_failure(verdicts)
    if error is not None:
        raise JudgeFailedError(
            f"judge {judge.judge_id} failed on all {len(verdicts)} checks of scoring run "
            f"{run}: {error}",
            where=prepared.run_key,
            fix="check the judge's API key, quota and network, then rerun",
        )
    diff = set(prepared.diff_paths)
    baseline = prepared.benchmark.baseline
    rules = EvidenceRules(
        snapshot,
        LevelConventions().model_copy(update=baseline.test_levels.model_dump(exclude_none=True)),
        {check.id: check.kind for _, check in request.checks},
    )
    validated = [validate_verdict(v, snapshot, diff, rules=rules) for v in verdicts]
    return _reask_unscored(judge, request, validated, diff, rules)


def _reask_unscored(
    judge: Judge,
    request: JudgeRequest,
    verdicts: list[Verdict],
    diff: set[str],
    rules: EvidenceRules,
) -> list[Verdict]:
    """An UNSCORED vote of a judge that is not deterministic is re-asked once (SPEC §5, see
    `domain.vote`): a lost or unusable answer is not a vote. Whether the second answer is
    paid or replayed is the judge client's business (its cache and budget); whatever comes
    back passes the validator like the first."""
    again = {v.check_id for v in verdicts if v.status == "UNSCORED"}
    if judge.deterministic or not again:
        return verdicts
    checks = tuple((ac, check) for ac, check in request.checks if check.id in again)
    answers = {
        v.check_id: validate_verdict(v, request.snapshot, diff, rules=rules)
        for v in judge.score(replace(request, checks=checks))
        if v.check_id in again
    }
    return [answers.get(v.check_id, v) for v in verdicts]


def failing_from_gates(gates: pd.DataFrame) -> frozenset[FailedTest]:
    """The tests a run's failed unit/e2e gates name in their stored output (SPEC §5: a
    T-check's evidence is an assertion in a test that runs)."""
    if gates.empty:
        return frozenset()
    failed = gates[gates["gate"].isin(["unit", "e2e"]) & (gates["status"] == "fail")]
    return frozenset().union(*(failed_tests(str(t)) for t in failed["output_tail"]))


def checks_frame(baseline: Baseline) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "check_id": check.id,
                "ac_id": ac.id,
                "kind": check.kind,
                "level": check.level,
                "outcome": check.outcome,
                "wiring": check.wiring,
                "proposition": check.proposition,
                "has_probes": bool(check.probes),
            }
            for ac, check in baseline.checks()
        ]
    )


def stories_frame(prd: PRD) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "ac_id": ac.id,
                "story_id": story.id,
                "priority": story.priority,
                "assumed": story.assumed,
            }
            for story in prd.stories
            for ac in story.acs
        ]
    )


def verdicts_frame(
    run_key: str, verdicts: list[Verdict], usage: list[UsageRecord] = ()
) -> pd.DataFrame:
    """One row per verdict; evidence, searches, flags, the files read and the judge's model
    calls as lists of structs (DuckDB `unnest`s them), plus the calls' token and dollar totals
    per check."""
    calls: dict[str, list[UsageRecord]] = {}
    for record in usage:
        calls.setdefault(record.check_id, []).append(record)

    def spent(check_id: str) -> dict[str, Any]:
        mine = calls.get(check_id, [])
        return {**usage_sums(mine), "usage": [r.model_dump() for r in mine]}

    rows: list[dict[str, Any]] = [
        {
            "run_key": run_key,
            "check_id": v.check_id,
            "run": v.run,
            "status": v.status,
            "judge_id": v.judge_id,
            "evidence": [{"kind": "lines", **e.model_dump()} for e in v.evidence],
            "evidence_refs": ", ".join(e.ref() for e in v.evidence),
            "searches": [s.model_dump() for s in v.searches],
            "n_searches": len(v.searches),
            "rationale": v.rationale,
            "flags": list(v.flags),
            "read_blobs": None
            if v.read_blobs is None
            else [{"path": path, "blob": blob} for path, blob in v.read_blobs],
            **spent(v.check_id),
        }
        for v in verdicts
    ]
    return pd.DataFrame(rows)


def diff_frame(prepared: PreparedRun) -> pd.DataFrame:
    return pd.DataFrame(
        [{"run_key": prepared.run_key, **f.model_dump()} for f in prepared.diff],
        columns=["run_key", "path", "status", "old_path", "added_lines", "deleted_lines", "binary"],
    )
