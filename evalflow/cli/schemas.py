"""`evalflow schemas write|check`: the JSON Schemas and table docs generated from the models."""

from __future__ import annotations

from pathlib import Path

import click

from evalflow.errors import InputError
from evalflow.io.generated import PROJECT_ROOT, stale_files, write_generated

root_option = click.option(
    "--root",
    type=click.Path(path_type=Path, file_okay=False),
    default=PROJECT_ROOT,
    show_default="the evalflow checkout",
    help="Project root to write into.",
)


@click.group("schemas")
def schemas_group() -> None:
    """Generated files: schemas/*.schema.json and docs/tables.md."""


@schemas_group.command("write")
@root_option
def write(root: Path) -> None:
    """Regenerate every schema file and docs/tables.md from the models."""
    for path in write_generated(root):
        click.echo(f"wrote {path}")


@schemas_group.command("check")
@root_option
def check(root: Path) -> None:
    """Exit 2 when a generated file is missing or stale."""
    stale = stale_files(root)
    if stale:
        raise InputError(
            f"{len(stale)} generated file(s) are stale: {', '.join(stale)}",
            fix="run `evalflow schemas write`",
        )
    click.echo("all generated files are current")
