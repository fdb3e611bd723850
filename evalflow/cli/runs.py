"""Commands that evaluate framework runs: register, materialize, score, demo, query, leaderboard."""

from __future__ import annotations

import math
from pathlib import Path

import click

from evalflow.cli.output import (
    SCORE_COLUMNS,
    emit_csv,
    emit_json,
    emit_markdown,
    emit_notes,
    emit_table,
    records,
    stderr,
)
from evalflow.cli.progress import RunProgress
from evalflow.errors import InputError
from evalflow.io import settings
from evalflow.judges.registry import JudgeName
from evalflow.pipeline import orchestrate
from evalflow.storage.catalog import query as run_query

DEMO_BENCHMARK = "trialist"
DEMO_SUITE = "demo"  # <benchmarks>/_suites/demo.yaml: the demo's PRDs, rated together


def _demo_benchmarks() -> list[str]:
    from evalflow.io.suites import load_suite

    return list(load_suite(DEMO_SUITE).weights)


warehouse_option = click.option(
    "--warehouse",
    default=None,
    help="Warehouse root (path or URI). Default: $EVALFLOW_WAREHOUSE or data/warehouse.",
)


class FiniteCost(click.FloatRange):
    """A cost in USD: a finite number ≥ 0 (`nan`, `inf` and `1e309` are not limits)."""

    def __init__(self) -> None:
        super().__init__(min=0)

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number of dollars (e.g. 5)", param, ctx)
        return number


