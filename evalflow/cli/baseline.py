"""`evalflow baseline check|render|freeze|draft|lint`: the frozen AC checklist of a benchmark.

`draft` writes a draft from the PRD (never over a frozen baseline) with the offline rules or
the Claude drafter (`evalflow.judges.claude_drafter`: same rules, verified probes, cached and
costed); `lint` warns about violations of SPEC's decomposition rules (exit 0, `--strict` ⇒ 1).

`freeze` validates the YAML against its PRD, renders `_ac-baseline.md` (never timestamped)
and records the baseline's sha256 in `_ac-baseline.lock`; `check` then refuses a baseline
whose hash no longer matches the lock, because results scored against different hashes are
never compared.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from evalflow.cli.output import emit_json
from evalflow.domain.baseline import render_baseline_markdown
from evalflow.domain.models import CheckedRuns
from evalflow.errors import InputError
from evalflow.io.inputs import Benchmark, load_benchmark, lock_path, read_text
from evalflow.repo.git import throwaway_workspace

if TYPE_CHECKING:
    from evalflow.repo.snapshot import RepoSnapshot

baseline_argument = click.argument(
    "baseline", type=click.Path(path_type=Path), default="_ac-baseline.yaml"
)


def _markdown_path(path: Path) -> Path:
    return path.with_suffix(".md")


def _summary(bench: Benchmark, path: Path) -> dict:
    checks = bench.baseline.checks()
    return {
        "baseline": str(path),
        "benchmark": bench.baseline.benchmark,
        "sha256": bench.baseline_sha256,
        "acs": len(bench.baseline.acs),
        "i_checks": sum(c.kind == "I" for _, c in checks),
        "t_checks": sum(c.kind == "T" for _, c in checks),
        "checks_without_probes": [c.id for _, c in checks if not c.probes],
        "assumed_priorities": [s.id for s in bench.prd.stories if s.assumed],
        "frozen": lock_path(path).is_file(),
    }


@click.group("baseline")
def baseline_group() -> None:
    """Validate, render and freeze a benchmark's AC baseline (`_ac-baseline.yaml`)."""


@baseline_group.command("check")
@baseline_argument
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary.")
def check(baseline: Path, as_json: bool) -> None:
    """Validate the baseline against its PRD (and against its lock when frozen)."""
    bench = load_benchmark(baseline)
    summary = _summary(bench, baseline)
    if as_json:
        emit_json(summary)
        return
    click.echo(
        f"ok: {summary['acs']} ACs, {summary['i_checks']} I-checks, {summary['t_checks']} "
        f"T-checks; sha256 {summary['sha256'][:16]}"
        + (" (frozen)" if summary["frozen"] else " (not frozen yet: evalflow baseline freeze)")
    )
    if summary["checks_without_probes"]:
        click.echo(
            "note: the heuristic judge answers UNSCORED for checks without probes: "
            + ", ".join(summary["checks_without_probes"])
        )
    for story in bench.prd.stories:
        if story.assumed:
            click.echo(
                f"warning: story {story.id} has no known priority label; scored as ASSUMED "
                f"{story.priority} (label it in the PRD)"
            )


@baseline_group.command("render")
@baseline_argument
def render(baseline: Path) -> None:
    """Write `_ac-baseline.md` next to the YAML (deterministic, no timestamp)."""
    bench = load_benchmark(baseline)
    out = _markdown_path(baseline)
    out.write_text(render_baseline_markdown(bench.baseline, bench.prd, bench.baseline_sha256))
    click.echo(f"wrote {out}")


@baseline_group.command("freeze")
@baseline_argument
@click.option("--force", is_flag=True, help="Replace an existing lock with a different hash.")
def freeze(baseline: Path, force: bool) -> None:
    """Validate, render and lock the baseline's sha256."""
    lock = lock_path(baseline)
    if force:
        lock.unlink(missing_ok=True)
    bench = load_benchmark(baseline)
    proposed = [c.id for _, c in bench.baseline.checks() if any(p.proposed for p in c.probes)]
    if proposed:
        raise InputError(
            f"{len(proposed)} check(s) still carry proposed probes (first: {proposed[0]})",
            where=str(baseline),
            fix="review each proposal and delete its 'proposed: true' to accept it (or the "
            "probe to refuse it), or draft again with --accept-proposals",
        )
    _markdown_path(baseline).write_text(
        render_baseline_markdown(bench.baseline, bench.prd, bench.baseline_sha256)
    )
    lock.write_text(bench.baseline_sha256 + "\n")
    click.echo(f"frozen {bench.baseline.benchmark}: sha256 {bench.baseline_sha256}")
    # A run key is `benchmark.framework.run`; `baseline draft` names its --repo runs by folder.
    prefix = f"{bench.baseline.benchmark}."
    record = bench.baseline.checked_against
    folders = [r.run for r in record.runs if not r.run.startswith(prefix)] if record else []
    if folders:
        click.echo(f"warning: checked_against names runs by folder, not run key ({folders[0]}): "
                   "the judge ignores runs not named by run key, so those probes prove no "
                   "absence; record the registered runs (delete the lock, baseline lint --runs "
                   "--record, freeze)")  # fmt: skip


