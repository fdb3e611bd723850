"""`evalflow side-metrics template`: the E/S candidates of a scored run, as a labels file to
adjudicate (format: docs/configuration.md, "Side-metric labels").

Offline, the lexicon only proposes E/S candidates (stored with status `candidate`); this
command writes each of them with its proposal as a comment and `TODO` where the human's
word goes. `TODO` is no valid value, so a file saved with one left over fails to load with
the field named: nothing is adjudicated by forgetting to edit it.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import pandas as pd

from evalflow.cli.runs import warehouse_option
from evalflow.errors import InputError
from evalflow.io import settings
from evalflow.io.inputs import load_manifest
from evalflow.storage.warehouse import Warehouse

TODO = "TODO"
_TABLES = ("run_manifest", "elicitation_category", "elicitation_addition", "scope_finding")


def _q(value: object) -> str:
    """A YAML scalar: JSON strings are valid YAML flow scalars."""
    return json.dumps("" if value is None else str(value), ensure_ascii=False)


def _comment(text: object) -> str:
    return " ".join(str(text).split())


def template_text(
    run_key: str,
    framework: str,
    categories: pd.DataFrame,
    additions: pd.DataFrame,
    findings: pd.DataFrame,
) -> str:
    """The labels file for one run's candidates (deterministic: table order)."""
    lines = [
        f"# Adjudication of {run_key}: replace every {TODO} (see docs/configuration.md,",
        "# 'Side-metric labels'). Comments carry the lexicon's proposal; it is not evidence.",
        f"# Save as <benchmark>/elicitation/{framework}.yaml.",
        f"framework: {_q(framework)}",
        "categories:",
    ]
    open_categories = categories[categories["status"] == "candidate"]
    for row in open_categories.itertuples(index=False):
        lines.append(f"  # {row.category}: {_comment(row.rationale)}")
        lines.append(
            f"  {row.category_id}: {{status: {TODO}, ref: {_q(row.ref)}, rationale: {_q('')}}}"
        )
    if open_categories.empty:
        lines[-1] = "categories: {}"
    lines.append("additions:")
    open_additions = additions[additions["verdict"] == "candidate"]
    for row in open_additions.itertuples(index=False):
        lines.append(f"  # {row.ref}: {_comment(row.text)}")
        lines.append(f"  #   {_comment(row.rationale)}")
        lines.append(f"  - {{item: {_q(row.item_id)}, verdict: {TODO}, rationale: {_q('')}}}")
    if open_additions.empty:
        lines[-1] = "additions: []"
    lines += [
        "scope:",
        "  # pass / partial / fail, or null: the worst confirmed finding once none is left open",
        "  verdict: null",
        "  findings:",
    ]
    open_findings = findings[findings["status"] == "candidate"]
    for row in open_findings.itertuples(index=False):
        lines.append(f"    # {row.kind} ({row.effect} if confirmed): {_comment(row.description)}")
        lines.append(
            f"    - {{ref: {_q(row.ref)}, kind: {row.kind}, status: {TODO}, rationale: {_q('')}}}"
        )
    if open_findings.empty:
        lines[-1] = "  findings: []"
    return "\n".join(lines) + "\n"


def _run_key(run_or_manifest: str) -> str:
    path = Path(run_or_manifest)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        return load_manifest(path).manifest.run_key
    return run_or_manifest


def _read(warehouse: Warehouse, table: str, run_key: str) -> pd.DataFrame:
    if not warehouse.has(table, run_key):
        raise InputError(
            f"run {run_key!r} has no {table} table",
            where=warehouse.root,
            fix="score it first: evalflow score MANIFEST (or evalflow materialize)",
        )
    # A run keeps one result per judge; the candidates are read from one of them: the
    # default judge's when it scored the run, else the first judge's by name.
    judges = warehouse.judges("run_manifest", run_key)
    judge = settings.default_judge() if settings.default_judge() in judges else judges[0]
    return warehouse.read(table, run_key, judge)


@click.group(name="side-metrics")
def side_metrics_group() -> None:
    """Adjudication of the side metrics E and S."""


@side_metrics_group.command(name="template")
@click.argument("run_or_manifest")
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Where to write the labels file.",
)
@warehouse_option
def template(run_or_manifest: str, out: Path, warehouse: str | None) -> None:
    """Write the E/S candidates of a scored run (run key or manifest) as a labels file."""
    run_key = _run_key(run_or_manifest)
    wh = settings.warehouse(warehouse)
    frames = {table: _read(wh, table, run_key) for table in _TABLES}
    framework = str(frames["run_manifest"]["framework"].iloc[0])
    text = template_text(
        run_key,
        framework,
        frames["elicitation_category"],
        frames["elicitation_addition"],
        frames["scope_finding"],
    )
    out.write_text(text, encoding="utf-8")
    n = text.count(f": {TODO}")
    click.echo(f"wrote {out}: {n} candidate(s) of {run_key} to adjudicate")
