"""The `evalflow` command: one click group, one module per command family.

Every command reports failures as one line (what, where, how to fix) on stderr with the exit
codes of `evalflow.errors`; set EVALFLOW_DEBUG=1 to see a traceback instead.
"""

from __future__ import annotations

import importlib
import sys

import click

from evalflow import __version__
from evalflow.cli.failures import exit_code_for

# Command name → "module:attribute". Modules load on first use, so a light command never pays
# for Dagster's import time.
COMMANDS = {
    "register": "evalflow.cli.runs:register",
    "materialize": "evalflow.cli.runs:materialize",
    "score": "evalflow.cli.runs:score",
    "demo": "evalflow.cli.runs:demo",
    "query": "evalflow.cli.runs:query",
    "leaderboard": "evalflow.cli.runs:leaderboard",
    "rag-eval": "evalflow.cli.rag_eval:rag_eval",
    "rubric": "evalflow.cli.review:rubric_group",
    "ledger": "evalflow.cli.review:ledger_group",
    "review-eval": "evalflow.cli.review:review_eval_command",
    "plugin": "evalflow.cli.plugin:plugin",
    "baseline": "evalflow.cli.baseline:baseline_group",
    "init": "evalflow.cli.init:init",
    "labels": "evalflow.cli.labels:labels_group",
    "schemas": "evalflow.cli.schemas:schemas_group",
    "calibrate": "evalflow.cli.calibrate:calibrate",
    "probe": "evalflow.cli.probe:probe_group",
    "side-metrics": "evalflow.cli.side_metrics:side_metrics_group",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name].split(":")
            return getattr(importlib.import_module(module), attribute)
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evalflow")
def cli() -> None:
    """Score spec-driven development frameworks against a PRD's frozen acceptance checks."""


def main(argv: list[str] | None = None) -> None:
    """Console entry point: runs the group and maps every failure to one line + exit code."""
    try:
        rc = cli.main(args=argv, prog_name="evalflow", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except Exception as exc:
        sys.exit(exit_code_for(exc))
    sys.exit(rc if isinstance(rc, int) else 0)
