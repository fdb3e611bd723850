"""`evalflow plugin …`: PluginEval scoring of Claude Code skills (SPEC §2).

Commands: `score`, `certify`, `compare`, `init`. PATH may be one skill directory, its
SKILL.md, or a directory of skills — all scored in one process. Exit codes (fix 8): 0 ok,
1 a composite below `--threshold` (one stderr line per such skill, "composite 36.48 <
threshold 70"), 2 bad input or usage, or a requested judge that gave no valid answer (one
stderr line per such skill; the report is still printed, its judge layer null), 3 internal
failure. `--output json-lines` prints one
per-skill JSON object a line (the same object as single-skill `--output json`), so a CI
gate reads `['composite']['score']` or `['passed']` per skill in batch mode too; `--output
markdown` is `md`, `--output html` one self-contained page, `--verbose` adds detail to both
(the public tool's flags; `--concurrency N` bounds concurrent Claude calls). A directory of
skills adds each plugin's plugin-level score. `compare` takes score's `--threshold`,
`--corpus-dir`, `--runs`, `--seed` for both skills. `certify`
without a judge and a real Monte Carlo backend says on stderr that it cannot certify beyond
the measured layers.

Claude-backed layers are opt-in: `--judge anthropic` (layer 2; `--judge-model M` repeated
for several models, `--judges N` independent judges per model — two or more give kappa) and
`--mc-backend anthropic` (layer 3 with a real model instead of the offline simulation). Both
need ANTHROPIC_API_KEY (one-line error, exit 2, without it), share one response cache
(`<warehouse>/cache/anthropic`) and one spend limit (EVALFLOW_MAX_COST_USD), and print their
calls and cost on stderr. Their modules are imported only when selected, so the quick path
never loads the SDK. A caller can also pass its own `PluginJudge` list as
`obj={"plugin_judges": [...]}`; without any judge the judge layer is reported unmeasured,
and `score` at standard or deep depth says so in one stderr line.
Also runnable as `python -m evalflow.cli.plugin`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from evalflow.cli.failures import F, guarded
from evalflow.domain.plugineval.evaluate import EvalOptions
from evalflow.domain.plugineval.model import COMPAT_MODES, DEPTHS
from evalflow.domain.plugineval.report import (
    BIDI_CONTROLS,
    batch_dict,
    compare_dict,
    render_batch_html,
    render_batch_markdown,
    render_compare_html,
    render_compare_markdown,
    render_html,
    render_markdown,
    report_dict,
    terminal_safe,
    threshold_line,
)
from evalflow.errors import EXIT_BELOW_THRESHOLD, EXIT_INPUT, InputError
from evalflow.io.plugineval import (
    build_corpus,
    corpus_skill_reader,
    evaluate_path,
    load_corpus,
    write_corpus,
)


def _judges(ctx: click.Context) -> Sequence[Any]:
    obj = ctx.find_object(dict)
    return tuple(obj.get("plugin_judges", ())) if obj else ()


@dataclass
class _Llm:
    """The Claude parts chosen on the command line (empty when none is)."""

    judges: tuple[Any, ...] = ()
    mc_factory: Any | None = None
    # The Claude skill-vs-skill judge of the judged Elo (with --judge anthropic).
    pairwise: Any | None = None
    transports: list[Any] = field(default_factory=list)

    def report_usage(self) -> None:
        records = [r for t in self.transports for r in t.drain_usage()]
        if not records:
            return
        cached = sum(r.cached for r in records)
        paid = sum(r.usd for r in records if not r.cached)
        click.echo(
            f"anthropic: {len(records) - cached} API call(s), {cached} from cache, "
            f"${paid:.4f} spent",
            err=True,
        )


_CONCURRENCY_VAR = "EVALFLOW_CLAUDE_CONCURRENCY"
MAX_CONCURRENCY = 64


@contextmanager
def _concurrency_env(concurrency: int | None) -> Iterator[None]:
    """`make_plugin_judges` reads its settings from the environment, so --concurrency reaches
    it there, for the construction only (the previous value is put back)."""
    if concurrency is None:
        yield
        return
    before = os.environ.get(_CONCURRENCY_VAR)
    os.environ[_CONCURRENCY_VAR] = str(concurrency)
    try:
        yield
    finally:
        if before is None:
            del os.environ[_CONCURRENCY_VAR]
        else:
            os.environ[_CONCURRENCY_VAR] = before


def _llm(
    judge: str,
    judge_models: tuple[str, ...],
    judges_per_model: int,
    mc_backend: str,
    seed: int,
    concurrency: int | None = None,
) -> _Llm:
    """Build the selected Claude judges / Monte Carlo backend (imports only when selected)."""
    if judge != "anthropic" and (judge_models or judges_per_model != 1):
        raise InputError(
            "--judge-model and --judges need --judge anthropic", where="--judge-model/--judges"
        )
    if judges_per_model < 1:
        raise InputError("--judges must be at least 1", where="--judges")
    if concurrency is not None and not 1 <= concurrency <= MAX_CONCURRENCY:
        raise InputError(
            f"--concurrency must be between 1 and {MAX_CONCURRENCY}, got {concurrency}",
            where="--concurrency",
        )
    from evalflow.judges.registry import require_api_key

    if judge == "anthropic":
        require_api_key("--judge anthropic")
    if mc_backend == "anthropic":
        require_api_key("--mc-backend anthropic")
    if judge != "anthropic" and mc_backend != "anthropic":
        return _Llm()
    from evalflow.io import settings
    from evalflow.judges.anthropic_judge import ClaudeSettings
    from evalflow.judges.cost import Budget

    over = {} if concurrency is None else {"concurrency": concurrency}
    claude = ClaudeSettings.from_env(**over)
    warehouse = settings.warehouse()
    cache_dir = warehouse.workdir / "cache"
    budget = Budget(claude.max_cost_usd)
    out = _Llm()
    if judge == "anthropic":
        from evalflow.judges.claude_plugin import make_plugin_judges

        with _concurrency_env(concurrency):
            out.judges = tuple(
                make_plugin_judges(
                    judge_models or (claude.model,),
                    judges_per_model,
                    cache_dir=cache_dir,
                    budget=budget,
                    seed=seed,
                )
            )
        out.transports += list({id(j.transport): j.transport for j in out.judges}.values())
        from evalflow.judges.claude_skill_pairwise import ClaudeSkillPairwiseJudge

        out.pairwise = ClaudeSkillPairwiseJudge(
            ClaudeSettings.from_env(model=(judge_models or (claude.model,))[0], **over),
            cache_dir=cache_dir,
            budget=budget,
        )
        out.transports.append(out.pairwise.transport)
    if mc_backend == "anthropic":
        from evalflow.judges.claude_mc import ClaudeMcFactory

        out.mc_factory = ClaudeMcFactory(claude, cache_dir=cache_dir, budget=budget)
        out.transports.append(out.mc_factory.transport)
    return out


def _emit(text: str) -> None:
    click.echo(text, nl=not text.endswith("\n"))


def _json(obj: Any, indent: int | None = None) -> str:
    """JSON text; C1 and bidi controls from a hostile skill are \\u-escaped (json.dumps
    escapes only C0 ones), so a skill name cannot drive a terminal that shows the JSON."""
    text = json.dumps(obj, indent=indent, ensure_ascii=False)
    return "".join(
        f"\\u{ord(ch):04x}" if (0x80 <= ord(ch) <= 0x9F or ch in BIDI_CONTROLS) else ch
        for ch in text
    )


def _dump(obj: Any) -> str:
    return _json(obj, indent=2) + "\n"


def _output_format(output: str, as_json: bool) -> str:
    """The format asked for; `markdown` is the public tool's name for `md`."""
    if as_json:
        return "json"
    return "md" if output == "markdown" else output