def judge_options(command):
    """--judge, --max-cost and --labels, collected into one `JudgeChoice`."""
    options = [
        click.option(
            "--judge",
            type=JudgeName(),
            default=None,
            help="Judge for every run (default: the manifest's `judge:`, $EVALFLOW_JUDGE, "
            "heuristic). anthropic/hybrid need ANTHROPIC_API_KEY, openai OPENAI_API_KEY; "
            "panel:anthropic,openai splits the k runs across judges.",
        ),
        click.option(
            "--max-cost",
            type=FiniteCost(),
            default=None,
            help="Stop judging a run cleanly before its API spend would pass USD "
            "(remaining checks UNSCORED).",
        ),
        click.option(
            "--labels",
            type=click.Path(path_type=Path, dir_okay=False, exists=True),
            default=None,
            help="Verdicts file for --judge labels (default: $EVALFLOW_LABELS).",
        ),
        click.option(
            "--rejudge",
            type=click.Choice(["unscored"]),
            default=None,
            help="Ask the LLM judge again about the checks its stored answers left UNSCORED "
            "(refused, invalid, never submitted); the estimated cost is printed first. "
            "Without it an unchanged run replays every stored answer and pays nothing.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _choice(
    judge: str | None, max_cost: float | None, labels: Path | None, rejudge: str | None = None
):
    return orchestrate.JudgeChoice(judge, max_cost, labels, rejudge)


def _rejudge_notice(root: str, keys: list[str], judge: orchestrate.JudgeChoice) -> None:
    """What --rejudge unscored will ask again and its estimated cost, before it runs: per
    judge that re-judges (--judge, else each run's manifest's, else the default), only that
    judge's result (a run keeps other judges' results, which this command does not touch)."""
    from evalflow.io.evaluation import K_RUNS
    from evalflow.io.inputs import load_manifest
    from evalflow.io.registry import manifest_for
    from evalflow.judges.cost import rejudge_estimate
    from evalflow.judges.registry import check_judge_name

    wh = settings.warehouse(root)
    tables = [f"scoring_run_{run}" for run in range(1, K_RUNS + 1)]
    frames: dict[str, list] = {}
    for key in keys:
        name = judge.name or load_manifest(manifest_for(wh, key)).manifest.judge
        name = check_judge_name(name or settings.default_judge())
        runs = frames.setdefault(name, [])
        runs += [wh.read(t, key, name) for t in tables if wh.has(t, key, name)]
    for name, judged in sorted(frames.items()):
        count, usd = rejudge_estimate(judged, name)
        stderr().print(
            f"--rejudge unscored, judge {name}: {count} check conversation(s) stored as "
            f"UNSCORED will be asked again, estimated ${usd:.4f} (what they cost when first "
            "asked); every other answer replays without a request"
        )


def gate_options(command):
    """--rerun-gates and --require-isolation (collected into one `GateChoice`)."""
    command = click.option(
        "--require-isolation",
        is_flag=True,
        help="Fail (exit 2) instead of running gates when a sandbox feature is missing.",
    )(command)
    return click.option(
        "--rerun-gates",
        is_flag=True,
        help="Run every gate again instead of reusing stored results of an unchanged run.",
    )(command)


json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")


def _unconfined(root: str) -> list[str]:
    """`evalflow.repo.run_view.unconfined_neighbours` over every registered run."""
    from evalflow.io.inputs import load_manifest
    from evalflow.io.registry import manifest_for, registered_keys
    from evalflow.repo.run_view import unconfined_neighbours

    warehouse = settings.warehouse(root)
    runs = []
    for key in registered_keys(warehouse):
        loaded = load_manifest(manifest_for(warehouse, key))
        m = loaded.manifest
        where = str(loaded.resolve(m.repo)) if m.repo is not None else f"source {m.source}"
        runs.append((key, m.framework, where, m.base, m.head, m.root))
    return unconfined_neighbours(runs)


def _root(warehouse: str | None) -> str:
    return settings.warehouse(warehouse).root


def _progress(outcome: orchestrate.Outcome) -> None:
    mark = "[green]✓[/green]" if outcome.success else "[red]✗[/red]"
    detail = f" — {outcome.error}" if outcome.error else ""
    if outcome.skipped:
        detail = " — unchanged since its last evaluation, nothing re-run (--force re-runs)"
    stderr().print(f"{mark} {outcome.partition} ({outcome.seconds:.1f} s){detail}")


def _materialize(
    root: str,
    keys: list[str] | None,
    judge: orchestrate.JudgeChoice,
    executor: str,
    workers: int,
    gates: orchestrate.GateChoice | None = None,
    force: bool = False,
):
    keys = orchestrate.resolve_partitions(root, keys)
    orchestrate.check_judges(root, keys, judge)
    if judge.rejudge:
        _rejudge_notice(root, keys, judge)
    stderr().print(
        f"materialising {len(keys)} run(s) ({executor} executor, {workers} worker(s)) into {root}"
    )
    with RunProgress(root, keys):
        outcomes = orchestrate.materialize(
            root,
            keys,
            judge=judge,
            executor=executor,
            workers=workers,
            on_done=_progress,
            gates=gates or orchestrate.GateChoice(),
            force=force,
        )
    return outcomes


wide_option = click.option(
    "--wide",
    is_flag=True,
    help="Every column of the tables, full gate errors included (lines may run long); the "
    "default is a compact view that fits 100 columns.",
)


def force_option(command):
    return click.option(
        "--force",
        is_flag=True,
        help="Re-evaluate every step even when the run is unchanged since its last evaluation.",
    )(command)


# One cell per run: each step's status in run order, a not-run with its category and evidence.
GATES_SUMMARY = """(SELECT string_agg(g.gate || ' ' || g.status || CASE WHEN g.status = 'not-run'
    THEN ' (' || g.category || ': ' || left(coalesce(g.evidence, ''), 80) || ')' ELSE '' END,
    ', ' ORDER BY CASE g.gate WHEN 'setup' THEN 0 WHEN 'build' THEN 1 WHEN 'lint' THEN 2
    WHEN 'unit' THEN 3 ELSE 4 END)
  FROM gates g WHERE g.run_key = {alias}.run_key)"""

# Each gate's status, for the compact view's pass/fail summary.
GATES_STATUS = """(SELECT string_agg(g.gate || '=' || g.status, ',' ORDER BY g.gate)
  FROM gates g WHERE g.run_key = {alias}.run_key)"""

# One row per run (its result of the benchmark's ranking key, else its own judge's); the
# report path is the leaderboard's own (a run has one report per judge).
LEADERBOARD_SQL = f"""
SELECT l.*, {GATES_SUMMARY.format(alias="l")} AS gates,
       {GATES_STATUS.format(alias="l")} AS gate_status
FROM leaderboard l
{{where}}
ORDER BY l.benchmark, l.ranked DESC, l.rank, l.final_upper DESC, l.run_key
"""


def _leaderboard(root: str, benchmark: str | None, run_keys: list[str] | None = None):
    clauses = []
    if benchmark:
        clauses.append(f"l.benchmark = '{benchmark.replace(chr(39), '')}'")
    if run_keys:
        keys = ", ".join("'" + k.replace("'", "") + "'" for k in run_keys)
        clauses.append(f"l.run_key IN ({keys})")
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    return run_query(settings.warehouse(root), LEADERBOARD_SQL.format(where=where))


def _short_path(path: str | None) -> str | None:
    """A path relative to the working directory when it lies below it."""
    if not path:
        return path
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path


def _rating_cell(r: dict, rows: list[tuple], columns: list[str], compact: bool = False) -> str:
    """The Bradley–Terry rating and its 95 % CI. A zero-width bootstrap CI means every
    resample gave the same rating: the matches separate the players completely, so the
    rating is bounded only by the fit's prior and the interval is one-sided (unbounded above
    for the player that never lost, below for the one that never won), never "2689–2689".
    `compact` leaves the explanation to the table's notes."""
    if r["rating"] is None:
        return "—"
    low, high = r["rating_ci_low"], r["rating_ci_high"]
    if low is None or high is None or high - low >= 0.5:
        return (
            f"{r['rating']:.0f} ({low:.0f}–{high:.0f})" if low is not None else f"{r['rating']:.0f}"
        )
    group = (r["benchmark"], r["comparability_key"])
    others = [
        o["rating"]
        for o in (dict(zip(columns, v, strict=True)) for v in rows)
        if o["rating"] is not None and (o["benchmark"], o["comparability_key"]) == group
    ]
    above = r["rating"] >= sum(others) / len(others)
    side = f"≥ {low:.0f}" if above else f"≤ {high:.0f}"
    if compact:
        return f"{r['rating']:.0f} ({side})"
    return f"{r['rating']:.0f} ({side}, unbounded: complete separation)"


def _gap_cell(r: dict, rows: list[tuple], columns: list[str]) -> str:
    """Whether the gap to the next-ranked run is clear: only when the Final gap is beyond
    judge noise *and*, where both runs are rated, their rating CIs are apart (separability
    0 was shown as "clear"); a gap either measure cannot tell from noise says which."""
    noisy = r["within_noise_of_next"]
    if noisy is None:
        return ""
    if noisy:
        return "within noise"
    following = [
        other
        for other in (dict(zip(columns, v, strict=True)) for v in rows)
        if other["rank"] is not None
        and r["rank"] is not None
        and other["rank"] == r["rank"] + 1
        and other["comparability_key"] == r["comparability_key"]
        and other["benchmark"] == r["benchmark"]
    ]
    if r["rating"] is not None and following and following[0]["rating"] is not None:
        nxt = following[0]
        pair = [
            (r["rating_ci_low"], r["rating_ci_high"]),
            (nxt["rating_ci_low"], nxt["rating_ci_high"]),
        ]
        low, high = sorted(pair)
        if low[1] >= high[0]:
            return "not separated (rating CIs overlap)"
    return "clear"


def _leaderboard_rows(columns: list[str], rows: list[tuple]) -> tuple[list[str], list[list]]:
    """The human view: Final with its CI, rating ± CI, cost, and the noise flag; a run that
    is not ranked shows why ("incomplete: N checks unscored") and its bounds instead. "UNMET
    proven/other, no proof": UNMETs proven absent (portable search, failed executable check),
    other UNMETs, and the checks UNSCORED for want of a portable proof of absence."""
    # Here and in the suite printers, not at module top: the roll-up module imports pandas,
    # which `evalflow query` (defined in this module) does not need.
    from evalflow.domain.rounding import format_half_up

    headers = ["#", "framework", "run", "Final", "Adjusted", "band", "borderline",
               "UNMET proven/other, no proof", "Final 95% CI", "BT rating (95% CI)", "cost $",
               "gap to next", "gates", "report"]  # fmt: skip
    num = format_half_up
    out = []
    for values in rows:
        r = dict(zip(columns, values, strict=True))
        final = num(r["final"])
        if not r["ranked"]:
            final = r["not_ranked_reason"]
            if not r["complete"]:
                final += f" (Final between {num(r['final_lower'])} and {num(r['final_upper'])})"
        rating = _rating_cell(r, rows, columns)
        noise = _gap_cell(r, rows, columns)
        ci = (
            "—"
            if r["final_ci_low"] is None
            else f"{num(r['final_ci_low'])}–{num(r['final_ci_high'])}"
        )
        out.append([
            "—" if r["rank"] is None else r["rank"], r["framework"],
            r["run_key"].rsplit(".", 1)[-1], final,
            num(r["adjusted_final"]), r["band"] or "—", r["n_borderline"],
            f"{r['unmet_proven']}/{r['unmet_other']}, {r['unscored_no_proof']}", ci, rating,
            num(r["total_cost_usd"]), noise, r["gates"] or "—",
            _short_path(r.get("report_path")),
        ])  # fmt: skip
    return headers, out


# The compact view's short forms of `_gap_cell`.
GAP_SHORT = {"within noise": "noise", "not separated (rating CIs overlap)": "CIs overlap"}

LEADERBOARD_KEY = (
    "#: by Adjusted Final where a gate failed (Final halved), else Final. BT rating: "
    "Bradley–Terry from per-check matches (ignores gates), 95% CI; ≥/≤: complete separation, "
    "the CI is unbounded on that side. gap to the next rank: noise = within judge noise, "
    "CIs overlap = ratings not separated. gates: ✓ passed, ✗ failed; their output is in the "
    "reports. Band, borderline checks and UNMET proven/other: --wide."
)


def _gates_short(status: str | None) -> str:
    """The gates as a short pass/fail summary: failed gates by name, the others counted by
    status (the full errors are in the report)."""
    if not status:
        return "—"
    by_status: dict[str, list[str]] = {}
    for item in status.split(","):
        gate, _, state = item.partition("=")
        by_status.setdefault(state, []).append(gate)
    parts = []
    if "fail" in by_status:
        parts.append("✗ " + ",".join(by_status.pop("fail")))
    if "pass" in by_status:
        parts.append(f"✓ {len(by_status.pop('pass'))}")
    parts += [f"{len(gates)} {state}" for state, gates in sorted(by_status.items())]
    return ", ".join(parts)


def _compact_rows(columns: list[str], rows: list[tuple]) -> tuple[list[str], list[list], list[str]]:
    """The default terminal view: the narrow columns of `_leaderboard_rows` (a 100-column
    terminal shows each run on one line), why a run is not ranked as a note below."""
    from evalflow.domain.rounding import format_half_up as num

    headers = ["#", "framework", "run", "Final", "Adj.", "95% CI", "BT rating", "cost $",
               "gap", "gates"]  # fmt: skip
    out, notes = [], []
    for values in rows:
        r = dict(zip(columns, values, strict=True))
        final = num(r["final"])
        if not r["ranked"]:
            final = r["not_ranked_reason"].split(":")[0]
            note = f"{r['run_key']} is not ranked — {r['not_ranked_reason']}"
            if not r["complete"]:
                note += f" (Final between {num(r['final_lower'])} and {num(r['final_upper'])})"
            notes.append(note)
        ci = "—" if r["final_ci_low"] is None else (
            f"{num(r['final_ci_low'])}–{num(r['final_ci_high'])}"
        )  # fmt: skip
        gap = _gap_cell(r, rows, columns)
        out.append([
            "—" if r["rank"] is None else r["rank"], r["framework"],
            r["run_key"].rsplit(".", 1)[-1], final, num(r["adjusted_final"]), ci,
            _rating_cell(r, rows, columns, compact=True), num(r["total_cost_usd"]),
            GAP_SHORT.get(gap, gap), _gates_short(r["gate_status"]),
        ])  # fmt: skip
    return headers, out, notes


def _judge_text(r: dict) -> str:
    judge = r["judge_id"]
    if r["judge_model"] and r["judge_model"] not in judge:
        judge += f" ({r['judge_model']})"
    if r["judge_prompt_version"]:
        judge += f", prompt {r['judge_prompt_version']}"
    return judge


def _ranking_text(r: dict) -> str:
    """The one judge a benchmark is ranked by, and why (`ranking_choice`; a leaderboard
    ranked before results were kept per judge has none: its row's own judge)."""
    choice = r.get("ranking_choice")
    return f"{_judge_text(r)}; {choice}" if choice else _judge_text(r)


def _compact_title(r: dict) -> str:
    return (
        f"Leaderboard — {r['benchmark']} · ranked within: baseline {r['baseline_sha256'][:12]}, "
        f"judge {_judge_text(r)}"
    )


def _choice_note(r: dict) -> list[str]:
    """The compact view's note on the one judge the benchmark is ranked by (the title keeps
    to 100 columns)."""
    choice = r.get("ranking_choice")
    if not choice:
        return []
    return [f"{r['benchmark']} ranked by judge {choice}; another judge: --judge NAME."]


def _group_title(r: dict) -> str:
    """What the runs of one table were ranked within (never a silent mix of judges)."""
    key = r.get("ranking_key") or r["comparability_key"]
    return (
        f"Leaderboard — {r['benchmark']} · ranked within: baseline {r['baseline_sha256'][:12]}, "
        f"judge {_ranking_text(r)} (comparability key {key}); # orders by Adjusted "
        "Final (a failed gate halves it), the BT rating by per-check matches (ignores gates)"
    )


def _print_leaderboard(
    columns: list[str], rows: list[tuple], output: str, wide: bool = False
) -> None:
    """JSON: every row. Table/Markdown: one table per ranking group (benchmark and
    comparability key), ranked runs first, then the runs that are not ranked. The terminal
    table is compact unless `wide` (Markdown is always wide: a document has no width)."""
    if output == "json":
        emit_json(records(columns, rows))
        return
    # One table per benchmark, ranked within its one ranking key (the rows of runs without a
    # result of that key follow, not ranked; a leaderboard ranked before results were kept
    # per judge has one table per key).
    groups: dict[tuple[str, str], list[tuple]] = {}
    for row in rows:
        r = dict(zip(columns, row, strict=True))
        key = r["comparability_key"] if "ranking_key" not in r else r["ranking_key"]
        groups.setdefault((r["benchmark"], key), []).append(row)
    notes: list[str] = []
    for group in groups.values():
        found = [dict(zip(columns, v, strict=True)) for v in group]
        # The title names the ranking key's judge: from a row of that key when there is one.
        first = next((r for r in found if r["comparability_key"] == r.get("ranking_key")), found[0])
        if output == "table" and not wide:
            headers, table, unranked = _compact_rows(columns, group)
            emit_table(headers, table, title=_compact_title(first), compact=True)
            notes += _choice_note(first) + unranked
            continue
        headers, table = _leaderboard_rows(columns, group)
        if output == "md":
            emit_markdown(headers, table, _group_title(first))
        else:
            emit_table(headers, table, title=_group_title(first))
    if output == "table" and not wide:
        paths = [dict(zip(columns, v, strict=True)).get("report_path") for v in rows]
        # reports/<benchmark>/<file>: the folder above the benchmarks' folders
        folders = sorted({_short_path(str(Path(p).parent.parent)) for p in paths if p})
        where = f"Reports (Markdown and HTML) under {', '.join(folders)}. " if folders else ""
        emit_notes([*notes, LEADERBOARD_KEY, f"{where}Every column: --wide or --json."])


SIDE_METRICS_SQL = """
SELECT m.benchmark, m.framework, m.run,
       coalesce(s.verdict, s.reason) AS scope,
       e.e_recall, e.e_precision, e.e_justified, e.pooled_recall,
       e.reason AS e_null_because,
       d.healthy AS d_healthy,
       (SELECT sum(weight) FROM robustness r
        WHERE r.run_key = m.run_key AND r.judge_name = m.judge_name) AS r,
       {gates} AS gates
FROM run_manifest m
JOIN leaderboard l USING (run_key, judge_name)
JOIN scope_summary s USING (run_key, judge_name)
JOIN elicitation_summary e USING (run_key, judge_name)
JOIN (SELECT DISTINCT run_key, judge_name, healthy FROM distribution) d
  USING (run_key, judge_name)
WHERE m.run_key IN ({keys})
ORDER BY m.benchmark, m.framework, m.run
"""


def _print_side_metrics(root: str, run_keys: list[str], wide: bool = False) -> None:
    """E, S, R, D and the gates of each run: beside Final, never folded into it. Compact
    unless `wide`: one run column, short headers, no gates (the leaderboard has them), and
    why E is NULL as a note."""
    from evalflow.domain.rounding import format_half_up

    keys = ", ".join("'" + k.replace("'", "") + "'" for k in run_keys)
    sql = SIDE_METRICS_SQL.format(keys=keys, gates=GATES_SUMMARY.format(alias="m"))
    columns, rows = run_query(settings.warehouse(root), sql)
    title = "Side metrics (beside Final, never in it)"
    key = (
        "E rec/prec/just/pool: elicitation recall, precision, justified share, pooled recall; "
        "D ok: every P0 main path has a Necessary test; R: robustness (extra tests, weighted)."
    )
    if wide:
        emit_table(columns, rows, title=title)
        return

    def num(value: float | None) -> str:
        return "—" if value is None else format_half_up(value)

    table, notes = [], []
    for values in rows:
        r = dict(zip(columns, values, strict=True))
        run = f"{r['benchmark']}.{r['framework']}.{r['run']}"
        table.append([run, r["scope"], num(r["e_recall"]), num(r["e_precision"]),
                      num(r["e_justified"]), num(r["pooled_recall"]),
                      "—" if r["d_healthy"] is None else ("yes" if r["d_healthy"] else "no"),
                      num(r["r"])])  # fmt: skip
        if r["e_null_because"]:
            notes.append(f"E of {run}: {r['e_null_because']}")
    headers = ["run", "scope S", "E rec", "E prec", "E just", "E pool", "D ok", "R"]
    emit_table(headers, table, title=title, compact=True)
    emit_notes([*notes, key])


def _exit_on_failures(outcomes: list[orchestrate.Outcome]) -> None:
    if (error := orchestrate.failures_error(outcomes)) is not None:
        raise error


@click.command()
@click.argument("manifests", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--replace", is_flag=True, help="Re-point an already registered run_key.")
@warehouse_option
@json_option
def register(
    manifests: tuple[Path, ...], replace: bool, warehouse: str | None, as_json: bool
) -> None:
    """Register run manifests as `evaluations` partitions (key <benchmark>.<framework>.<run>).

    Fails early (exit 2) when a repository, base or head does not resolve, head equals base,
    spec_dir leaves the repository, or a run_key is registered to another manifest."""
    from evalflow.cli.register_checks import check_registrations, warn_unknown_authors

    check_registrations(_root(warehouse), list(manifests), replace)
    warn_unknown_authors(list(manifests))
    keys = orchestrate.register(_root(warehouse), list(manifests))
    for warning in _unconfined(_root(warehouse)):
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        emit_json(
            [{"run_key": k, "manifest": str(p)} for k, p in zip(keys, manifests, strict=True)]
        )
    else:
        for key, path in zip(keys, manifests, strict=True):
            click.echo(f"registered {key} ← {path}")


@click.command()
@click.option("--partition", "partitions", multiple=True, help="Run key; repeatable. Default: all.")
@click.option(
    "--executor",
    type=click.Choice(orchestrate.EXECUTORS),
    default="in_process",
    show_default=True,
    help="Dagster executor inside each run.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=2,
    show_default=True,
    help="Partitions evaluated concurrently (one process each).",
)
@judge_options
@gate_options
@force_option
@warehouse_option
@json_option
def materialize(
    partitions: tuple[str, ...],
    executor: str,
    workers: int,
    judge: str | None,
    max_cost: float | None,
    labels: Path | None,
    rejudge: str | None,
    rerun_gates: bool,
    require_isolation: bool,
    force: bool,
    warehouse: str | None,
    as_json: bool,
) -> None:
    """Evaluate registered runs through Dagster, then rank them and refresh the DuckDB catalog."""
    root = _root(warehouse)
    choice = _choice(judge, max_cost, labels, rejudge)
    gates = orchestrate.GateChoice(rerun_gates, require_isolation)
    outcomes = _materialize(root, list(partitions) or None, choice, executor, workers, gates, force)
    if as_json:
        emit_json([o.__dict__ for o in outcomes])
    _exit_on_failures(outcomes)


@click.command()
@click.argument("manifest", type=click.Path(path_type=Path))
@judge_options
@gate_options
@force_option
@wide_option
@warehouse_option
@json_option
def score(
    manifest: Path,
    judge: str | None,
    max_cost: float | None,
    labels: Path | None,
    rejudge: str | None,
    rerun_gates: bool,
    require_isolation: bool,
    force: bool,
    wide: bool,
    warehouse: str | None,
    as_json: bool,
) -> None:
    """Score one framework run: print its roll-up and write its Markdown report."""
    root = _root(warehouse)
    key = orchestrate.register(root, [manifest])[0]
    gates = orchestrate.GateChoice(rerun_gates, require_isolation)
    choice = _choice(judge, max_cost, labels, rejudge)
    outcomes = _materialize(root, [key], choice, "in_process", 1, gates, force)
    _exit_on_failures(outcomes[:-1])
    columns, rows = _leaderboard(root, None, [key])
    if as_json:
        emit_json(records(columns, rows))
        return
    wh = settings.warehouse(root)
    # The roll-up of this judge's result; the run's results of other judges stay beside it.
    scored_by = _scored_by(manifest, judge)
    story_cols, story_rows = run_query(
        wh,
        "SELECT story_id, priority, assumed, weight, n_acs, story_score FROM story_score "
        f"WHERE run_key = '{key}' AND judge_name = '{scored_by}' ORDER BY story_id",
    )
    emit_table(story_cols, story_rows, title=f"Roll-up — {key} (judge {scored_by})")
    _print_leaderboard(columns, rows, "table", wide)


def _scored_by(manifest: Path, judge: str | None) -> str:
    """The judge name a `score` of `manifest` used (`--judge`, the manifest's, the default)."""
    from evalflow.io.inputs import load_manifest
    from evalflow.judges.registry import check_judge_name

    name = judge or load_manifest(manifest).manifest.judge or settings.default_judge()
    return check_judge_name(name)


@click.command()
@judge_options
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=2,
    show_default=True,
    help="Runs evaluated concurrently.",
)
@wide_option
@warehouse_option
@json_option
def demo(
    judge: str | None,
    max_cost: float | None,
    labels: Path | None,
    rejudge: str | None,
    workers: int,
    wide: bool,
    warehouse: str | None,
    as_json: bool,
) -> None:
    """Score the bundled offline demo and print the suite and per-PRD leaderboards.

    The demo suite (`_suites/demo.yaml`) names its PRDs; its framework-level leaderboard is
    printed above the per-PRD ones."""
    from evalflow.io.suites import suite_path

    has_suite = suite_path(DEMO_SUITE).is_file()
    manifests = []
    for benchmark in _demo_benchmarks() if has_suite else [DEMO_BENCHMARK]:
        runs_dir = settings.benchmarks_root() / benchmark / "runs"
        found = sorted(runs_dir.glob("*.yaml"))
        manifests += found
        if not found:
            raise InputError(
                "demo benchmark not found",
                where=str(runs_dir),
                fix="run from the evalflow checkout or set EVALFLOW_BENCHMARKS to its "
                "data/benchmarks",
            )
    root = _root(warehouse)
    keys = orchestrate.register(root, manifests)
    choice = _choice(judge, max_cost, labels, rejudge)
    outcomes = _materialize(root, keys, choice, "in_process", workers)
    _exit_on_failures(outcomes)
    if has_suite and not as_json:
        suite, report = _suite_report(root, DEMO_SUITE)
        _print_suite(suite, report, "table", wide)
    columns, rows = _leaderboard(root, None, keys)
    _print_leaderboard(columns, rows, "json" if as_json else "table", wide)
    if not as_json:
        _print_side_metrics(root, keys, wide)
        _print_plugin_scores(root, wide)
        catalog = settings.warehouse(root).workdir / "evalflow.duckdb"
        emit_notes(['Tables: evalflow query "SHOW TABLES"', f"DuckDB catalog: {catalog}"])


def _print_plugin_scores(root: str, wide: bool) -> None:
    """PluginEval's score of each framework's own skills; compact unless `wide`: the
    anti-patterns counted, named in a note."""
    plugin_cols, plugin_rows = run_query(
        settings.warehouse(root),
        # runs of one framework share its skills folder: one row per distinct score
        "SELECT l.framework, c.skill, c.composite, c.grade, c.badge, c.anti_patterns, "
        "c.confidence_basis, count(DISTINCT run_key) AS runs "
        # each run's result on the leaderboard (a run keeps one per judge)
        "FROM plugin_composite c JOIN leaderboard l USING (run_key, judge_name) "
        "GROUP BY ALL ORDER BY l.framework, c.skill",
    )
    title = "PluginEval — the frameworks' own skills (Monte Carlo layer simulated offline)"
    if wide:
        emit_table(plugin_cols, plugin_rows, title=title)
        return
    table, notes = [], []
    for framework, skill, composite, grade, badge, anti, basis, runs in plugin_rows:
        found = list(anti or [])
        table.append(
            [framework, skill, composite, grade, badge, len(found), ", ".join(basis), runs]
        )
        if found:
            notes.append(f"Anti-patterns of {framework}/{skill}: {', '.join(found)}")
    headers = ["framework", "skill", "composite", "grade", "badge", "anti-patterns", "basis",
               "runs"]  # fmt: skip
    emit_table(headers, table, title=title, compact=True)
    emit_notes(notes)


@click.command()
@click.argument("sql")
@click.option("--csv", "as_csv", is_flag=True, help="CSV output.")
@warehouse_option
@json_option
def query(sql: str, as_csv: bool, warehouse: str | None, as_json: bool) -> None:
    """Run SQL against the warehouse's DuckDB views (pretty table by default)."""
    if not sql.strip().strip(";").strip():
        raise InputError(
            "no SQL statement given", fix='e.g. evalflow query "SELECT * FROM leaderboard"'
        )
    columns, rows = run_query(settings.warehouse(_root(warehouse)), sql)
    if as_json:
        emit_json(records(columns, rows))
    elif as_csv:
        emit_csv(columns, rows)
    else:
        emit_table(columns, rows, rounded=SCORE_COLUMNS)


SUITE_TABLES_NEEDED = ("leaderboard", "ac_score", "majority_vote", "run_manifest")


def _suite_report(root: str, name: str):
    """(suite, its rating) computed from the warehouse tables, exactly as the asset does."""
    from evalflow.io.suites import load_suite, rate_from_tables

    suite = load_suite(name)
    wh = settings.warehouse(root)
    missing = [t for t in SUITE_TABLES_NEEDED if t not in wh.tables()]
    if missing:
        raise InputError(
            f"no evaluated runs yet (missing {', '.join(missing)})",
            fix="evalflow materialize (or evalflow demo)",
        )
    tables = {t: wh.read(t) for t in SUITE_TABLES_NEEDED}
    return suite, rate_from_tables(suite, *tables.values())


def _ci(value, low, high) -> str:
    from evalflow.domain.rounding import format_half_up

    return f"{format_half_up(value)} ({format_half_up(low)}–{format_half_up(high)})"


def _suite_rows(rating) -> tuple[list[str], list[list]]:
    from evalflow.domain.rounding import format_half_up

    headers = ["#", "framework", "BT rating (95% CI)", "mean Final (95% CI)",
               "with Adjusted Final where a gate failed", "PRDs", "runs",
               "run-to-run SD", "judge SD", "PRD SD", "cost $/run", "$/Final point",
               "gap to next"]  # fmt: skip
    out = []
    for r in rating.to_dict("records"):
        noise = {True: "within run noise", False: "beyond run noise"}.get(
            r["gap_to_next_within_run_noise"], ""
        )
        adjusted = "—"
        if r["n_adjusted"]:
            adjusted = _ci(r["mean_effective_final"], r["mean_effective_ci_low"],
                           r["mean_effective_ci_high"])  # fmt: skip
            adjusted += f" ({r['n_adjusted']} of {r['n_runs']} runs adjusted)"
        out.append([
            r["rank"], r["framework"],
            f"{r['rating']:.0f} ({r['rating_ci_low']:.0f}–{r['rating_ci_high']:.0f})",
            _ci(r["mean_final"], r["mean_final_ci_low"], r["mean_final_ci_high"]), adjusted,
            r["n_prds"], r["n_runs"], format_half_up(r["run_to_run_sd"]),
            format_half_up(r["judge_sd"]), format_half_up(r["prd_sd"]),
            format_half_up(r["cost_per_run_usd"]),
            format_half_up(r["cost_per_final_point_usd"], 4), noise,
        ])  # fmt: skip
    return headers, out


def _compact_suite_rows(rating) -> tuple[list[str], list[list]]:
    """The default terminal view of `_suite_rows`: no spreads (SD) or cost per Final point,
    and the Adjusted column only when a framework has an adjusted run."""
    from evalflow.domain.rounding import format_half_up

    adjusted = bool(rating["n_adjusted"].fillna(0).astype(int).any())
    headers = ["#", "framework", "BT rating", "mean Final", *(["mean Adj."] * adjusted),
               "runs", "$/run", "gap"]  # fmt: skip
    out = []
    for r in rating.to_dict("records"):
        gap = {True: "noise", False: "beyond noise"}.get(r["gap_to_next_within_run_noise"], "")
        adj = [
            _ci(r["mean_effective_final"], r["mean_effective_ci_low"], r["mean_effective_ci_high"])
            + f" {r['n_adjusted']}/{r['n_runs']}"
            if r["n_adjusted"]
            else "—"
        ]
        out.append([
            r["rank"], r["framework"],
            f"{r['rating']:.0f} ({r['rating_ci_low']:.0f}–{r['rating_ci_high']:.0f})",
            _ci(r["mean_final"], r["mean_final_ci_low"], r["mean_final_ci_high"]),
            *(adj * adjusted), r["n_runs"], format_half_up(r["cost_per_run_usd"]), gap,
        ])  # fmt: skip
    return headers, out


SUITE_KEY = (
    "BT rating: framework Bradley–Terry rating, 95% cluster-bootstrap CI. mean Final with its "
    "CI{adj}. gap to the next framework: noise = within run-to-run noise. Spreads (run-to-run, "
    "judge, PRD SD) and $/Final point: --wide."
)


def _print_suite(
    suite, report, output: str, wide: bool = False, plots: list[dict] | None = None
) -> None:
    """Framework rows of one suite, then the runs it left out and why (with --json and
    --plots, the plot files are one more key of the same document)."""
    from evalflow.domain.rounding import format_half_up

    frames = {"rating": report.rating, "pairs": report.pairs, "left_out": report.left_out}
    if output == "json":
        emit_json(
            {
                "suite": suite.name,
                **report.judge,
                "n_samples": report.n_samples,
                "seed": report.seed,
                "separability": report.separability,
                **{
                    k: records(list(f.columns), f.itertuples(index=False))
                    for k, f in frames.items()
                },
                **({"plots": plots} if plots is not None else {}),
            }
        )
        return
    judge = report.judge["judge_id"]
    if report.judge["judge_model"]:
        judge += f" ({report.judge['judge_model']})"
    if report.judge["judge_prompt_version"]:
        judge += f", prompt {report.judge['judge_prompt_version']}"
    separable = format_half_up(report.separability)
    title = (
        f"Suite leaderboard — {suite.name} ({', '.join(suite.weights)}) · judge {judge} · "
        f"{report.n_samples}-sample cluster bootstrap (PRDs, then runs), seed {report.seed} · "
        f"separability {separable}"
    )
    left = [list(r) for r in report.left_out[["benchmark", "run_key", "reason"]].itertuples(
        index=False
    )]  # fmt: skip
    if output == "table" and not wide:
        headers, table = _compact_suite_rows(report.rating)
        title = (
            f"Suite leaderboard — {suite.name} ({', '.join(suite.weights)}) · judge {judge} · "
            f"separability {separable}"
        )
        emit_table(headers, table, title=title, compact=True)
        adj = "; mean Adj.: Adjusted Final where a gate failed, adjusted runs/all" * (
            "mean Adj." in headers
        )
        notes = [
            f"{report.n_samples}-sample cluster bootstrap (PRDs, then runs), seed {report.seed}. "
            + SUITE_KEY.format(adj=adj)
        ]
        emit_notes(notes + [f"Left out: {run} ({bench}) — {why}" for bench, run, why in left])
        return
    headers, table = _suite_rows(report.rating)
    if output == "md":
        emit_markdown(headers, table, title)
        if left:
            emit_markdown(["benchmark", "run", "left out because"], left, "Left out")
    else:
        emit_table(headers, table, title=title)
        if left:
            emit_table(["benchmark", "run", "left out because"], left, title="Left out")


def _suite_plots(root: str, suite, report) -> tuple[list[str], list[list[str]]]:
    from evalflow.reports import plots

    out_dir = settings.warehouse(root).workdir / "plots" / "_suites" / suite.name
    made = plots.suite_plots(report.rating, report.prd_scores, out_dir, suite=suite.name)
    rows = [[name, _short_path(str(f.png)), _short_path(str(f.svg))] for name, f in made.items()]
    return ["plot", "png", "svg"], rows


@click.command()
@click.option("--benchmark", default=None, help="Only this benchmark.")
@click.option(
    "--suite",
    default=None,
    help="Framework-level ratings across a suite's benchmarks: a name under "
    "<benchmarks>/_suites/ or a path to a suite YAML file.",
)
@click.option(
    "--output",
    type=click.Choice(["table", "md", "json"]),
    default="table",
    show_default=True,
    help="Terminal table, Markdown, or JSON (every column).",
)
@click.option("--plots", is_flag=True, help="Also list the plot files (PNG and SVG).")
@click.option(
    "--judge",
    "rank_judge",
    type=JudgeName(),
    default=None,
    help="Rank every benchmark by this judge's results (ranks again; default: "
    "$EVALFLOW_RANK_JUDGE, else per benchmark the judge whose results cover the most runs).",
)
@wide_option
@warehouse_option
@json_option
def leaderboard(
    benchmark: str | None,
    suite: str | None,
    output: str,
    plots: bool,
    rank_judge: str | None,
    wide: bool,
    warehouse: str | None,
    as_json: bool,
) -> None:
    """Ranked runs: Final (CI), Adjusted Final, band, Bradley–Terry rating ± CI, cost.

    With --suite: one row per framework across the suite's PRDs (rating and mean Final with
    cluster-bootstrap CIs, run-to-run and judge SD, cost per run and per Final point)."""
    root = _root(warehouse)
    if rank_judge is not None:
        _exit_on_failures([orchestrate.rank(root, rank_judge=rank_judge)])
    if suite is not None:
        if benchmark:
            raise InputError("--suite and --benchmark exclude each other", fix="pass one")
        loaded, report = _suite_report(root, suite)
        listed = _suite_plots(root, loaded, report) if plots else None
        if output == "json" or as_json:
            _print_suite(loaded, report, "json", wide, records(*listed) if listed else None)
            return
        _print_suite(loaded, report, output, wide)
        if listed:
            emit_table(*listed, title="Plots")
        return
    if "leaderboard" not in settings.warehouse(root).tables():
        raise InputError("no ranked runs yet", fix="evalflow materialize (or evalflow demo)")
    columns, rows = _leaderboard(root, benchmark)
    if not rows:
        raise InputError("no ranked runs yet", fix="evalflow materialize (or evalflow demo)")
    if plots and (output == "json" or as_json):
        # One JSON document: the runs and the plot files side by side.
        header, listed = _plots(root, benchmark, wide=True)
        emit_json({"runs": records(columns, rows), "plots": records(header, listed)})
        return
    _print_leaderboard(columns, rows, "json" if as_json else output, wide)
    if plots:
        _print_plots(root, benchmark, wide)


def _plot_file(stored: str, workdir: Path) -> str:
    """A plot file as a path the user can open: relative to the working directory when it
    lies below it, else absolute. The table records where the plot was written; the plot is
    this warehouse's file under its `plots/` folder (the warehouse may have moved since)."""
    path = Path(stored)
    if "plots" in path.parts:
        last = len(path.parts) - 1 - path.parts[::-1].index("plots")
        path = workdir.joinpath(*path.parts[last:])
    return str(_short_path(str(path.resolve())))


def _plots(root: str, benchmark: str | None, wide: bool) -> tuple[list[str], list[list[str]]]:
    """The leaderboard's plot files: benchmark, (comparability key,) plot, PNG and SVG."""
    wh = settings.warehouse(root)
    where = f"WHERE benchmark = '{benchmark.replace(chr(39), '')}'" if benchmark else ""
    sql = (
        "SELECT benchmark, comparability_key, plot, png_path, svg_path FROM leaderboard_plots "
        f"{where} ORDER BY 1, 2, 3"
    )
    _, found = run_query(wh, sql)
    rows = [
        [bench, *([key] if wide else []), plot, _plot_file(png, wh.workdir),
         _plot_file(svg, wh.workdir)]
        for bench, key, plot, png, svg in found
    ]  # fmt: skip
    header = ["benchmark", *(["comparability_key"] if wide else []), "plot", "png", "svg"]
    return header, rows


def _print_plots(root: str, benchmark: str | None, wide: bool) -> None:
    header, rows = _plots(root, benchmark, wide)
    emit_table(header, rows, title="Plots")
    missing = [p for row in rows for p in row[-2:] if not Path(p).is_file()]
    if missing:
        emit_notes([
            f"{len(missing)} plot file(s) are missing (deleted since): evalflow materialize "
            "--force redraws them."
        ])  # fmt: skip


commands = [register, materialize, score, demo, query, leaderboard]
