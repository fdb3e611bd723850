"""`evalflow rubric`, `evalflow ledger` and `evalflow review-eval`: River Review's rubric, the
evaluation ledger and review-fixture evaluation (SPEC §3).

Three click objects for the lead to register: `rubric_group`, `ledger_group` and
`review_eval_command` (all listed in `COMMANDS`). Exit codes follow `evalflow.errors`: 0 ok,
1 a regression or a failing fixture case, 2 bad input (an unsound rubric included).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.progress import track
from rich.table import Table

from evalflow import __version__
from evalflow.domain.rubric.compare import DEFAULT_TOLERANCE, KeyComparison
from evalflow.domain.rubric.entry_keys import format_entry_key
from evalflow.domain.rubric.models import LedgerEntry
from evalflow.domain.rubric.review_fixtures import (
    CaseOutput,
    ReviewEvaluation,
    evaluate_review_fixtures,
    review_ledger_entry,
)
from evalflow.domain.rubric.scoring import rubric_problems
from evalflow.errors import EXIT_BELOW_THRESHOLD, EXIT_INPUT, EvalflowError
from evalflow.io.ledger import (
    DEFAULT_RUBRIC_PATH,
    append_entry,
    compare_ledger,
    default_ledger_path,
    git_identity,
    load_rubric,
    now_timestamp,
    record_manual_score,
)
from evalflow.io.review import (
    DEFAULT_TIMEOUT_SECONDS,
    LoadedCases,
    load_cases,
    load_findings,
    run_reviewer,
)

F = TypeVar("F", bound=Callable[..., Any])

_PATH = click.Path(path_type=Path, dir_okay=False)


def _rubric_option(function: F) -> F:
    return click.option(
        "--rubric",
        "rubric_path",
        type=_PATH,
        default=DEFAULT_RUBRIC_PATH,
        show_default="docs/eval/rubric.yaml",
        help="Rubric file.",
    )(function)


def _ledger_option(function: F) -> F:
    return click.option(
        "--ledger",
        "ledger_path",
        type=_PATH,
        default=None,
        help="Ledger JSONL file [default: <warehouse>/ledger/ledger.jsonl].",
    )(function)


def _fmt(value: float | None) -> str:
    return "null" if value is None else f"{value:.4f}"


def _echo_json(payload: object) -> None:
    click.echo(json.dumps(payload, indent=2, ensure_ascii=False))


@click.group("rubric")
def rubric_group() -> None:
    """River Review rubric files (docs/eval/rubric.yaml)."""


@rubric_group.command("check")
@click.argument("path", type=_PATH, required=False, default=DEFAULT_RUBRIC_PATH)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
def rubric_check(path: Path, as_json: bool) -> None:
    """Check a rubric's schema and integrity: weights sum to 1 (±1e-9), unique ids, directions.

    Exits 2 with one line when the rubric is invalid.
    """
    try:
        rubric = load_rubric(path, require_sound=False)
    except EvalflowError as exc:
        problems = [exc.one_line()]
        rubric = None
    else:
        problems = [f"{path}: {p}" for p in rubric_problems(rubric)]
    weight_sum = sum(d.weight for d in rubric.dimensions) if rubric else None
    if as_json:
        _echo_json(
            {
                "path": str(path),
                "valid": not problems,
                "problems": problems,
                "dimensions": len(rubric.dimensions) if rubric else 0,
                "weight_sum": weight_sum,
            }
        )
    elif problems:
        click.echo(f"invalid: {'; '.join(problems)}", err=True)
    else:
        click.echo(
            f"ok: {path}: {len(rubric.dimensions) if rubric else 0} dimensions, weights sum to 1 "
            "(tolerance 1e-9), ids unique, every direction set"
        )
    if problems:
        raise click.exceptions.Exit(EXIT_INPUT)


@click.group("ledger")
def ledger_group() -> None:
    """The evaluation ledger: one River Review entry per evaluation, keyed `<kind>:<name>`."""


def _comparison_table(comparison: KeyComparison) -> Table:
    before = f"{comparison.previous_timestamp} ({comparison.previous_commit[:7]})"
    after = f"{comparison.latest_timestamp} ({comparison.latest_commit[:7]})"
    table = Table(title=f"{comparison.key}: {before} → {after}")
    for column in ("dimension", "direction", "previous", "latest", "Δ", "note"):
        table.add_column(column, justify="left" if column in ("dimension", "note") else "right")
    for row in comparison.rows:
        direction = "↓ better" if row.direction == "lower_is_better" else "↑ better"
        delta = "-" if row.delta is None else f"{row.delta:+.4f}"
        table.add_row(
            row.dimension_id,
            direction,
            _fmt(row.previous),
            _fmt(row.latest),
            delta,
            "REGRESSION" if row.regression else "",
        )
    return table


@ledger_group.command("compare")
@_ledger_option
@click.option("--key", default=None, help="Only this evaluation key (e.g. review_eval:NAME).")
@click.option(
    "--tolerance",
    type=click.FloatRange(min=0.0),
    default=DEFAULT_TOLERANCE,
    show_default=True,
    help="A change smaller than this is not a regression.",
)
@_rubric_option
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON on stdout.")
def ledger_compare(
    ledger_path: Path | None, key: str | None, tolerance: float, rubric_path: Path, as_json: bool
) -> None:
    """Compare the last two entries of each key (or --key); exit 1 on any regression.

    Direction-aware: a higher_is_better score that drops, or a lower_is_better one that rises,
    by more than --tolerance regresses. Null scores never regress.
    """
    rubric = load_rubric(rubric_path)
    path = ledger_path or default_ledger_path()
    comparisons, counts = compare_ledger(path, rubric, key, tolerance=tolerance)
    insufficient = {k: n for k, n in counts.items() if n < 2}
    regression = any(c.regressions for c in comparisons)
    if as_json:
        _echo_json(
            {
                "ledger": str(path),
                "regression": regression,
                "comparisons": [
                    {**c.model_dump(mode="json"), "regression": bool(c.regressions)}
                    for c in comparisons
                ],
                "insufficient": [{"key": k, "entries": n} for k, n in insufficient.items()],
            }
        )
    else:
        console = Console()
        for comparison in comparisons:
            console.print(_comparison_table(comparison))
        for k, n in insufficient.items():
            click.echo(f"{k or '(no description)'}: {n} entry, need 2 to compare")
        click.echo("regression detected" if regression else "no regression")
    if regression:
        raise click.exceptions.Exit(EXIT_BELOW_THRESHOLD)


@ledger_group.command("record-manual")
@_ledger_option
@click.option("--key", required=True, help="Evaluation key of the entry being reviewed.")
@click.option(
    "--dimension",
    default="actionability",
    show_default=True,
    help="A manual dimension of the rubric.",
)
@click.option("--score", type=float, required=True, help="The human score, 0..1.")
@click.option("--details", default=None, help="Who reviewed and how (stored with the score).")
@_rubric_option
@click.option("--json", "as_json", is_flag=True, help="Print the new entry as JSON on stdout.")
def ledger_record_manual(
    ledger_path: Path | None,
    key: str,
    dimension: str,
    score: float,
    details: str | None,
    rubric_path: Path,
    as_json: bool,
) -> None:
    """Record a human score for a manual dimension as a new entry of --key."""
    rubric = load_rubric(rubric_path)
    path = ledger_path or default_ledger_path()
    entry = record_manual_score(path, rubric, key, dimension, score, details=details)
    if as_json:
        _echo_json(entry.to_document())
        return
    click.echo(
        f"recorded {dimension}={score:g} for {key} in {path}: weighted total "
        f"{_fmt(entry.scores.get('weightedTotal'))}, coverage {entry.scores['coverage']:.2f}"
    )


def _print_evaluation(evaluation: ReviewEvaluation, entry: LedgerEntry) -> None:
    console = Console()
    cases = Table(title=f"review-eval · {entry.description}")
    for column in ("case", "result", "findings", "failures"):
        cases.add_column(column, justify="right" if column == "findings" else "left")
    for case in evaluation.cases:
        cases.add_row(
            case.name,
            "pass" if case.passed else "FAIL",
            str(case.finding_count),
            ", ".join(f.category for f in case.failures),
        )
    console.print(cases)
    dimensions = Table(title="dimension scores")
    for column in ("dimension", "method", "score", "details"):
        dimensions.add_column(column, justify="right" if column == "score" else "left")
    for item in evaluation.dimension_scores:
        dimensions.add_row(
            item.dimension_id, item.scoring_method or "", _fmt(item.score), item.details or ""
        )
    console.print(dimensions)
    summary = evaluation.summary
    click.echo(
        f"passRate {summary.pass_rate:.4f} ({summary.passed}/{summary.total}) · "
        f"falsePositiveRate {summary.false_positive_rate:.4f} · "
        f"evidenceRate {summary.evidence_rate:.4f} · "
        f"weighted total {_fmt(entry.scores.get('weightedTotal'))} "
        f"(coverage {entry.scores['coverage']:.2f})"
    )


def _reviewer_outputs(
    loaded: LoadedCases, findings_path: Path | None, command: str | None, timeout: float
) -> tuple[dict[str, CaseOutput], str]:
    """The reviewer's output per case and the reviewer's default name."""
    if findings_path is not None and command is None:
        return load_findings(findings_path), findings_path.stem
    if command is not None and findings_path is None:
        outputs = run_reviewer(
            command,
            loaded,
            timeout=timeout,
            track=lambda cases: track(
                cases, description="reviewing", console=Console(stderr=True), transient=True
            ),
        )
        return outputs, Path(shlex.split(command)[0]).name
    raise click.UsageError("pass exactly one of --findings and --command")


@click.command("review-eval")
@click.option(
    "--cases",
    "cases_path",
    type=_PATH,
    required=True,
    help="River Review cases.json (diffFile paths are relative to it).",
)
@click.option(
    "--findings",
    "findings_path",
    type=_PATH,
    default=None,
    help="JSON object: case name → array of findings.",
)
@click.option(
    "--command",
    "command",
    default=None,
    help="Reviewer command run per case (no shell) with the diff path appended; prints a JSON "
    "array of findings.",
)
@click.option(
    "--reviewer",
    default=None,
    help="Reviewer name; the entry key is review_eval:<name> "
    "[default: the findings file's stem or the command's program name].",
)
@_ledger_option
@click.option("--no-ledger", is_flag=True, help="Do not append the result to the ledger.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.0, min_open=True),
    default=DEFAULT_TIMEOUT_SECONDS,
    show_default=True,
    help="Seconds per case for --command.",
)
@click.option("--commit", default=None, help="Commit to record [default: git HEAD of the cwd].")
@click.option("--branch", default=None, help="Branch to record [default: git branch of the cwd].")
@_rubric_option
@click.option("--json", "as_json", is_flag=True, help="Print the evaluation as JSON on stdout.")
def review_eval_command(
    cases_path: Path,
    findings_path: Path | None,
    command: str | None,
    reviewer: str | None,
    ledger_path: Path | None,
    no_ledger: bool,
    timeout: float,
    commit: str | None,
    branch: str | None,
    rubric_path: Path,
    as_json: bool,
) -> None:
    """Score a reviewer on River Review fixtures and append the result to the ledger.

    Exits 1 when any case fails. Findings come from --findings or from --command (run with a
    timeout and an environment without *KEY*/*TOKEN*/*SECRET*/*PASSWORD* variables).
    """
    if no_ledger and ledger_path is not None:
        raise click.UsageError("--no-ledger and --ledger contradict each other")
    rubric = load_rubric(rubric_path)
    loaded = load_cases(cases_path)
    outputs, default_name = _reviewer_outputs(loaded, findings_path, command, timeout)
    name = reviewer or default_name
    evaluation = evaluate_review_fixtures(loaded.cases, outputs, rubric)
    git_commit, git_branch = git_identity(Path.cwd())
    entry = review_ledger_entry(
        evaluation,
        rubric,
        key=format_entry_key("review_eval", name),
        version=__version__,
        timestamp=now_timestamp(),
        commit=commit or git_commit,
        branch=branch or git_branch,
    )
    target = None if no_ledger else (ledger_path or default_ledger_path())
    if target is not None:
        append_entry(target, entry, rubric)
    if as_json:
        _echo_json(
            {
                "ledger": None if target is None else str(target),
                "entry": entry.to_document(),
                "evaluation": evaluation.model_dump(mode="json", by_alias=True),
            }
        )
    else:
        _print_evaluation(evaluation, entry)
        if target is not None:
            click.echo(f"appended {entry.description} to {target}")
    if entry.status == "fail":
        raise click.exceptions.Exit(EXIT_BELOW_THRESHOLD)


COMMANDS: tuple[click.Command, ...] = (rubric_group, ledger_group, review_eval_command)