def _eval_options(
    ctx: click.Context,
    depth: str,
    corpus_dir: Path | None,
    runs: int,
    seed: int,
    llm: _Llm,
    compat: str | None,
    pairwise_opponents: int,
) -> EvalOptions:
    """What `score`, `certify` and `compare` share: the layers, the corpus and its Elo."""
    if runs <= 0:
        raise InputError("--runs must be positive", where="--runs")
    if pairwise_opponents < 1:
        raise InputError("--pairwise-opponents must be at least 1", where="--pairwise-opponents")
    if compat is not None and corpus_dir is not None:
        # The corpus was scored by evalflow's rules: an Elo across the two is not like for like.
        raise InputError(
            "--compat public cannot be combined with --corpus-dir (the corpus was scored "
            "by evalflow's rules)",
            where="--compat",
            fix="drop --corpus-dir, or score without --compat",
        )
    corpus = None
    pairwise = None
    if corpus_dir is not None:
        corpus = load_corpus(corpus_dir)
        # With a Claude judge the deep Elo is judged; the corpus must say where opponents live.
        if depth == "deep" and llm.pairwise is not None:
            from evalflow.domain.plugineval.elo import PairwiseSetup

            reader = corpus_skill_reader(corpus_dir, corpus)
            pairwise = PairwiseSetup(llm.pairwise, reader, pairwise_opponents)
    return EvalOptions(
        depth=depth,
        judges=(*_judges(ctx), *llm.judges),
        runs=runs,
        seed=seed,
        corpus=corpus,
        mc_factory=llm.mc_factory,
        compat=compat,
        pairwise=pairwise,
    )