@baseline_group.command("draft")
@click.argument("prd", type=click.Path(path_type=Path))
@click.option("--benchmark", required=True, help="Benchmark name written into the draft.")
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Draft file (default: _ac-baseline.yaml beside the PRD).")  # fmt: skip
@click.option("--force", is_flag=True, help="Replace an existing unfrozen baseline.")
@click.option("--priority-map", default="",
              help="LABEL=P0|P1|P2 pairs over the PRD dialect's table, written to the draft's "
                   "priority_map (e.g. P4=P1).")  # fmt: skip
@click.option("--drafter", type=click.Choice(["offline", "claude"]), default="offline",
              show_default=True,
              help="offline: deterministic rules, no network; claude: the same rules through "
                   "Claude (ANTHROPIC_API_KEY), with verified probes.")  # fmt: skip
@click.option("--repo", "repos", type=click.Path(path_type=Path), multiple=True,
              help="A run's repository (read through git), once per run: offline, probes "
                   "are proposed from identifiers the PRD fixes that decide a check in at "
                   "least two runs; claude: its probes are tried in every run, a probe "
                   "counting in one run of several is written proposed, and the runs are "
                   "recorded (checked_against).")  # fmt: skip
@click.option("--head", "heads", multiple=True,
              help="Commit of each --repo, in order (one --head: all; default HEAD).")  # fmt: skip
@click.option("--accept-proposals", is_flag=True,
              help="offline: write the proposed probes as accepted probes.")  # fmt: skip
@click.option(
    "--max-cost",
    type=float,
    default=None,
    help="claude: spending limit in USD (default: $EVALFLOW_MAX_COST_USD, none).",
)
@click.option("--warehouse", default=None,
              help="claude: warehouse whose response cache is used (default: "
                   "$EVALFLOW_WAREHOUSE or data/warehouse).")  # fmt: skip
@click.option("--anchors-from", type=click.Path(path_type=Path), default=None,
              help="claude: a baseline whose calibration anchors Claude reads.")  # fmt: skip
@click.option("--rejudge", type=click.Choice(["unscored"]), default=None,
              help="claude: ask again the ACs whose stored answers were unusable (drafted by "
                   "the offline fallback); without it every stored answer is replayed, "
                   "nothing paid again.")  # fmt: skip
