"""Terminal output shared by the commands: tables (rich), JSON and CSV, progress on stderr.

Tables fit the terminal by wrapping; off a terminal they keep their natural width. The
leaderboards are compact by default (`emit_table(compact=True)`: borderless, narrow cells, the long
texts as notes below the table wrapped to the width), so they fit 100 columns on a terminal
and off it alike; `--wide` prints every column.

Scores in tables and Markdown are printed with the one rounding rule of every surface,
half up from the exact value (`evalflow.domain.rounding.format_half_up`): a stored 5/8 prints
0.63 here as in the report, never `f"{0.625:.2f}"`'s half-even 0.62. `evalflow query` rounds
only its score columns (`SCORE_COLUMNS`); any other number prints at full precision (a cost
of 1e-4 is not "0.00"). JSON and CSV carry the stored values unchanged. A cell is plain text,
never rich markup: a stored "[x] done" prints as such.
"""

from __future__ import annotations

import csv
import io
import json
import math
import textwrap
from collections.abc import Sequence
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text


def _plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        return _plain(value.item())
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def records(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    return [{c: _plain(v) for c, v in zip(columns, row, strict=True)} for row in rows]


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def emit_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([[_plain(v) for v in row] for row in rows])
    click.echo(buffer.getvalue(), nl=False)


# The reported scores (SPEC §1 Roll-up) and their bounds: rounded half up to 2 decimals
# wherever a person reads them. `*_value` columns hold the exact value and print in full.
SCORE_COLUMNS = frozenset(
    {
        "ac_score", "story_score", "final", "adjusted_final", "i_score", "t_score",
        "final_lower", "final_upper", "final_ci_low", "final_ci_high", "final_mean",
        "final_majority", "mean_final", "mean_final_ci_low", "mean_final_ci_high",
        "mean_effective_final", "mean_effective_ci_low", "mean_effective_ci_high",
    }
)  # fmt: skip


def _cell(value: Any, rounded: bool = True) -> str:
    value = _plain(value)
    if value is None:
        return "—"
    if isinstance(value, float) and not rounded:
        return repr(value)
    if isinstance(value, float):
        # Imported on first use: the roll-up module brings numpy and pandas, which a table of
        # strings and integers (`evalflow query "SHOW TABLES"`) does not need.
        from evalflow.domain.rounding import format_half_up

        return format_half_up(value) if abs(value) < 1e6 else f"{value:.4g}"
    return str(value)


def emit_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    title: str | None = None,
    console: Console | None = None,
    rounded: frozenset[str] | None = None,
    compact: bool = False,
) -> None:
    """A table that fits a terminal by wrapping cells (headers too), never by eliding them.
    `rounded`: the columns whose numbers are rounded (default: every column).

    Off a terminal (a pipe, a file, a CI log) there is no width to fit, so the table is printed
    at its natural width: rich would otherwise squeeze it to an assumed 80 columns and cut
    every header to "benc…". `--csv`/`--json` are the formats meant for pipes.

    `compact`: no outer or vertical borders, one space of padding shared by neighbouring
    cells (the box-drawn table spends 3 columns per cell on its rules and padding).
    """
    style = {"box": box.SIMPLE_HEAD, "pad_edge": False, "collapse_padding": True,
             "show_edge": False, "title_justify": "left"} if compact else {}  # fmt: skip
    table = Table(title=title, show_lines=False, header_style="bold", **style)
    for column in columns:
        table.add_column(column, overflow="fold")
    keep = [rounded is None or c in rounded for c in columns]
    for row in rows:
        # Text, not str: rich would read "[x]" in a cell as markup and drop it.
        table.add_row(*(Text(_cell(v, k)) for v, k in zip(row, keep, strict=True)))
    console = console or Console()
    if compact:
        console.print()  # borderless tables need the air between them
    if not console.is_terminal:
        natural = console.measure(table, options=console.options.update_width(10**6)).maximum
        console = Console(file=console.file, width=max(natural, console.width))
    console.print(table)


def emit_notes(lines: Sequence[str], console: Console | None = None) -> None:
    """The notes under a compact table, each wrapped to the console's width (a terminal's,
    else COLUMNS, else 80); a path or other unbreakable word is never split."""
    width = (console or Console()).width
    for line in lines:
        wrapped = textwrap.wrap(
            line, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
        )
        click.echo("\n".join(wrapped))


def emit_markdown(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None
) -> None:
    lines = [f"## {title}", ""] if title else []
    lines.append("| " + " | ".join(columns) + " |")
    lines.append("|" + "---|" * len(columns))
    for row in rows:
        lines.append("| " + " | ".join(_cell(v).replace("|", "\\|") for v in row) + " |")
    click.echo("\n".join(lines))


def stderr() -> Console:
    """The console for progress and notes: off a terminal a line is never wrapped (a CI log
    or a pipe has no width; a wrapped error line breaks grep)."""
    console = Console(stderr=True)
    return console if console.is_terminal else Console(stderr=True, soft_wrap=True)
