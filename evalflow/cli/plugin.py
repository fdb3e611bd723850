"""`evalflow plugin …`: PluginEval scoring of Claude Code skills (SPEC §2).

Commands: `score`, `certify`, `compare`, `init`. PATH may be one skill directory, its
SKILL.md, or a directory of skills — all scored in one process. Exit codes (fix 8): 0 ok,
1 a composite below `--threshold`, 2 bad input or usage, 3 internal failure.

LLM judges are not built in. A caller that has one (e.g. the Claude backend) passes a
`PluginJudge` list as `obj={"plugin_judges": [...]}` when invoking the group; without one the
judge layer is reported unmeasured. Also runnable as `python -m evalflow.cli.plugin`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from evalflow.cli.failures import F, guarded
from evalflow.domain.plugineval.evaluate import EvalOptions
from evalflow.domain.plugineval.model import DEPTHS
from evalflow.domain.plugineval.report import (
    batch_dict,
    compare_dict,
    render_batch_markdown,
    render_compare_markdown,
    render_markdown,
    report_dict,
)
from evalflow.errors import EXIT_BELOW_THRESHOLD, InputError
from evalflow.plugineval_io import build_corpus, evaluate_path, load_corpus, write_corpus


def _judges(ctx: click.Context) -> Sequence[Any]:
    obj = ctx.find_object(dict)
    return tuple(obj.get("plugin_judges", ())) if obj else ()


def _emit(text: str) -> None:
    click.echo(text, nl=not text.endswith("\n"))


def _dump(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def _output_format(output: str, as_json: bool) -> str:
    return "json" if as_json else output


def _run_score(
    ctx: click.Context,
    path: Path,
    depth: str,
    output: str,
    threshold: float | None,
    corpus_dir: Path | None,
    runs: int,
    seed: int,
    certify: bool,
) -> None:
    if runs <= 0:
        raise InputError("--runs must be positive", where="--runs")
    corpus = load_corpus(corpus_dir) if corpus_dir is not None else None
    options = EvalOptions(depth=depth, judges=_judges(ctx), runs=runs, seed=seed, corpus=corpus)
    evaluations, is_batch = evaluate_path(path, options)
    reports = [report_dict(ev, certify=certify) for ev in evaluations]
    if is_batch:
        batch = batch_dict(reports, threshold)
        _emit(_dump(batch) if output == "json" else render_batch_markdown(batch))
    else:
        _emit(_dump(reports[0]) if output == "json" else render_markdown(reports[0]))
    if threshold is not None and any(
        r["composite"]["score"] is None or r["composite"]["score"] < threshold for r in reports
    ):
        ctx.exit(EXIT_BELOW_THRESHOLD)


_output_options = [
    click.option(
        "--output",
        type=click.Choice(["md", "json"]),
        default="md",
        show_default=True,
        help="Report format on stdout.",
    ),
    click.option("--json", "as_json", is_flag=True, help="Same as --output json."),
]


def _with_output(fn: F) -> F:
    for option in reversed(_output_options):
        fn = option(fn)
    return fn


_score_options = [
    click.option(
        "--threshold",
        type=float,
        default=None,
        help="Exit 1 if any composite (0–100) is below N.",
    ),
    click.option(
        "--corpus-dir",
        type=click.Path(path_type=Path, file_okay=False),
        default=None,
        help="Corpus built by `plugin init`; enables Elo at deep depth.",
    ),
    click.option(
        "--runs", type=int, default=50, show_default=True, help="Monte Carlo runs (deep)."
    ),
    click.option("--seed", type=int, default=0, show_default=True, help="Seed for every draw."),
]


def _with_score_options(fn: F) -> F:
    for option in reversed(_score_options):
        fn = option(fn)
    return _with_output(fn)


@click.group("plugin")
def plugin() -> None:
    """PluginEval: score Claude Code skills and plugins (static, judge, Monte Carlo, Elo)."""


@plugin.command("score")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--depth",
    type=click.Choice(DEPTHS),
    default="standard",
    show_default=True,
    help="quick = static; standard = + LLM judge; deep = + Monte Carlo (simulated) + Elo.",
)
@_with_score_options
@click.pass_context
@guarded
def score(
    ctx: click.Context,
    path: Path,
    depth: str,
    threshold: float | None,
    corpus_dir: Path | None,
    runs: int,
    seed: int,
    output: str,
    as_json: bool,
) -> None:
    """Score PATH: a skill directory, its SKILL.md, or a directory of skills."""
    _run_score(
        ctx,
        path,
        depth,
        _output_format(output, as_json),
        threshold,
        corpus_dir,
        runs,
        seed,
        certify=False,
    )


@plugin.command("certify")
@click.argument("path", type=click.Path(path_type=Path))
@_with_score_options
@click.pass_context
@guarded
def certify(
    ctx: click.Context,
    path: Path,
    threshold: float | None,
    corpus_dir: Path | None,
    runs: int,
    seed: int,
    output: str,
    as_json: bool,
) -> None:
    """Full certification of PATH: every layer at deep depth, Elo (with --corpus-dir), badge."""
    _run_score(
        ctx,
        path,
        "deep",
        _output_format(output, as_json),
        threshold,
        corpus_dir,
        runs,
        seed,
        certify=True,
    )


@plugin.command("compare")
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@click.option(
    "--depth",
    type=click.Choice(DEPTHS),
    default="quick",
    show_default=True,
    help="Depth both skills are scored at.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for every draw.")
@_with_output
@click.pass_context
@guarded
def compare(
    ctx: click.Context, a: Path, b: Path, depth: str, seed: int, output: str, as_json: bool
) -> None:
    """Head-to-head per-dimension table of two skills (B − A)."""
    options = EvalOptions(depth=depth, judges=_judges(ctx), seed=seed)
    reports = []
    for label, path in (("A", a), ("B", b)):
        evaluations, is_batch = evaluate_path(path, options)
        if is_batch:
            raise InputError(
                f"{label} is a directory of {len(evaluations)} skills",
                where=str(path),
                fix="compare takes two single skills (a skill directory or its SKILL.md)",
            )
        reports.append(report_dict(evaluations[0]))
    cmp = compare_dict(reports[0], reports[1])
    fmt = _output_format(output, as_json)
    _emit(_dump(cmp) if fmt == "json" else render_compare_markdown(cmp))


@plugin.command("init")
@click.argument("plugins_dir", type=click.Path(path_type=Path))
@click.option(
    "--corpus-dir",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Where to write index.json.",
)
@guarded
def init(plugins_dir: Path, corpus_dir: Path) -> None:
    """Build the gold-corpus index (static scores, sha256) from every skill in PLUGINS_DIR."""
    index = build_corpus(plugins_dir)
    target = write_corpus(corpus_dir, index)
    click.echo(f"indexed {len(index.skills)} skill(s) into {target.as_posix()}")


def main(argv: list[str] | None = None) -> None:
    """Stand-alone entry point (`python -m evalflow.cli.plugin`)."""
    plugin.main(args=argv, prog_name="evalflow plugin")


if __name__ == "__main__":
    main()