@dataclass(frozen=True)
class _ScoreArgs:
    """The options `--compat` and `_with_score_options` give score, certify and compare."""

    compat: str | None
    threshold: float | None
    corpus_dir: Path | None
    runs: int
    seed: int
    pairwise_opponents: int
    output: str
    as_json: bool
    verbose: bool
    judge: str
    judge_models: tuple[str, ...]
    judges_per_model: int
    mc_backend: str
    concurrency: int | None

    @property
    def fmt(self) -> str:
        return _output_format(self.output, self.as_json)

    def llm(self) -> _Llm:
        return _llm(
            self.judge,
            self.judge_models,
            self.judges_per_model,
            self.mc_backend,
            self.seed,
            self.concurrency,
        )

    def eval_options(self, ctx: click.Context, depth: str, llm: _Llm) -> EvalOptions:
        return _eval_options(
            ctx,
            depth,
            self.corpus_dir,
            self.runs,
            self.seed,
            llm,
            self.compat,
            self.pairwise_opponents,
        )


def _run_score(
    ctx: click.Context, path: Path, depth: str, args: _ScoreArgs, *, certify: bool
) -> None:
    output = args.fmt
    llm = args.llm()
    options = args.eval_options(ctx, depth, llm)
    threshold, verbose = args.threshold, args.verbose
    try:
        evaluations, is_batch = evaluate_path(path, options)
    finally:
        llm.report_usage()
    reports = [report_dict(ev, certify=certify, threshold=threshold) for ev in evaluations]
    if output == "json-lines":
        _emit("".join(_json(r) + "\n" for r in reports))
    elif is_batch:
        batch = batch_dict(reports, threshold)
        _emit_report(output, batch, render_batch_html, render_batch_markdown, verbose)
    else:
        _emit_report(output, reports[0], render_html, render_markdown, verbose)
    if not certify and any(_no_judge(r) for r in reports):
        # The default depth includes the judge layer: never leave it null without saying so.
        click.echo(_NO_JUDGE_LINE, err=True)
    if certify:
        for r in reports:
            if not r["certification"]["complete"]:
                prefix = f"{r['skill']['path']}: " if is_batch else ""
                click.echo(terminal_safe(prefix + r["certification"]["statement"]), err=True)
    failed = [r for r in reports if r["passed"] is False]
    for r in failed:
        prefix = f"{r['skill']['path']}: " if is_batch else ""
        click.echo(terminal_safe(prefix + threshold_line(r)), err=True)
    judge_failed = [r for r in reports if _judges_all_invalid(r)]
    for r in judge_failed:
        prefix = f"{r['skill']['path']}: " if is_batch else ""
        click.echo(terminal_safe(prefix + _judge_failed_line(r)), err=True)
    # A requested judge that gave nothing usable is a failed run, as when the judge's API is
    # unusable (exit 2), never a quiet exit 0 with the layer null.
    if judge_failed:
        ctx.exit(EXIT_INPUT)
    if failed:
        ctx.exit(EXIT_BELOW_THRESHOLD)


