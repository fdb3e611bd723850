"""`evalflow history RUN_KEY`, `evalflow catalog` and `evalflow migrate`: a run's evaluations
over time, the DuckDB catalog file rewritten for where the warehouse is now, and the parts an
older evalflow wrote rewritten in the current table types.

All are light commands: they read the warehouse through DuckDB or pyarrow and never import
Dagster.
"""

from __future__ import annotations

import click

from evalflow.cli.output import emit_json, emit_table, records
from evalflow.errors import InputError
from evalflow.io import settings
from evalflow.storage.catalog import catalog_path, query, refresh_catalog
from evalflow.storage.history import HISTORY_SQL, HISTORY_TABLE

_warehouse_option = click.option(
    "--warehouse",
    default=None,
    help="Warehouse root (path or URI). Default: $EVALFLOW_WAREHOUSE or data/warehouse.",
)


def _drift_note(cause: str | None, judge_drift: bool | None) -> str | None:
    if cause is None:
        return None
    return "judge drift" if judge_drift else f"changed: {cause}"


@click.command()
@click.argument("run_key")
@_warehouse_option
@click.option("--json", "as_json", is_flag=True, help="JSON output (every column).")
def history(run_key: str, warehouse: str | None, as_json: bool) -> None:
    """Every evaluation of a run: Final, judge, inputs, and why the Final changed."""
    wh = settings.warehouse(warehouse)
    rows: list[tuple] = []
    columns: list[str] = []
    if HISTORY_TABLE in wh.tables():
        columns, rows = query(wh, HISTORY_SQL, {"run_key": run_key})
    if not rows:
        raise InputError(
            f"no evaluation of run {run_key!r} in the history",
            where=wh.root,
            fix='check the run key (evalflow query "SELECT DISTINCT run_key FROM '
            'evaluation_history"), or evaluate it: evalflow materialize',
        )
    if as_json:
        emit_json(records(columns, rows))
        return
    # The terminal table: short names, and the change spelled out; --json has every column.
    shown = {
        "evaluation_number": "#",
        "evaluated_at": "evaluated_at",
        "final": "final",
        "adjusted_final": "adjusted",
        "complete": "complete",
        "judge_id": "judge",
        "judge_model": "model",
        "judge_prompt_version": "prompt",
        "evalflow_version": "evalflow",
        "head": "head",
        "inputs_fingerprint": "inputs",
        "cost_usd": "cost_usd",
        "final_change": "change",
    }
    table = [
        (*(entry[c] for c in shown), _drift_note(entry["cause"], entry["judge_drift"]))
        for entry in (dict(zip(columns, row, strict=True)) for row in rows)
    ]
    emit_table([*shown.values(), "drift"], table, title=f"Evaluations of {run_key}")


@click.command()
@_warehouse_option
def catalog(warehouse: str | None) -> None:
    """Rewrite the DuckDB catalog file (evalflow.duckdb) for the warehouse's current place."""
    wh = settings.warehouse(warehouse)
    tables = refresh_catalog(wh)
    click.echo(f"{catalog_path(wh)}: {len(tables)} table view(s)")


@click.command()
@_warehouse_option
def migrate(warehouse: str | None) -> None:
    """Rewrite the parts an older evalflow wrote in the current table types, then the catalog.

    evalflow itself reads old parts as they are (upgrading them as it reads); SQL clients
    reading the Parquet files or the catalog directly need this once after an upgrade
    (docs/tables.md, "Migration"). Rows and values stay the same; running it again changes
    nothing."""
    from evalflow.storage.migration import migrate as rewrite

    wh = settings.warehouse(warehouse)
    rewritten = rewrite(wh)
    refresh_catalog(wh)
    if not rewritten:
        click.echo("every part is in the current table types: nothing to rewrite")
        return
    listed = ", ".join(f"{table} ({n})" for table, n in sorted(rewritten.items()))
    click.echo(f"rewrote {sum(rewritten.values())} part(s) in the current types: {listed}")
