"""`evalflow calibrate`: a judge against the gold-labelled calibration set (SPEC §1
"Calibration"), recorded as a `judge_calibration:<judge>` ledger entry (SPEC §3).

One click command, `calibrate`, for the lead to register. Exit codes: 0 the judge passes,
1 it fails calibration (disagreement with gold above 20 % or any false MET on a planted
defect), 2 bad input, 3 an internal failure.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.progress import track
from rich.table import Table

from evalflow.cli.failures import guarded
from evalflow.domain.rubric.models import LedgerEntry
from evalflow.errors import EXIT_BELOW_THRESHOLD
from evalflow.io import settings
from evalflow.io.calibration import DEFAULT_SET, CalibrationResult
from evalflow.io.calibration import calibrate as calibrate_set
from evalflow.io.ledger import DEFAULT_RUBRIC_PATH
from evalflow.judges.registry import JUDGE_NAMES

_FILE = click.Path(path_type=Path, dir_okay=False)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _print(result: CalibrationResult, entry: LedgerEntry) -> None:
    summary = result.summary
    console = Console()
    table = Table(title=f"calibrate · {summary.judge_id} · {summary.n_checks} checks")
    for column in ("kind", "checks", "agreement", "MET recall", "false MET", "UNSCORED"):
        table.add_column(column, justify="left" if column == "kind" else "right")
    for part in summary.per_kind:
        table.add_row(
            part.kind,
            str(part.n_checks),
            _fmt(part.agreement),
            _fmt(part.met_recall),
            f"{part.n_false_met}/{part.n_gold_unmet}",
            str(part.n_unscored),
        )
    table.add_row(
        "all",
        str(summary.n_checks),
        _fmt(summary.agreement),
        _fmt(summary.met_recall),
        f"{summary.n_planted_judged_met}/{summary.n_planted} planted",
        str(summary.n_unscored),
        style="bold",
    )
    console.print(table)
    click.echo(
        f"agreement {_fmt(summary.agreement)} ({summary.n_agree}/{summary.n_checks}) · "
        f"MET recall {_fmt(summary.met_recall)} · false-MET rate {_fmt(summary.false_met_rate)} · "
        f"valid-evidence share {_fmt(summary.valid_evidence_share)} "
        f"({summary.n_valid_evidence}/{summary.n_judged_met}) · weighted total "
        f"{_fmt(entry.scores.get('weightedTotal'))} (coverage {entry.scores['coverage']:.2f})"
    )
    if summary.disagreeing:
        detail = Table(title="disagreeing checks")
        for column in ("case", "check", "kind", "gold", "judged"):
            detail.add_column(column)
        for item in summary.disagreeing:
            detail.add_row(item.case, item.check_id, item.kind, item.gold, item.majority)
        console.print(detail)
    if summary.unscored:
        click.echo(
            f"{summary.n_unscored} UNSCORED (no verdict, not a disagreement): "
            + ", ".join(summary.unscored)
        )
    if summary.disagreement_flag:
        decided = summary.n_checks - summary.n_unscored
        click.echo(
            f"disagreement {len(summary.disagreeing)}/{decided} decided checks > 20 %: "
            "the checks above are worded too ambiguously for this judge"
        )
    click.echo(
        f"{summary.status.upper()}: "
        + ("; ".join(summary.fail_reasons) or "agrees with gold, no false MET on planted defects")
    )


@click.command("calibrate")
@click.option(
    "--judge",
    "judge_name",
    type=click.Choice(JUDGE_NAMES),
    default=None,
    help="Judge to calibrate [default: $EVALFLOW_JUDGE or heuristic].",
)
@click.option(
    "--set",
    "set_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=DEFAULT_SET,
    show_default="data/calibration",
    help="Calibration set: benchmark directories with gold/<run>.yaml.",
)
@click.option(
    "--labels",
    "labels_path",
    type=_FILE,
    default=None,
    help="Labels file for --judge labels (one file without run_key labels every case).",
)
@click.option(
    "--warehouse",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Warehouse root; repositories are built under <warehouse>/calibration/repos "
    "[default: $EVALFLOW_WAREHOUSE or data/warehouse].",
)
@click.option(
    "--ledger",
    "ledger_path",
    type=_FILE,
    default=None,
    help="Ledger JSONL file [default: <warehouse>/ledger/ledger.jsonl].",
)
@click.option("--no-ledger", is_flag=True, help="Do not append the result to the ledger.")
@click.option(
    "--rubric",
    "rubric_path",
    type=_FILE,
    default=DEFAULT_RUBRIC_PATH,
    show_default="docs/eval/rubric.yaml",
    help="Rubric file.",
)
@click.option("--json", "as_json", is_flag=True, help="Print summary and rows as JSON on stdout.")
@guarded
def calibrate(
    judge_name: str | None,
    set_dir: Path,
    labels_path: Path | None,
    warehouse: Path | None,
    ledger_path: Path | None,
    no_ledger: bool,
    rubric_path: Path,
    as_json: bool,
) -> None:
    """Calibrate a judge on the gold-labelled calibration set (k = 3, majority per check).

    Reports agreement with gold (UNSCORED counts as disagreement), MET recall, the false-MET
    rate on planted defects, the valid-evidence share and a per-kind breakdown, lists every
    disagreeing check, and appends a judge_calibration ledger entry. Exits 1 when the judge
    fails calibration: disagreement above 20 % or any false MET on a planted defect.
    """
    if no_ledger and ledger_path is not None:
        raise click.UsageError("--no-ledger and --ledger contradict each other")
    name = judge_name or settings.default_judge()
    result, entry, target = calibrate_set(
        name,
        set_dir=set_dir,
        warehouse=warehouse,
        ledger=not no_ledger,
        ledger_path=ledger_path,
        rubric_path=rubric_path,
        labels_path=labels_path,
        track=lambda cases: track(
            cases, description="calibrating", console=Console(stderr=True), transient=True
        ),
    )
    if as_json:
        payload = {
            "ledger": None if target is None else str(target),
            "summary": result.summary.model_dump(mode="json"),
            "rows": [r.model_dump(mode="json") for r in result.rows],
            "entry": entry.to_document(),
        }
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        _print(result, entry)
        if target is not None:
            click.echo(f"appended {entry.description} to {target}")
    if result.summary.status == "fail":
        raise click.exceptions.Exit(EXIT_BELOW_THRESHOLD)