def _emit_report(
    fmt: str,
    report: dict[str, Any],
    html: Callable[..., str],
    markdown: Callable[..., str],
    verbose: bool,
) -> None:
    """One report on stdout: JSON, HTML or (any other format) Markdown."""
    if fmt == "json":
        _emit(_dump(report))
    elif fmt == "html":
        _emit(html(report, verbose=verbose))
    else:
        _emit(markdown(report, verbose=verbose))


_NO_JUDGE_LINE = (
    "judge layer unmeasured: no LLM judge configured (--judge anthropic measures it; "
    "--depth quick is static only)"
)


def _no_judge(report: dict[str, Any]) -> bool:
    judge = next((x for x in report["layers"] if x["name"] == "judge"), None)
    return judge is not None and judge["judges_requested"] == 0


def _judges_all_invalid(report: dict[str, Any]) -> bool:
    judge = next((x for x in report["layers"] if x["name"] == "judge"), None)
    return judge is not None and judge["judges_requested"] > 0 and not judge["measured"]


def _judge_failed_line(report: dict[str, Any]) -> str:
    judge = next(x for x in report["layers"] if x["name"] == "judge")
    return (
        f"judge layer unmeasured: none of the {judge['judges_requested']} requested judge(s) "
        "gave a valid answer (JUDGE_INVALID_OUTPUT / JUDGE_FAILED in the report's findings) "
        "— rerun, or pick another --judge-model"
    )


def _output_options(choices: tuple[str, ...]) -> list[Any]:
    return [
        click.option(
            "--output",
            type=click.Choice(choices),
            default="md",
            show_default=True,
            help="Report format on stdout (markdown = md; html = a self-contained page"
            + (
                "; json-lines: one per-skill JSON object a line)."
                if "json-lines" in choices
                else ")."
            ),
        ),
        click.option("--json", "as_json", is_flag=True, help="Same as --output json."),
        click.option(
            "--verbose",
            "-v",
            is_flag=True,
            help="Markdown/HTML also show the static sub-scores, each anti-pattern's evidence "
            "and the judge's labelled prompts with every answer (JSON always has them).",
        ),
    ]


def _with_output(fn: F, choices: tuple[str, ...] = ("md", "markdown", "json", "html")) -> F:
    for option in reversed(_output_options(choices)):
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
    click.option(
        "--pairwise-opponents",
        type=int,
        default=8,
        show_default=True,
        help="Corpus skills the judged Elo plays (deep, --judge anthropic, --corpus-dir): "
        "a seeded sample, each match judged in both orders.",
    ),
]


def _with_score_options(fn: F) -> F:
    for option in reversed(_score_options):
        fn = option(fn)
    return _with_llm(_with_output(fn, ("md", "markdown", "json", "json-lines", "html")))


_llm_options = [
    click.option(
        "--judge",
        type=click.Choice(["none", "anthropic"]),
        default="none",
        show_default=True,
        help="LLM judge for layer 2 (standard/deep): anthropic = Claude (ANTHROPIC_API_KEY).",
    ),
    click.option(
        "--judge-model",
        "judge_models",
        multiple=True,
        help="Claude model of a judge; repeat for several judges (kappa). "
        "Default: $EVALFLOW_CLAUDE_MODEL or claude-sonnet-5-5.",
    ),
    click.option(
        "--judges",
        "judges_per_model",
        type=int,
        default=1,
        show_default=True,
        help="Independent judges per model (distinct calls); 2 or more give kappa.",
    ),
    click.option(
        "--mc-backend",
        type=click.Choice(["offline", "anthropic"]),
        default="offline",
        show_default=True,
        help="Monte Carlo layer (deep): offline = simulated router; anthropic = a real "
        "Claude model routes from the skill catalogue and answers (ANTHROPIC_API_KEY).",
    ),
    click.option(
        "--concurrency",
        type=int,
        default=None,
        help=f"Max concurrent LLM calls (1–{MAX_CONCURRENCY}); default ${_CONCURRENCY_VAR} or 4.",
    ),
]