# Its git workspace (in $TMPDIR: no warehouse) goes when the command ends, however it ends.
@throwaway_workspace()
def draft(
    prd: Path,
    benchmark: str,
    out: Path | None,
    force: bool,
    priority_map: str,
    drafter: str,
    repos: tuple[Path, ...],
    heads: tuple[str, ...],
    accept_proposals: bool,
    max_cost: float | None,
    warehouse: str | None,
    anchors_from: Path | None,
    rejudge: str | None,
) -> None:
    """Draft a baseline from the PRD: the offline rules (default, deterministic) or Claude."""
    from evalflow.domain.baseline_draft import OfflineDrafter, render_draft
    from evalflow.domain.prd import parse_prd
    from evalflow.importers.model import parse_priority_map

    out = out or prd.parent / "_ac-baseline.yaml"
    if lock_path(out).is_file():
        raise InputError("the baseline is frozen; a draft never overwrites it", where=str(out),
                         fix="write the draft elsewhere with --out")  # fmt: skip
    if out.exists() and not force:
        raise InputError("baseline file exists", where=str(out), fix="pass --force or --out")
    for given, name in ((anchors_from, "--anchors-from"), (rejudge, "--rejudge")):
        if given is not None and drafter != "claude":
            raise InputError(f"{name} is read by the Claude drafter only", where=name,
                             fix="pass --drafter claude, or drop it")  # fmt: skip
    names = [r.resolve().name for r in repos]  # a run's name in the draft and its record
    if len(set(names)) < len(names):
        raise InputError("two --repo folders have the same name", where="--repo",
                         fix="give each run's repository its own folder name")  # fmt: skip
    if accept_proposals and (drafter != "offline" or not repos):
        raise InputError(
            "--accept-proposals accepts the offline drafter's proposals",
            where="--accept-proposals",
            fix="pass --drafter offline and --repo",
        )
    if drafter == "claude":
        from evalflow.judges.registry import require_api_key

        require_api_key("--drafter claude")  # before any work: exit 2, not an SDK error
    mapping = parse_priority_map(priority_map, {})
    parsed = parse_prd(read_text(prd, "PRD"), str(prd), priority_mapping=mapping)
    if len(heads) > 1 and len(heads) != len(repos):
        raise InputError(f"{len(heads)} --head for {len(repos)} --repo", where="--head",
                         fix="give one --head per --repo, in order (or one for all)")  # fmt: skip
    commits = list(heads) * len(repos) if len(heads) == 1 else list(heads) or ["HEAD"] * len(repos)
    runs = [_snapshot(r, c) for r, c in zip(repos, commits, strict=True)]
    chosen = OfflineDrafter() if drafter == "offline" else _claude_drafter(
        tuple(zip(names, runs, strict=True)), max_cost, warehouse, anchors_from,
        rejudge == "unscored")  # fmt: skip
    acs = chosen.draft(parsed, benchmark)
    if drafter == "offline" and repos:
        from evalflow.judges.proposals import propose

        acs, count = propose(acs, runs, accept=accept_proposals)
        state = "accepted" if accept_proposals else "proposed (freeze refuses them until accepted)"
        click.echo(f"probes: {count.proposed} {state} on {count.checks_with_probes} of "
                   f"{count.checks} checks, from {count.candidates} candidate(s) the PRD's "
                   f"identifiers give, tried on {len(repos)} run(s)")  # fmt: skip
    rel = os.path.relpath(prd.resolve(), out.resolve().parent)
    out.write_text(render_draft(acs, benchmark, str(rel), mapping, chosen.name))
    click.echo(f"wrote draft {out} (review it, add probes and anchors, then freeze)")
    if drafter == "claude" and runs:
        _write_record(out, _draft_record(out, tuple(zip(names, runs, strict=True))))
        click.echo(f"recorded checked_against: {', '.join(names)} (baseline lint --runs "
                   "--record replaces it with the registered runs)")  # fmt: skip
    if drafter == "claude":
        usage = chosen.drain_usage()  # type: ignore[attr-defined]
        paid = [u for u in usage if not u.cached]
        fallbacks = sorted({ac.id for ac in acs for c in ac.checks if "offline fallback" in c.rule})
        written = [p for ac in acs for c in ac.checks for p in c.probes]
        one_run = sum(p.proposed for p in written)
        cost = sum(u.usd for u in paid)
        click.echo(f"Claude drafter: {len(usage)} call(s), {len(usage) - len(paid)} from the "
                   f"cache; paid ${cost:.4f}; {len(written) - one_run} verified probe(s)"
                   + (f", {one_run} proposed (one run only)" if one_run else ""))  # fmt: skip
        if fallbacks:
            click.echo("offline rules drafted (no valid Claude answer): " + ", ".join(fallbacks))
    for story in parsed.stories:
        if story.assumed:
            click.echo(f"ASSUMED priority {story.priority}: story {story.id} has no known label "
                       "(label it, or map its label with --priority-map)")  # fmt: skip


def _claude_drafter(
    runs: tuple[tuple[str, RepoSnapshot], ...],
    max_cost: float | None,
    warehouse: str | None,
    anchors_from: Path | None,
    rejudge: bool = False,
):
    from evalflow.domain.models import Baseline
    from evalflow.io import settings
    from evalflow.io.inputs import read_yaml, validate_model
    from evalflow.judges.anthropic_judge import ClaudeSettings
    from evalflow.judges.claude_drafter import ClaudeDrafter

    overrides: dict = {"rejudge": rejudge}
    if max_cost is not None:
        overrides["max_cost_usd"] = max_cost
    anchors = ()
    if anchors_from is not None:
        what = "baseline"
        anchors = validate_model(
            Baseline, read_yaml(anchors_from, what), anchors_from, what
        ).anchors
    return ClaudeDrafter(
        ClaudeSettings.from_env(**overrides),
        runs=runs,
        anchors=anchors,
        cache_dir=settings.warehouse(warehouse).workdir / "cache",
    )


def _draft_record(path: Path, runs: tuple[tuple[str, RepoSnapshot], ...]) -> CheckedRuns:
    """What `lint --runs --record` records, for the draft's probes and the `--repo` runs
    (named by their folders, every file of each as its surface): the same search."""
    from evalflow.cli.probe import record_matches
    from evalflow.domain.models import Baseline, CheckedRun
    from evalflow.io.inputs import read_yaml, validate_model
    from evalflow.judges.base import JudgeRequest

    drafted = validate_model(Baseline, read_yaml(path, "baseline"), path, "baseline")
    checks = tuple(drafted.checks())
    requests = (
        (CheckedRun(run=name, framework=name, head=snap.commit),
         JudgeRequest(run_key=name, run=1, checks=checks, snapshot=snap,
                      diff_paths=tuple(sorted(snap.files)), test_levels=drafted.test_levels))
        for name, snap in runs
    )  # fmt: skip
    return record_matches(checks, requests)


