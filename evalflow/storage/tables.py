"""The warehouse's table contracts: one pydantic row model per table.

These models are the single source of truth for three things: the IO manager refuses a frame
whose columns drift from its model (a blocking check on every write), `docs/tables.md` is
rendered from them, and `schemas/tables/<table>.schema.json` are generated from them (a test
keeps both current). Table and column names are snake_case; every per-run row carries
`run_key` and its run's `fingerprint`.

Importing this module is cheap: the row models defer building their pydantic validators and
schemas until first use (`defer_build`), so a reader that only needs table names or column
lists (`evalflow query`, `evalflow history`) does not pay for building all of them; a writer's
first use of a table's Arrow schema or JSON Schema builds that table's model only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from types import NoneType, UnionType
from typing import TYPE_CHECKING, Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field

from evalflow.storage.arrow import TableContractError, arrow_schema, arrow_type, duckdb_type

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

RUN_KEY = Field(description="`<benchmark>.<framework>.<run>`: the evaluations partition key")
COMPARABILITY_KEY = (
    "sha256 (16 hex) over baseline hash, judge id (backend), judge model and prompt "
    "version: runs are ranked together only when it is equal"
)
FINGERPRINT = Field(
    description="sha256 over PRD, baseline, commits, judge settings and evalflow version"
)
BENCHMARK = Field(description="the run's benchmark (the PRD), from its manifest")
FRAMEWORK = Field(description="the framework that built the run, from its manifest")


class Row(BaseModel):
    # defer_build: ~45 row models built at import cost more than a light command's whole
    # budget; `model_fields` (all the readers need) is available without building.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class RunRow(Row):
    """A per-run row: its partition key, its run's fingerprint, benchmark and framework come
    first (so no question needs a join with `run_manifest` or `split_part(run_key)`)."""

    run_key: str = RUN_KEY
    fingerprint: str = FINGERPRINT
    benchmark: str = BENCHMARK
    framework: str = FRAMEWORK


JUDGE_NAME = Field(
    description="the judge that scored this row (`--judge`: heuristic, labels, anthropic, "
    "openai, hybrid, panel:…); a run keeps one result per judge, side by side"
)


class JudgedRunRow(RunRow):
    """A row of a judge-dependent per-run table: one result per run and judge."""

    judge_name: str = JUDGE_NAME


class RunRegistryRow(Row):
    run_key: str = RUN_KEY
    benchmark: str = BENCHMARK
    framework: str = FRAMEWORK
    manifest_path: str = Field(description="absolute path of the run manifest")


class RunManifestRow(JudgedRunRow):
    run: str
    manifest_path: str
    repo: str = Field(description="the evaluated repository (read only)")
    base_sha: str
    head_sha: str
    worktree: bool = Field(description="the working tree (with untracked files) was evaluated")
    prd_sha256: str
    baseline_sha256: str = Field(description="hash of the frozen baseline; ranking needs one")
    judge_id: str
    judge_deterministic: bool
    judge_model: str | None = Field(description="the judging model (null for offline judges)")
    judge_prompt_version: str | None = Field(
        description="version of the judge's instructions (prompt or heuristic rules)"
    )
    comparability_key: str = Field(description=COMPARABILITY_KEY)
    self_preference: bool = Field(
        description="judge and author share a model family: borderline checks become UNMET"
    )
    author_model: str | None = Field(description="model that wrote the code, when known")
    framework_cost_usd: float | None = Field(description="the framework run's own cost")
    spec_dir: str | None
    skills_dir: str | None
    gate_build: str | None
    gate_lint: str | None
    gate_unit: str | None
    gate_e2e: str | None
    evalflow_version: str
    repo_head_before: str = Field(description="read-only guard: HEAD before scoring")
    repo_status_before: str = Field(description="read-only guard: git status before scoring")
    repo_content_sha256_before: str = Field(description="read-only guard: content hash")


class DiffSurfaceRow(RunRow):
    path: str
    status: str = Field(description="added, modified, deleted, renamed, copied, type, untracked")
    old_path: str | None
    added_lines: float | None = Field(description="null for binary files")
    deleted_lines: float | None = Field(description="null for binary files")
    binary: bool


# --- struct columns: fixed field names, so DuckDB can `unnest` them -----------------------


class EvidenceItem(Row):
    """One cited piece of evidence: a line range (`lines`) or an executed `run` probe."""

    kind: str = Field(description="`lines` (a cited range of a file) or `run` (a probe run)")
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    quote: str | None = None
    command: str | None = Field(default=None, description="a `run` probe's command")
    expectation: str | None = None
    output: str | None = Field(default=None, description="excerpt of what it printed")


class SearchItem(Row):
    """One search the judge ran."""

    pattern: str
    scope: str = Field(description="'diff surface', 'repository' or a glob/file list")
    hits: int


class ReadBlob(Row):
    """A file the judge read, by the git blob id of its content."""

    path: str
    blob: str


class ModelCall(Row):
    """One model call behind a verdict (`evalflow.judges.cost.UsageRecord`)."""

    run_key: str
    check_id: str
    run: int
    turn: int
    model: str
    request_id: str | None = None
    attempt: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    usd: float
    cached: bool
    batch: bool
    estimated: bool


class NamedScore(Row):
    """One named score of a set (a PluginEval dimension, a ledger entry's headline score)."""

    name: str
    score: float | None = Field(description="null when the layer did not measure it")


def named_scores(scores: dict[str, float | None]) -> list[dict[str, Any]]:
    """A name → score mapping as a `list[NamedScore]` column's cell, sorted by name."""
    return [{"name": name, "score": score} for name, score in sorted(scores.items())]


class VerdictRow(JudgedRunRow):
    check_id: str
    run: int = Field(description="which of the k independent scoring runs (1..k)")
    status: str = Field(description="MET, UNMET or UNSCORED after the evidence validator")
    judge_id: str
    evidence: list[EvidenceItem] = Field(
        description="what the verdict cites: `unnest(evidence)` gives one row per item"
    )
    evidence_refs: str = Field(description="the evidence as `path:line` references")
    searches: list[SearchItem] = Field(description="the searches the judge ran, in order")
    n_searches: int
    rationale: str
    flags: list[str] = Field(description="the evidence validator's flags")
    read_blobs: list[ReadBlob] | None = Field(
        description="the files the judge read (sorted by path); null where the judge does not "
        "record it (heuristic, labels, OpenAI-compatible)"
    )
    api_calls: int = Field(description="model requests for this check (cache hits excluded)")
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = Field(description="input tokens served from the prompt cache")
    cache_write_tokens: int
    cost_usd: float = Field(description="what the calls cost (dated price table); 0 offline")
    spent_usd: float = Field(description="what this materialisation paid (cache hits are free)")
    usage: list[ModelCall] = Field(description="the model calls behind this verdict")


class GateResultRow(RunRow):
    gate: str = Field(description="setup (the dependency install), build, lint, unit or e2e")
    command: str | None = Field(description="the exact command run (the manifest's)")
    status: str = Field(description="pass, fail, not-run, pre-existing or unscored (no command)")
    confirmed: bool = Field(description="a confirmed ✗: the only status that adjusts Final")
    category: str | None = Field(
        description="infra (environment), setup (setup did not pass), failed (the project's "
        "code), unconfigured (no command); null when it passed"
    )
    evidence: str | None = Field(description="the output line the category was decided on")
    exit_code: int | None
    duration_s: float = Field(description="wall time of this execution (varies run to run)")
    timed_out: bool
    network_isolated: bool = Field(description="the command ran without network access")
    target_read_only: bool = Field(description="the evaluated checkout was hidden or read-only")
    isolation_missing: list[str] = Field(description="sandbox features this machine lacked")
    setup_command: str | None = Field(description="the dependency setup run before the gates")
    cached: bool = Field(description="reused from the gate-result cache (key unchanged)")
    ran_at: datetime | None = Field(description="UTC time of the execution the result comes from")
    reason: str | None = Field(description="why not-run, pre-existing or unscored")
    probe_command: str | None = Field(description="the attempt behind a not-run")
    probe_output: str | None
    probe_exit_code: int | None
    base_exit_code: int | None = Field(description="the same command on the base commit")
    base_timed_out: bool | None
    notes: str
    output_tail: str = Field(description="last lines of output, secrets masked")


class JudgeCostRow(Row):
    benchmark: str
    run_key: str = RUN_KEY
    part: str = Field(description="`checks` (a scoring run) or `plugineval` (its skills)")
    run: int | None = Field(description="the scoring run; null for PluginEval")
    judge_name: str = JUDGE_NAME
    judge_id: str = Field(description="the scoring judge, or `plugineval`")
    checks: int = Field(description="checks judged, or PluginEval's skills")
    api_calls: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float = Field(description="what the scoring cost, response-cache hits included")
    spent_usd: float = Field(description="what the last materialisation paid")


class AcceptanceRunRow(RunRow):
    check_id: str
    probe: int = Field(description="which `run` probe of the check (1-based)")
    command: str = Field(description="the shell command, or the HTTP requests sent")
    expectation: str = Field(description="what the run had to show, in one line")
    passed: bool | None = Field(description="null when not run (see not_run_reason)")
    exit_code: int | None = Field(description="the command's exit code (null for HTTP)")
    http_status: int | None = Field(description="status of the last HTTP answer")
    failures: str = Field(description="each unmet expectation; empty when it passed")
    output_excerpt: str = Field(
        description="start of stdout/stderr or of the HTTP answer (bounded), secrets masked"
    )
    not_run_reason: str | None = Field(
        description="why the environment stopped it (setup, build, sandbox, timeout, server)"
    )


class MajorityVoteRow(JudgedRunRow):
    check_id: str
    met_votes: int
    unmet_votes: int
    unscored_votes: int
    k: int
    majority: str = Field(description="the status more than half the runs gave, else UNSCORED")
    borderline: bool = Field(description="the k runs disagreed")


class AcScoreRow(JudgedRunRow):
    story_id: str
    ac_id: str
    priority: str
    weight: int
    scored: bool = Field(
        description="weight > 0 and some check judged (P2 ACs are roadmap readiness only)"
    )
    i_met: int
    i_total: int
    t_met: int
    t_total: int
    n_unscored: int = Field(description="checks whose majority is UNSCORED (counted UNMET)")
    i_score: float | None = Field(description="null when every check is UNSCORED")
    t_score: float | None
    ac_score_value: float | None = Field(description="0.6·I + 0.4·T at full precision")
    ac_score: float | None = Field(
        description="reported AC_score, rounded half up to 2 decimals; null when unmeasured"
    )


class StoryScoreRow(JudgedRunRow):
    story_id: str
    priority: str
    assumed: bool = Field(description="the PRD gave no priority label")
    weight: int
    scored: bool = Field(description="weight > 0 and some check judged")
    n_acs: int
    n_unscored: int = Field(description="checks whose majority is UNSCORED (counted UNMET)")
    story_score_value: float | None
    story_score: float | None = Field(
        description="reported Story_score (2 decimals, half up); null when unmeasured"
    )


class FinalScoreRow(JudgedRunRow):
    sum_w: int = Field(description="Σw derived from the priority table")
    final_value: float | None = Field(description="Final at full precision; null if incomplete")
    final: float | None = Field(
        description="reported Final (2 decimals, half up from the exact value); null while "
        "a weighted check is UNSCORED (undetermined)"
    )
    band: str | None = Field(description="null unless both bounds fall in one band")
    complete: bool = Field(description="no weighted (P0/P1) check's majority is UNSCORED")
    n_unscored: int = Field(description="weighted checks whose majority is UNSCORED")
    final_lower: float = Field(description="bound with UNSCORED counted as UNMET")
    final_upper: float = Field(description="bound with UNSCORED counted as MET")
    gates_failed: bool = Field(description="at least one engineering gate is a confirmed ✗")
    adjusted_final_value: float | None
    adjusted_final: float | None = Field(
        description="Final × 0.5 when a gate failed, else null (null too while incomplete)"
    )
    fleiss_kappa: float | None = Field(description="agreement of the k runs; null if undefined")
    n_checks: int
    n_borderline: int
    borderline_rate: float
    baseline_sha256: str
    comparability_key: str = Field(description=COMPARABILITY_KEY)


class StaticAnalysisRow(RunRow):
    skill: str
    skill_sha256: str
    sub_check: str = Field(description="one of PluginEval's six static sub-checks")
    score: float
    anti_patterns: list[str] = Field(description="the skill's anti-pattern flags")
    penalty: float = Field(description="max(0.5, 1 − 0.05 × anti-pattern count)")


class PluginJudgeRow(JudgedRunRow):
    skill: str
    measured: bool = Field(description="false when no LLM judge was configured")
    reason: str | None
    judges: int
    kappa: float | None = Field(description="Cohen's kappa between judges (≥ 2 judges)")
    scores: list[NamedScore] = Field(
        description="each dimension's judge score (by name): `unnest(scores)` gives one row each"
    )
    api_calls: int = Field(description="model calls of the judge and Monte Carlo layers paid now")
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float = Field(description="what those layers' calls cost, cache hits included")
    spent_usd: float = Field(description="what the last materialisation paid")


class McSimulationRow(JudgedRunRow):
    skill: str
    simulated: bool = Field(description="true: the offline router, not a model, made the calls")
    backend: str | None
    runs: int | None
    errored_runs: int | None
    mc_score: float | None
    activation_rate: float | None
    activation_ci_low: float | None = Field(description="Wilson 95 % interval")
    activation_ci_high: float | None
    triggering_f1: float | None
    mean_quality: float | None
    quality_cv: float | None
    failure_rate: float | None
    failure_ci_low: float | None = Field(description="exact Clopper–Pearson 95 % interval")
    failure_ci_high: float | None
    token_median: float | None
    token_iqr: float | None
    token_outliers: int | None
    efficiency_norm: float | None


class PluginCompositeRow(JudgedRunRow):
    skill: str
    skill_path: str
    composite: float = Field(description="0–100, measured dimensions only, × penalty")
    grade: str | None
    display_grade: str | None
    badge: str = Field(description="platinum … bronze or no_badge (composite AND Elo)")
    elo: float | None
    confidence: str = Field(description="from the layers that produced data")
    confidence_basis: list[str] = Field(description="the layers that produced data")
    penalty: float
    anti_patterns: list[str] = Field(description="the skill's anti-pattern flags")
    measured_weight: float
    depth: str


class TestInventoryRow(RunRow):
    __test__ = False  # not a pytest test class

    test_id: str = Field(description="`path::Class::name[row]`, stable")
    function_id: str
    path: str
    suite: list[str] = Field(description="enclosing classes / describe blocks")
    name: str
    language: str
    start_line: int
    end_line: int
    def_line: int
    row_index: int | None = Field(description="the parametrised row (each counts on its own)")
    row_line: int | None
    row_lines: list[int]
    level: str = Field(description="unit or e2e (frozen per benchmark: baseline test_levels)")
    level_reason: str
    asserts: bool
    assert_lines: list[int]
    mock_assert_lines: list[int]
    mock_only: bool = Field(description="every assertion is about a mock having been called")
    skipped: bool
    imports: list[str]
    is_feature: bool | None = Field(description="added by this diff (else pre-existing)")


class TestTierRow(JudgedRunRow):
    __test__ = False

    test_id: str
    path: str
    line: int
    name: str
    level: str
    tier: str = Field(description="necessary, secondary, nice_to_have or pre_existing (D)")
    ac_id: str | None
    check_ids: list[str] = Field(description="the T-checks the test proves")
    priority: str | None
    reason: str


class DistributionRow(JudgedRunRow):
    tier: str
    count: int
    pct: float | None
    total_feature_tests: int
    pre_existing_tests: int
    healthy: bool | None = Field(
        description="every P0 main path has ≥ 1 Necessary test; NULL when one rests on "
        "UNSCORED T-checks"
    )
    failing_p0_acs: list[str] = Field(description="P0 ACs whose main path has no Necessary test")


class RobustnessRow(JudgedRunRow):
    test_id: str
    path: str
    line: int
    name: str
    weight_class: str = Field(description="high (1.0), med (0.5), low (0.25) or zero")
    weight: float
    reason: str


class ElicitationCategoryRow(JudgedRunRow):
    category_id: str
    category: str
    status: str = Field(description="addressed, missed, n/a, or candidate (unadjudicated)")
    ref: str | None = Field(description="`spec.md:line` when addressed (or proposed)")
    judge: str
    rationale: str


class ElicitationAdditionRow(JudgedRunRow):
    item_id: str
    ref: str
    text: str
    category: str | None
    categories: list[str] = Field(description="every category the addition falls under")
    verdict: str = Field(
        description="valid-necessary, valid-defensive, invalid, or candidate (unadjudicated)"
    )
    rationale: str
    justified: bool
    judge: str
    master_id: str | None
    implementation: str | None = Field(
        description="implemented, pending, pending-deferred, unsearched, or unadjudicated "
        "(derived keywords: implementation_ref is only a candidate line)"
    )
    implementation_ref: str | None
    keywords: list[str] = Field(description="what its implementation was searched by")


class ElicitationItemRow(JudgedRunRow):
    item_id: str
    ref: str
    role: str
    kind: str
    section: str
    trace: str = Field(description="how the spec item traces to the PRD (or does not)")
    target: str | None
    score: float | None
    text: str


class ElicitationSummaryRow(JudgedRunRow):
    status: str = Field(description="scored, or `n/a — no derived spec`")
    e_recall: float | None
    e_precision: float | None
    e_justified: float | None
    pooled_recall: float | None = Field(description="against the adjudicated master list")
    n_addressed: int | None
    n_missed: int | None
    n_not_applicable: int | None
    n_additions: int | None
    n_valid_necessary: int | None
    n_valid_defensive: int | None
    n_invalid: int | None
    n_justified: int | None
    n_master: int | None
    n_master_matched: int | None
    n_candidates: int | None = Field(description="categories and additions awaiting a judge")
    reason: str | None = Field(
        description="why the ratios are NULL: `unadjudicated — N candidates`"
    )
    judge: str | None
    heuristic: bool | None = Field(description="the lexicon heuristic proposed candidates")


class ScopeFindingRow(JudgedRunRow):
    kind: str = Field(description="out_of_scope, rogue_build, plan_drift or deferred")
    effect: str = Field(description="fail, partial or none: its effect once confirmed")
    status: str = Field(description="confirmed, candidate (unadjudicated), rejected or note")
    description: str
    ref: str = Field(description="file:line of the offending behaviour")
    judge: str = Field(description="labels, or heuristic-lexicon (a proposal)")


class ScopeSummaryRow(JudgedRunRow):
    status: str
    verdict: str | None = Field(description="pass, partial or fail (adjudicated only)")
    reason: str | None = Field(
        description="why the verdict is NULL: `unadjudicated — N candidates`"
    )
    n_out_of_scope: int | None = Field(description="confirmed findings of each kind")
    n_rogue_build: int | None
    n_plan_drift: int | None
    n_deferred: int | None
    n_candidates: int | None = Field(description="findings awaiting adjudication")
    judge: str | None


class SanctionedRequirementRow(JudgedRunRow):
    req_id: str
    source: str = Field(description="prd (an AC) or addition (a valid E-addition)")
    priority: str | None
    ref: str | None
    text: str
    n_t_checks: int
    n_met_t_checks: int
    covered: bool | None = Field(description="every T-check MET; NULL when it has no T-check")
    reason: str | None = Field(description="`no T-check`, or how many T-checks are not MET")
    implementation: str | None


class SideMetricsSectionRow(JudgedRunRow):
    markdown: str = Field(description="the report's E, S, R, D sections")


class ReportRow(JudgedRunRow):
    report_file: str
    report_path: str
    content_sha256: str = Field(
        description="hash of the Markdown and of the HTML page beside it (same name, `.html`); "
        "unchanged ⇒ files kept"
    )


class LeaderboardRow(Row):
    benchmark: str
    comparability_key: str = Field(description=COMPARABILITY_KEY)
    ranking_key: str | None = Field(
        description="the one comparability key the benchmark is ranked within (a run whose "
        "row has another key is listed, not ranked); null when the named judge scored no run"
    )
    ranking_choice: str = Field(
        description="which judge and why: the judge covering the most runs, or named by "
        "`--judge` / EVALFLOW_RANK_JUDGE"
    )
    rank: int | None = Field(
        description="within benchmark and comparability key, by Adjusted Final when a gate "
        "failed, else Final; null for a run that is not ranked"
    )
    ranked: bool
    not_ranked_reason: str | None = Field(
        description="e.g. `incomplete: 3 checks unscored` (listed below the ranked runs)"
    )
    framework: str
    run_key: str = RUN_KEY
    final: float | None = Field(description="null while the Final is undetermined")
    adjusted_final: float | None
    band: str | None
    complete: bool
    n_unscored: int
    unmet_proven: int = Field(
        description="UNMET checks proven: a portable search found the behaviour nowhere, or an "
        "executable acceptance check ran and failed"
    )
    unmet_other: int = Field(
        description="UNMET checks on other grounds (lines the judge read, a model's answer)"
    )
    unscored_no_proof: int = Field(
        description="checks UNSCORED for want of a portable proof of absence (SPEC §5)"
    )
    final_lower: float
    final_upper: float
    final_ci_low: float | None = Field(description="Monte Carlo 95 % CI of Final (judge noise)")
    final_ci_high: float | None
    within_noise_of_next: bool | None = Field(
        description="the gap to the next-ranked run could be judge noise"
    )
    rating: float | None = Field(description="Bradley–Terry rating (Elo scale)")
    rating_ci_low: float | None = Field(description="95 % bootstrap CI of the rating")
    rating_ci_high: float | None
    separability: float | None = Field(description="share of player pairs whose CIs are apart")
    n_borderline: int
    fleiss_kappa: float | None
    framework_cost_usd: float | None
    judge_cost_usd: float | None = Field(description="0 for offline judges; API spend otherwise")
    total_cost_usd: float | None
    on_frontier: bool = Field(description="on the Final-vs-cost Pareto frontier")
    judge_name: str = JUDGE_NAME
    judge_id: str
    judge_model: str | None
    judge_prompt_version: str | None
    baseline_sha256: str
    fingerprint: str = FINGERPRINT
    report_path: str | None = Field(description="the run's report of this judge's result")


class EloBootstrapRow(Row):
    benchmark: str
    comparability_key: str = Field(description="ratings are fitted within one key")
    player: str = Field(description="framework, or run_key when a framework has several runs")
    method: str = Field(description="bradley_terry (headline) or elo (sequential, SPEC §2)")
    rating: float
    ci_low: float
    ci_high: float
    n_matches: int
    win_rate: float
    percentile: float = Field(description="mean head-to-head score against the others × 100")
    separability: float | None
    n_samples: int
    seed: int


class FinalUncertaintyRow(Row):
    benchmark: str
    comparability_key: str
    run_key: str = RUN_KEY
    final_majority: float
    final_mean: float
    ci_low: float
    ci_high: float
    n_checks: int
    n_borderline: int
    n_simulations: int
    seed: int


class FinalPairRow(Row):
    benchmark: str
    comparability_key: str = Field(description="pairs are only formed within one key")
    a: str
    b: str
    p_a_greater: float
    p_tie: float
    p_b_greater: float
    ci_overlap: bool
    within_noise: bool


class RetrievalEvalRow(Row):
    retriever: str
    source: str = Field(description="the synthetic corpus (digest) or the gold evidence set")
    k: int
    mean_recall: float = Field(description="the only gated metric (≥ 0.6)")
    mean_precision: float
    mrr: float
    map: float
    mean_ndcg: float
    n_cases: int
    passed: bool
    canary: bool = Field(description="the deliberately broken retriever the gate must catch")


class JudgeCalibrationRow(Row):
    judge_id: str
    case: str
    check_id: str
    gold: str
    majority: str
    agree: bool
    kind: str = Field(description="clear, planted (a defect that must be UNMET) or borderline")
    evidence_valid: bool
    evidence_overlaps_gold: bool


class LedgerEntryRow(Row):
    entry_index: int = Field(description="position in the JSONL ledger")
    entry_key: str = Field(description="`<kind>:<name>`, e.g. framework_run:<run_key>")
    kind: str | None
    run_key: str | None
    timestamp: datetime
    commit: str = Field(description="evalflow's own git commit that made the entry")
    branch: str
    head_sha: str | None = Field(description="a framework run's evaluated head commit")
    fingerprint: str | None = Field(description="a framework run's fingerprint when evaluated")
    status: str
    scores: list[NamedScore] = Field(description="the entry's headline scores, by name")
    dimension_id: str | None = Field(description="River Review dimension (null: none apply)")
    score: float | None
    scoring_method: str | None
    weighted_total: float | None
    coverage: float | None


class PlotRow(Row):
    benchmark: str
    comparability_key: str = Field(description="plots are drawn per ranking group")
    plot: str = Field(description="rating_forest, final_vs_cost, story_heatmap or ac_heatmap")
    png_path: str
    svg_path: str


# --- evaluation history (issue 17.5) ------------------------------------------------------


class EvaluationHistoryRow(Row):
    run_key: str = RUN_KEY
    benchmark: str = BENCHMARK
    framework: str = FRAMEWORK
    judge_name: str = Field(
        description="the judge of this evaluation; `final_drift` pairs evaluations of one judge"
    )
    evaluation_number: int = Field(
        description="1 for a run's first evaluation, then +1 per materialisation of its report"
    )
    evaluated_at: datetime = Field(description="UTC; SOURCE_DATE_EPOCH pins it")
    fingerprint: str = FINGERPRINT
    inputs_fingerprint: str = Field(
        description="sha256 over what the run brings: PRD, baseline, base and head commits, the "
        "framework's elicitation files, k (no judge settings, no evalflow version)"
    )
    evalflow_version: str
    judge_id: str
    judge_model: str | None
    judge_prompt_version: str | None
    comparability_key: str = Field(description=COMPARABILITY_KEY)
    head_sha: str
    final: float | None = Field(description="null while the Final is undetermined")
    adjusted_final: float | None
    complete: bool
    cost_usd: float | None = Field(
        description="the judge's cost of the scoring runs (what they cost, cache hits "
        "included); null when unmeasured"
    )


# --- suites and framework ratings (issue 17) ----------------------------------------------

SUITE = Field(description="the suite (`<benchmarks>/_suites/<suite>.yaml`) the row belongs to")


class SuiteRatingRow(Row):
    suite: str = SUITE
    rank: int = Field(description="by Bradley–Terry rating within the suite")
    framework: str = Field(description="the player: all its runs on all the suite's PRDs")
    rating: float = Field(description="Bradley–Terry MLE over AC matches pooled across PRDs")
    rating_ci_low: float = Field(description="95 % cluster bootstrap CI (PRDs, then runs)")
    rating_ci_high: float
    mean_final: float = Field(description="suite-weighted mean over PRDs of its mean Final")
    mean_final_ci_low: float = Field(description="95 % CI from the same bootstrap samples")
    mean_final_ci_high: float
    mean_effective_final: float = Field(
        description="the same with Adjusted Final where a gate failed (the Pareto plot's axis)"
    )
    mean_effective_ci_low: float
    mean_effective_ci_high: float
    n_adjusted: int = Field(description="its runs whose Adjusted Final replaced Final")
    n_prds: int
    n_runs: int
    n_matches: int = Field(description="run-vs-run AC matches it played")
    run_to_run_sd: float | None = Field(
        description="pooled SD of Final across repeated runs on one PRD; null: no repeats"
    )
    judge_sd: float | None = Field(
        description="√ mean variance of its Finals under the k-run vote split; null: unknown"
    )
    prd_sd: float | None = Field(description="SD of its per-PRD mean Finals; null below 2 PRDs")
    gap_to_next_within_run_noise: bool | None = Field(
        description="|mean Final gap| to the next framework < √(σ²_run + σ²_run,next)"
    )
    cost_per_run_usd: float | None = Field(
        description="mean framework + judge cost per run; null when any cost is unknown"
    )
    cost_per_final_point_usd: float | None = Field(
        description="cost per run / (100 × mean Final): dollars per Final percentage point"
    )
    separability: float | None = Field(description="share of framework pairs with CIs apart")
    judge_id: str = Field(description="the one judge (backend) every rated run shares")
    judge_model: str | None
    judge_prompt_version: str | None
    n_samples: int
    seed: int


class SuitePairRow(Row):
    suite: str = SUITE
    a: str
    b: str
    p_a_better: float = Field(description="share of bootstrap samples rating a above b")
    rating_gap: float = Field(description="rating of a − rating of b")
    mean_final_gap: float = Field(description="mean Final of a − mean Final of b")
    ci_overlap: bool = Field(description="the two rating CIs overlap")
    within_run_noise: bool | None = Field(
        description="|mean Final gap| < √(σ²_run,a + σ²_run,b); null without repeated runs"
    )


class SuitePrdScoreRow(Row):
    suite: str = SUITE
    framework: str
    benchmark: str
    weight: float = Field(description="the benchmark's weight in the suite")
    n_runs: int
    mean_final: float = Field(description="mean Final of its runs on this PRD")
    mean_effective_final: float
    run_to_run_sd: float | None = Field(description="SD of those Finals; null with one run")
    judge_sd: float | None = Field(description="√ mean vote-split variance of those Finals")


class SuiteLeftOutRow(Row):
    suite: str = SUITE
    benchmark: str
    framework: str
    run_key: str = RUN_KEY
    reason: str = Field(description="incomplete, stale, unmeasured or different key (which)")


class SuitePlotRow(Row):
    suite: str = SUITE
    plot: str = Field(description="suite_forest, suite_final_vs_cost or suite_prd_heatmap")
    png_path: str
    svg_path: str


@dataclass(frozen=True)
class TableSpec:
    name: str
    model: type[Row]
    description: str
    per_run: bool = True
    # Append-only: each write adds a part beside the earlier ones (never replacing them).
    append_only: bool = False

    @property
    def columns(self) -> list[str]:
        return list(self.model.model_fields)

    @property
    def per_judge(self) -> bool:
        """One part per run and judge (`<judge>.parquet` in the run's folder), not per run."""
        return issubclass(self.model, JudgedRunRow)

    @property
    def arrow_schema(self) -> pa.Schema:
        """The Arrow schema every part of the table is written with."""
        return arrow_schema(self.model)


_SPECS = [
    TableSpec("run_registry", RunRegistryRow, "Which manifest each partition key evaluates."),
    TableSpec("run_manifest", RunManifestRow, "One row per run: resolved inputs and guard state."),
    TableSpec("diff_surface", DiffSurfaceRow, "Files changed base..head: the first search scope."),
    *(
        TableSpec(f"scoring_run_{n}", VerdictRow, f"Validated verdicts of scoring run {n}.")
        for n in (1, 2, 3)
    ),
    TableSpec("gates", GateResultRow, "Engineering gates, each from an actual run."),
    TableSpec("acceptance_runs", AcceptanceRunRow, "Executable acceptance checks (`run` probes)."),
    TableSpec("majority_vote", MajorityVoteRow, "Majority per check over the k runs."),
    TableSpec("ac_score", AcScoreRow, "I, T and AC_score per acceptance criterion."),
    TableSpec("story_score", StoryScoreRow, "Story_score per story."),
    TableSpec("final_score", FinalScoreRow, "Final, band, bounds, Adjusted Final, agreement."),
    TableSpec("report", ReportRow, "Where each run's Markdown report (and its HTML page) is."),
    TableSpec("test_inventory", TestInventoryRow, "Every test case at head (tree-sitter)."),
    TableSpec("test_tier", TestTierRow, "D: each test's tier and the AC it proves."),
    TableSpec("distribution", DistributionRow, "D: tier → count → % and the healthy check."),
    TableSpec("robustness", RobustnessRow, "R: extra tests and their weights."),
    TableSpec("elicitation_category", ElicitationCategoryRow, "E: the category rubric."),
    TableSpec("elicitation_addition", ElicitationAdditionRow, "E: the additions ledger."),
    TableSpec("elicitation_item", ElicitationItemRow, "E: every spec/tasks item traced."),
    TableSpec("elicitation_summary", ElicitationSummaryRow, "E_recall, E_precision, E_justified."),
    TableSpec("scope_finding", ScopeFindingRow, "S: each offending behaviour with file:line."),
    TableSpec("scope_summary", ScopeSummaryRow, "S: pass, partial or fail."),
    TableSpec("sanctioned_requirement", SanctionedRequirementRow, "PRD ACs ∪ valid additions."),
    TableSpec("side_metrics_section", SideMetricsSectionRow, "The report's side-metric text."),
    TableSpec("static_analysis", StaticAnalysisRow, "PluginEval static sub-checks per skill."),
    TableSpec("plugin_judge", PluginJudgeRow, "PluginEval LLM judge layer per skill."),
    TableSpec("mc_simulation", McSimulationRow, "PluginEval Monte Carlo layer (simulated)."),
    TableSpec("plugin_composite", PluginCompositeRow, "PluginEval composite and badge per skill."),
    TableSpec(
        "leaderboard",
        LeaderboardRow,
        "Every run; complete runs ranked within benchmark and comparability key.",
        False,
    ),
    TableSpec("elo_bootstrap", EloBootstrapRow, "Ratings per benchmark with CIs.", False),
    TableSpec("final_uncertainty", FinalUncertaintyRow, "Monte Carlo CI of each Final.", False),
    TableSpec("final_pair", FinalPairRow, "P(A > B) for each pair of runs.", False),
    TableSpec(
        "judge_cost", JudgeCostRow, "Judge spend per run: each scoring run, and PluginEval.", False
    ),
    TableSpec("leaderboard_plots", PlotRow, "Plot files per benchmark.", False),
    TableSpec("retrieval_eval", RetrievalEvalRow, "The retrieval harness per retriever.", False),
    TableSpec("judge_calibration", JudgeCalibrationRow, "The judge against gold labels.", False),
    TableSpec("ledger_entry", LedgerEntryRow, "Every evaluation's ledger entry.", False),
    TableSpec(
        "evaluation_history",
        EvaluationHistoryRow,
        "One row per evaluation of a run, appended (one part each), never rewritten.",
        append_only=True,
    ),
    TableSpec("suite_rating", SuiteRatingRow, "Framework ratings per suite with CIs.", False),
    TableSpec("suite_pair", SuitePairRow, "P(a better than b) per suite framework pair.", False),
    TableSpec("suite_prd_score", SuitePrdScoreRow, "Framework × PRD scores of a suite.", False),
    TableSpec("suite_left_out", SuiteLeftOutRow, "Runs a suite rating left out, and why.", False),
    TableSpec("suite_plots", SuitePlotRow, "Plot files per suite.", False),
]
TABLES: dict[str, TableSpec] = {spec.name: spec for spec in _SPECS}


def columns(table: str, *, stamped: bool = True) -> list[str]:
    """The contract's columns of `table`; `stamped=False` leaves out run_key, fingerprint,
    benchmark, framework and judge_name, which `evalflow.pipeline.assets.common` adds to a
    per-run frame."""
    spec = TABLES[table]
    names = spec.columns
    if not stamped and issubclass(spec.model, RunRow):
        return [c for c in names if c not in JudgedRunRow.model_fields]
    return names


def _nullable(annotation: Any) -> bool:
    return (get_origin(annotation) in (Union, UnionType)) and NoneType in get_args(annotation)


def validate_frame(table: str, frame: pd.DataFrame) -> None:
    """Refuse a frame whose columns differ from the contract or that has nulls where the
    contract forbids them. Tables without a contract are written as they are."""
    spec = TABLES.get(table)
    if spec is None:
        return
    if list(frame.columns) != spec.columns:
        missing = [c for c in spec.columns if c not in frame.columns]
        extra = [c for c in frame.columns if c not in spec.columns]
        raise TableContractError(
            f"table {table!r} columns differ from its contract "
            f"(missing {missing or 'none'}, unexpected {extra or 'none'}, or out of order)",
            fix="update evalflow/storage/tables.py together with the asset",
        )
    for name, field in spec.model.model_fields.items():
        if not _nullable(field.annotation) and frame[name].isna().any():
            raise TableContractError(
                f"table {table!r} column {name!r} has nulls but the contract forbids them",
                fix="fix the asset that produced it",
            )


def schema_documents() -> dict[str, dict]:
    """`tables/<table>.schema.json` → JSON Schema of the row model (draft 2020-12)."""
    docs: dict[str, dict] = {}
    for spec in _SPECS:
        schema = spec.model.model_json_schema()
        schema = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"urn:evalflow:table:{spec.name}",
            **schema,
            "title": spec.name,
            "description": spec.description,
        }
        docs[f"tables/{spec.name}.schema.json"] = schema
    return docs