def _with_llm(fn: F) -> F:
    for option in reversed(_llm_options):
        fn = option(fn)
    return fn


_compat_option = click.option(
    "--compat",
    type=click.Choice(COMPAT_MODES),
    default=None,
    help="public = the static layer by the public PluginEval tool's rules (its line count, "
    "fence counting, link checks), to compare with published scores; see docs/plugineval.md.",
)


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
    help="quick = static; standard = + LLM judge; deep = + Monte Carlo (simulated unless "
    "--mc-backend anthropic) + Elo.",
)
@_compat_option
@_with_score_options
@click.pass_context
@guarded
def score(ctx: click.Context, path: Path, depth: str, **options: Any) -> None:
    """Score PATH: a skill directory, its SKILL.md, a plugin or a directory of skills (a
    directory adds the plugin-level score of each plugin in it)."""
    _run_score(ctx, path, depth, _ScoreArgs(**options), certify=False)


@plugin.command("certify")
@click.argument("path", type=click.Path(path_type=Path))
@_compat_option
@_with_score_options
@click.pass_context
@guarded
def certify(ctx: click.Context, path: Path, **options: Any) -> None:
    """Full certification of PATH: every layer at deep depth, Elo (with --corpus-dir), badge."""
    _run_score(ctx, path, "deep", _ScoreArgs(**options), certify=True)


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
@_compat_option
@_with_score_options
@click.pass_context
@guarded
def compare(ctx: click.Context, a: Path, b: Path, depth: str, **options: Any) -> None:
    """Head-to-head per-dimension table of two skills (B − A). --threshold, --corpus-dir and
    --runs mean what they mean for `score`, for both skills: exit 1 when either composite is
    below N, Elo against the corpus at deep depth, Monte Carlo runs at deep depth."""
    args = _ScoreArgs(**options)
    fmt = args.fmt
    if fmt == "json-lines":
        raise InputError(
            "--output json-lines is for score and certify", where="--output", fix="use json"
        )
    llm = args.llm()
    eval_options = args.eval_options(ctx, depth, llm)
    threshold, verbose = args.threshold, args.verbose
    reports = []
    try:
        for label, path in (("A", a), ("B", b)):
            evaluations, is_batch = evaluate_path(path, eval_options)
            if is_batch:
                raise InputError(
                    f"{label} is a directory of {len(evaluations)} skills",
                    where=str(path),
                    fix="compare takes two single skills (a skill directory or its SKILL.md)",
                )
            reports.append(report_dict(evaluations[0], threshold=threshold))
    finally:
        llm.report_usage()
    cmp = compare_dict(reports[0], reports[1])
    _emit_report(fmt, cmp, render_compare_html, render_compare_markdown, verbose)
    if any(_no_judge(r) for r in reports):
        click.echo(_NO_JUDGE_LINE, err=True)
    judge_failed = [
        (label, r) for label, r in zip("AB", reports, strict=True) if _judges_all_invalid(r)
    ]
    for label, r in judge_failed:
        click.echo(f"{label}: {_judge_failed_line(r)}", err=True)
    below = [(label, r) for label, r in zip("AB", reports, strict=True) if r["passed"] is False]
    for label, r in below:
        click.echo(f"{label}: {threshold_line(r)}", err=True)
    if judge_failed:
        ctx.exit(EXIT_INPUT)
    if below:
        ctx.exit(EXIT_BELOW_THRESHOLD)


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
    index = build_corpus(plugins_dir, corpus_dir)
    target = write_corpus(corpus_dir, index)
    click.echo(f"indexed {len(index.skills)} skill(s) into {target.as_posix()}")


def main(argv: list[str] | None = None) -> None:
    """Stand-alone entry point (`python -m evalflow.cli.plugin`)."""
    plugin.main(args=argv, prog_name="evalflow plugin")


if __name__ == "__main__":
    main()