def _snapshot(repo: Path, head: str) -> RepoSnapshot:
    from evalflow.repo.git import require_repo, resolve_commit
    from evalflow.repo.snapshot import load_snapshot

    top = require_repo(repo)
    return load_snapshot(top, resolve_commit(top, head))


@baseline_group.command("lint")
@baseline_argument
@click.option("--strict", is_flag=True, help="Exit 1 when there is any warning.")
@click.option("--repo", type=click.Path(path_type=Path), default=None,
              help="Also check each probe against this repository (read through git).")  # fmt: skip
@click.option("--head", default="HEAD", show_default=True, help="Commit of --repo to read.")
@click.option("--runs", "all_runs", is_flag=True,
              help="Run every probe against every run of the benchmark (the manifests in the "
                   "baseline's runs/ folder, plus --run) and warn about probes that would "
                   "judge them unalike.")  # fmt: skip
@click.option("--run", "extra_runs", multiple=True, type=click.Path(path_type=Path),
              help="--runs: a further run manifest of this benchmark (repeat).")  # fmt: skip
@click.option("--record", is_flag=True,
              help="--runs: write which runs were checked and where each probe matched "
                   "into the baseline (checked_against), before it is frozen.")  # fmt: skip
@click.option("--warehouse", default=None,
              help="--runs: where runs given as source trees are built (default: "
                   "$EVALFLOW_WAREHOUSE or data/warehouse).")  # fmt: skip
# Its git workspace (in $TMPDIR: no warehouse) goes when the command ends, however it ends.
@throwaway_workspace()
def lint(baseline: Path, strict: bool, repo: Path | None, head: str, all_runs: bool,
         extra_runs: tuple[Path, ...], record: bool, warehouse: str | None) -> None:  # fmt: skip
    """Warn about violations of SPEC's decomposition rules (exit 0; --strict: 1 on warnings)."""
    # Here, like the drafting rules in `draft`: `baseline check` does not load them.
    from evalflow.domain.baseline_lint import lint_baseline, lint_probes

    if (extra_runs or record) and not all_runs:
        raise InputError("--run and --record go with --runs", where="baseline lint",
                         fix="add --runs")  # fmt: skip
    if record and lock_path(baseline).is_file():
        raise InputError("the baseline is frozen; recording its runs would change its hash",
                         where=str(baseline),
                         fix="record before freezing (delete the lock only if no run was "
                             "scored against it, then baseline freeze --force)")  # fmt: skip
    bench = load_benchmark(baseline)
    warnings = [w.line() for w in lint_baseline(bench.baseline)]
    if repo is not None:
        from evalflow.repo.git import require_repo, resolve_commit
        from evalflow.repo.scopes import is_code_file, is_doc_file
        from evalflow.repo.snapshot import load_snapshot

        top = require_repo(repo)
        snap = load_snapshot(top, resolve_commit(top, head))
        files = {p: f.text for p, f in snap.files.items()}
        warnings += [w.line() for w in lint_probes(bench.baseline, files, is_code_file,
                                                   is_doc_file)]  # fmt: skip
    if all_runs:
        from evalflow.cli.probe import check_runs
        from evalflow.domain.portability import portability_findings

        checked = check_runs(bench, baseline, extra_runs, warehouse)
        click.echo(f"checked {len(checked.record.runs)} run(s): "
                   + ", ".join(r.run for r in checked.record.runs))  # fmt: skip
        warnings += [
            w.line()
            for w in portability_findings(
                bench.baseline, checked.record.matched, checked.layouts, bench.prd_text
            )
        ]
        if record:
            _write_record(baseline, checked.record)
            click.echo(f"recorded checked_against in {baseline} (now freeze it)")
    for warning in warnings:
        click.echo(f"warning: {warning}")
    click.echo(f"{len(warnings)} warning(s)")
    if strict and warnings:
        raise SystemExit(1)


_RECORD_MARK = "# checked_against: written by `evalflow baseline lint --runs --record`"


def _write_record(path: Path, record: CheckedRuns) -> None:
    """Replace the baseline's generated `checked_against` block (kept last in the file, after
    a marker line, so the author's text and comments above it stay as written)."""
    import yaml

    text = read_text(path, "baseline")
    head = text.split(_RECORD_MARK, 1)[0].rstrip("\n")
    if "\nchecked_against:" in "\n" + head:
        raise InputError("the baseline has a hand-written checked_against", where=str(path),
                         fix="remove it; --record writes its own")  # fmt: skip
    block = yaml.safe_dump(
        {"checked_against": record.model_dump(mode="json")},
        sort_keys=False,
        default_flow_style=None,
        width=10_000,
    )
    path.write_text(f"{head}\n\n{_RECORD_MARK}\n{block}")
