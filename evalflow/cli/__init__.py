"""The `evalflow` command: one click group whose commands load on first use.

Owns the command registry (name → module, one-line summary) and the entry point. Every command
reports failures as one line (what, where, how to fix) on stderr with the exit codes of
`evalflow.errors`; set EVALFLOW_DEBUG=1 to see a traceback instead.
"""

from __future__ import annotations

import importlib
import sys

import click

from evalflow import __version__
from evalflow.cli.failures import exit_code_for
from evalflow.io import settings

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
    "history": "evalflow.cli.history:history",
    "catalog": "evalflow.cli.history:catalog",
    "migrate": "evalflow.cli.history:migrate",
    "cache": "evalflow.cli.cache:cache_group",
}

# The first sentence of each command's help, so `evalflow --help` lists the commands without
# importing them (importing all of them cost seconds: Dagster, pandas, DuckDB). A command
# missing here is imported to be listed; evalflow_tests/cli/test_cli_light.py checks that each
# summary matches its command's own help.
SUMMARIES = {
    "register": "Register run manifests as `evaluations` partitions "
    "(key <benchmark>.<framework>.<run>).",
    "materialize": "Evaluate registered runs through Dagster, then rank them and refresh the "
    "DuckDB catalog.",
    "score": "Score one framework run: print its roll-up and write its Markdown report.",
    "demo": "Score the bundled offline demo and print the suite and per-PRD leaderboards.",
    "query": "Run SQL against the warehouse's DuckDB views (pretty table by default).",
    "leaderboard": "Ranked runs: Final (CI), Adjusted Final, band, Bradley–Terry rating ± CI, "
    "cost.",
    "rag-eval": "Gate a retriever on the deterministic synthetic corpus (SPEC §4).",
    "rubric": "River Review rubric files (docs/eval/rubric.yaml).",
    "ledger": "The evaluation ledger: one River Review entry per evaluation, keyed "
    "`<kind>:<name>`.",
    "review-eval": "Score a reviewer on River Review fixtures and append the result to the ledger.",
    "plugin": "PluginEval: score Claude Code skills and plugins (static, judge, Monte Carlo, Elo).",
    "baseline": "Validate, render and freeze a benchmark's AC baseline (`_ac-baseline.yaml`).",
    "init": "Import a framework run's PRD, draft its baseline and write its run manifest.",
    "labels": "Labels files for the labels judge (human or external verdicts).",
    "schemas": "Generated files: schemas/*.schema.json and docs/tables.md.",
    "calibrate": "Calibrate a judge on the gold-labelled calibration set (k = 3, majority per "
    "check).",
    "probe": "Help writing the probes of a baseline's checks.",
    "side-metrics": "Adjudication of the side metrics E and S.",
    "history": "Every evaluation of a run: Final, judge, inputs, and why the Final changed.",
    "catalog": "Rewrite the DuckDB catalog file (evalflow.duckdb) for the warehouse's current "
    "place.",
    "cache": "The judges' response caches: stats, prune, clear.",
    "migrate": "Rewrite the parts an older evalflow wrote in the current table types, then the "
    "catalog.",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name].split(":")
            return getattr(importlib.import_module(module), attribute)
        return super().get_command(ctx, cmd_name)

    def _listed(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """What the help listing needs of a command: a stand-in carrying its summary."""
        if cmd_name in SUMMARIES:
            return click.Command(cmd_name, help=SUMMARIES[cmd_name])
        return self.get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click.Group.format_commands with `_listed` in place of `get_command`.
        listed = [(name, self._listed(ctx, name)) for name in self.list_commands(ctx)]
        commands = [(name, cmd) for name, cmd in listed if cmd is not None and not cmd.hidden]
        if not commands:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in commands)
        with formatter.section("Commands"):
            formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in commands])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evalflow")
def cli() -> None:
    """Score spec-driven development frameworks against a PRD's frozen acceptance checks."""


def main(argv: list[str] | None = None) -> None:
    """Console entry point: runs the group and maps every failure to one line + exit code."""
    try:
        settings.check_environment()
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