def render_schema(document: dict) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def type_name(annotation: Any) -> str:
    """The column's DuckDB type as docs/tables.md shows it, e.g. `BIGINT[] (nullable)`."""
    kind, nullable = arrow_type(annotation)
    return duckdb_type(kind) + (" (nullable)" if nullable else "")


def tables_markdown() -> str:
    """`docs/tables.md`: every table, its columns, types and meanings."""
    lines = [
        "# Warehouse tables",
        "",
        "Generated from `evalflow/storage/tables.py` (`evalflow schemas write`); do not edit.",
        "Per-run tables have one Parquet part per `run_key`",
        "(`<table>/run_key=<key>/part.parquet`); a judge-dependent one (a `judge_name`",
        "column) one part per run and judge (`<table>/run_key=<key>/<judge>.parquet`), so a",
        "run keeps several judges' results side by side (docs/concepts.md, \"Ranking with",
        'confidence"). Cross-run tables have one part (`<table>/all/part.parquet`);',
        "`evaluation_history` is append-only, one part per evaluation. JSON Schemas of the rows",
        "are in `schemas/tables/`.",
        "",
        "## Reading the warehouse",
        "",
        "Every part is written with its table's Arrow schema (the types below; a value that does",
        "not fit fails the write), so all parts of a table agree, all-null columns keep their",
        "type and empty lists are typed. `run_key` is a `string` column equal to the directory",
        "key, the type hive partitioning reads it as, so any engine reads a table directly",
        "(`_compact/` beside the `run_key=` folders is a cache of them that readers skip;",
        "filter on `judge_name` to read one judge's results):",
        "",
        "```python",
        'pyarrow.dataset.dataset("<warehouse>/ac_score", partitioning="hive").to_table()',
        'polars.scan_parquet("<warehouse>/ac_score/run_key=*/*.parquet", hive_partitioning=True)',
        "duckdb.sql(",
        "    \"SELECT * FROM read_parquet('<warehouse>/ac_score/run_key=*/*.parquet', "
        'hive_partitioning = true)"',
        ")",
        "```",
        "",
        "`evalflow query` runs in an in-memory DuckDB locked down before the statement runs (no",
        "file access, so a statement can never write into the warehouse): the tables the SQL",
        "names are copied in first, every other table is listed but refuses to be read. The",
        "copy grows with the tables a statement names. `<warehouse>/evalflow.duckdb` is the",
        "catalog for any DuckDB",
        "client: one view per table plus `final_drift`. DuckDB resolves a relative path in a view",
        "against the working directory of the client that opens the file (`file_search_path` is",
        "a per-connection setting the file cannot carry), so the views hold absolute paths,",
        "rewritten on every run and by `evalflow catalog`: after moving a warehouse, run",
        "`evalflow catalog --warehouse NEW` (`evalflow query` works at once). A run builds the",
        "new catalog under a private name and renames it into place, so an analyst's open",
        "connection (read-only or read-write) never blocks it; that connection keeps the old",
        "file's views, which still glob the current parts.",
        "",
        "## Lists and structs",
        "",
        "Every per-run table has `benchmark` and `framework` beside `run_key`. A verdict's",
        "`evidence`, `searches`, `usage` and `read_blobs` are lists of structs with fixed field",
        "names, as are the `scores` of `plugin_judge` and `ledger_entry` (`name`, `score`);",
        "`flags`, a gate's `isolation_missing`, PluginEval's `anti_patterns` and",
        "`confidence_basis`, a test's `check_ids`, `failing_p0_acs` and an addition's",
        "`categories` and `keywords` are lists of text, `ran_at` a UTC timestamp; DuckDB",
        "unnests them:",
        "",
        "```sql",
        "SELECT benchmark, framework, check_id, e.path, e.start_line, e.quote",
        "FROM scoring_run_1, unnest(evidence) AS t(e)",
        "WHERE e.kind = 'lines';",
        "SELECT check_id, s.pattern, s.hits FROM scoring_run_1, unnest(searches) AS t(s);",
        "SELECT count(*) FROM scoring_run_1 WHERE list_contains(flags, 'absence-proven');",
        "SELECT skill, s.name AS dimension, s.score FROM plugin_judge, unnest(scores) AS t(s);",
        "```",
        "",
        "An `evidence` item is a cited line range (`kind` `lines`: `path`, `start_line`,",
        "`end_line`, `quote`) or an executed acceptance probe (`kind` `run`: `command`,",
        "`expectation`, `output`); the other kind's fields are NULL.",
        "",
        "## Migration",
        "",
        "Older warehouses stored `evidence`, `searches`, `usage`, `read_blobs` and `scores` as",
        "JSON text, `flags`, `isolation_missing`, `anti_patterns`, `confidence_basis`,",
        "`check_ids`, `failing_p0_acs`, `categories` and `keywords` as comma-separated text and",
        "`gates.ran_at` as ISO text, per-run tables other than `run_manifest` had no",
        "`benchmark` or `framework` and `evaluation_history` no `judge_name`. evalflow",
        "reads such parts as they are, every command and `evalflow query` included: each part is",
        "upgraded as it is read (the missing names from its `run_key` or `judge_id`, the text",
        "parsed; a column",
        "that joined a contract later reads as NULL, unmeasured). A re-materialised run writes",
        "the new types. A client reading the Parquet files or `evalflow.duckdb` itself sees each",
        "part's own types instead: a table of old parts only has the old text columns, and one",
        'mixing old and new parts fails (`failed to cast column "flags" from type VARCHAR to',
        "VARCHAR[]`). Run `evalflow migrate --warehouse <warehouse>` once: it rewrites every old",
        "part in the current types (same rows and values, byte-identical to what a fresh",
        "evaluation writes), drops the compacted copies and rewrites the catalog; a second run",
        "rewrites nothing.",
        "",
        "## Evaluation history and `final_drift`",
        "",
        "Every materialisation of a run's report appends one `evaluation_history` row",
        "(`<number>-<evaluated_at>-<fingerprint12>.parquet`), so re-evaluations stay side by",
        "side; `evalflow history RUN_KEY [--json]` lists them. A run skipped as unchanged (same",
        "fingerprint, see `evalflow materialize --force`) is not evaluated and appends nothing.",
        "The view `final_drift` pairs each",
        "evaluation with the run's previous one by the same judge (`judge_name`, then",
        "`evaluation_number`: a heuristic evaluation followed by an anthropic one is two judges'",
        "results, not a change) and keeps the pairs whose Final changed (NULL counts as a",
        "value); a part written before history rows named their judge reads with the name",
        "its `judge_id` gives (run `evalflow migrate` for the catalog file). `cause`: `inputs`",
        "when the",
        "`inputs_fingerprint` changed (PRD, baseline, base or head commit, the framework's",
        "elicitation files, k); else `evalflow` when evalflow's version changed; else `judge`:",
        "its settings changed (`fingerprint_changed`, since the full fingerprint covers judge id,",
        "model, prompt version and labels file) or, with an identical fingerprint, only its",
        "answers did. `judge_drift` flags a drop whose cause is `judge`. Columns: `run_key`,",
        "`judge_name`, `from_evaluation`, `to_evaluation`, `from_evaluated_at`,",
        "`to_evaluated_at`,",
        "`final_before`, `final_after`, `final_change`, `cause`, `fingerprint_changed`,",
        "`judge_drift`, and the judge id, model, prompt version and inputs fingerprint",
        "`_before`/`_after`.",
        "",
    ]
    for spec in _SPECS:
        scope = "per run" if spec.per_run else "cross-run"
        lines += [f"## `{spec.name}` ({scope})", "", spec.description, ""]
        lines += ["| column | type | meaning |", "|---|---|---|"]
        for name, field in spec.model.model_fields.items():
            meaning = (field.description or "").replace("|", "\\|")
            lines.append(f"| `{name}` | {type_name(field.annotation)} | {meaning} |")
        lines.append("")
    return "\n".join(lines)
