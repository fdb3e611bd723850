"""`evalflow probe test`: what each probe of one check matches, and the verdict it earns.

An author writing probes sees, per probe, every matching line (file:line, the text, diff
surface or not), how the heuristic judge reads it — the `within:` scope result and any
disqualifier for an impl probe, the enclosing test case and whether the line asserts for a
test-assert probe — the searches it runs, and the verdict with its rationale. It is the
judge's own code (`evalflow.judges.heuristic.explain_check`), never a re-implementation.
The repository is untrusted: it is read through git objects only (`evalflow.repo`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from evalflow.cli.output import emit_json
from evalflow.domain.models import BaselineAC, Check, CheckedRun, CheckedRuns
from evalflow.errors import InputError
from evalflow.io.inputs import Benchmark, load_benchmark
from evalflow.repo.git import throwaway_workspace

if TYPE_CHECKING:
    from evalflow.judges.base import JudgeRequest
    from evalflow.judges.heuristic import CheckExplanation, ProbeMatch

# Matching lines shown per probe: enough to see why a probe is too broad, bounded output.
_SHOWN = 20


@click.group("probe")
def probe_group() -> None:
    """Help writing the probes of a baseline's checks."""


@probe_group.command("test")
@click.argument("baseline", type=click.Path(path_type=Path))
@click.argument("check_id", required=False)
@click.option("--repo", "repos", type=click.Path(path_type=Path), multiple=True,
              help="Repository to search (read through git, never written); repeat it, one "
                   "per run, for a table of each probe's match in every run.")  # fmt: skip
@click.option("--all-runs", "all_runs", is_flag=True,
              help="Instead of --repo: every run of the benchmark (the manifests in the "
                   "baseline's runs/ folder, plus --run), one verdict per run.")  # fmt: skip
@click.option("--run", "extra_runs", multiple=True, type=click.Path(path_type=Path),
              help="--all-runs: a further run manifest of this benchmark (repeat).")  # fmt: skip
@click.option("--warehouse", default=None,
              help="--all-runs: where runs given as source trees are built.")  # fmt: skip
@click.option("--head", "heads", multiple=True,
              help="Commit to read, or WORKTREE for the working tree; one per --repo, in "
                   "order (one: all; default HEAD).")  # fmt: skip
@click.option("--base", "bases", multiple=True,
              help="Commit before the change: its diff to --head is the diff surface; one "
              "per --repo, in order (one: all). Default for one check: none, so every test "
              "lies outside it; for the table: the whole head tree, as baseline draft "
              "--repo tried the proposals.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
# Its git workspace (in $TMPDIR: no warehouse) goes when the command ends, however it ends.
@throwaway_workspace()
def test(baseline: Path, check_id: str | None, repos: tuple[Path, ...], all_runs: bool,
         extra_runs: tuple[Path, ...], warehouse: str | None, heads: tuple[str, ...],
         bases: tuple[str, ...], as_json: bool) -> None:  # fmt: skip
    """Show what each probe of CHECK_ID matches in --repo (or in every run: --all-runs) and
    the heuristic verdict. Without CHECK_ID, or with several --repo: a table of every
    proposed probe (or CHECK_ID's probes) × run, with its match file:line or "no match"."""
    bench = load_benchmark(baseline)
    if all_runs == bool(repos):
        raise InputError(
            "give either --repo or --all-runs",
            where="probe test",
            fix="--repo PATH (once per run) for repositories, --all-runs for every run",
        )
    checks = _chosen_checks(bench, baseline, check_id)
    if all_runs and check_id is not None:
        _all_runs(bench, baseline, *checks[0], extra_runs, warehouse, as_json)
        return
    if all_runs:
        runs = _benchmark_runs(bench, baseline, extra_runs, warehouse, checks)
        _table(checks, runs, "each run's diff surface", as_json)
        return
    heads = _per_repo(heads, repos, "--head") or ("HEAD",) * len(repos)
    base_of = _per_repo(bases, repos, "--base") or (None,) * len(repos)
    if check_id is not None and len(repos) == 1:
        _one_repo(bench, *checks[0], repos[0], heads[0], base_of[0], as_json)
        return
    runs = [
        _repo_run(bench, checks, repo, head, base, whole_tree=True)
        for repo, head, base in zip(repos, heads, base_of, strict=True)
    ]
    surface = "diff to --base" if bases else "whole head tree (no --base)"
    _table(checks, runs, surface, as_json)


def _chosen_checks(
    bench: Benchmark, baseline: Path, check_id: str | None
) -> list[tuple[BaselineAC, Check]]:
    """CHECK_ID's check, or (none given) every check carrying a proposed probe."""
    if check_id is None:
        chosen = [(ac, c) for ac, c in bench.baseline.checks() if any(p.proposed for p in c.probes)]
        if not chosen:
            raise InputError("no proposed probes in the baseline (and no CHECK_ID)",
                             where=str(baseline),
                             fix="name a check, or draft with baseline draft --repo … to get "
                                 "proposals")  # fmt: skip
        return chosen
    found = [(ac, c) for ac, c in bench.baseline.checks() if c.id == check_id]
    if not found:
        ids = ", ".join(c.id for _, c in bench.baseline.checks()[:8])
        raise InputError(f"no check {check_id!r} in the baseline", where=str(baseline),
                         fix=f"use one of its check ids ({ids}, …)")  # fmt: skip
    return found[:1]


def _per_repo(given: tuple[str, ...], repos: tuple[Path, ...], name: str) -> tuple[str, ...]:
    """One value for every --repo, in order: as given (one each) or one for all."""
    if len(given) == 1:
        return given * len(repos)
    if given and len(given) != len(repos):
        raise InputError(f"{len(given)} {name} for {len(repos)} --repo", where=name,
                         fix=f"give one {name} per --repo, in order (or one for all)")  # fmt: skip
    return given


@dataclass(frozen=True)
class _Run:
    """One run's explanation of every chosen check (the judge's own reading)."""

    label: str
    head: str
    explained: dict[str, CheckExplanation]


def _request(bench: Benchmark, checks, run_key: str, snapshot, diff: tuple[str, ...]):
    from evalflow.domain.portability import portable_probes
    from evalflow.judges.base import JudgeRequest

    return JudgeRequest(
        run_key=run_key,
        run=1,
        checks=tuple(checks),
        snapshot=snapshot,
        diff_paths=diff,
        anchors=bench.baseline.anchors,
        test_levels=bench.baseline.test_levels,
        portable=portable_probes(bench.baseline.checked_against, run_key),
    )


def _open_repo(repo: Path, head: str, base: str | None, whole_tree: bool):
    """(top, snapshot, base sha, diff surface) of one repository read through git; without
    `base` the diff surface is empty, or every file at head when `whole_tree`."""
    from evalflow.repo.diff_surface import diff_surface
    from evalflow.repo.git import require_repo, resolve_commit
    from evalflow.repo.snapshot import WORKTREE, load_snapshot, load_worktree_snapshot

    top = require_repo(repo)
    worktree = head == WORKTREE
    head_sha = resolve_commit(top, "HEAD" if worktree else head)
    base_sha = resolve_commit(top, base) if base is not None else None
    snapshot = load_worktree_snapshot(top, head_sha) if worktree else load_snapshot(top, head_sha)
    diff: tuple[str, ...] = tuple(sorted(snapshot.files)) if whole_tree else ()
    if base_sha is not None:
        surface = diff_surface(top, base_sha, WORKTREE if worktree else head_sha)
        diff = tuple(f.path for f in surface if f.status != "deleted")
    return top, snapshot, base_sha, diff


def _repo_run(bench: Benchmark, checks, repo: Path, head: str, base: str | None,
              whole_tree: bool) -> _Run:  # fmt: skip
    from evalflow.judges.heuristic import HeuristicJudge, explain_check

    top, snapshot, _, diff = _open_repo(repo, head, base, whole_tree)
    request = _request(bench, checks, "probe-test", snapshot, diff)
    judge = HeuristicJudge()
    explained = {c.id: explain_check(judge, request, ac, c) for ac, c in checks}
    return _Run(top.name, snapshot.commit, explained)


def _benchmark_runs(bench: Benchmark, baseline: Path, extra: tuple[Path, ...],
                    warehouse: str | None, checks) -> list[_Run]:  # fmt: skip
    from evalflow.io import settings
    from evalflow.io.evaluation import open_snapshot, prepare_run
    from evalflow.judges.heuristic import HeuristicJudge, explain_check

    workdir = settings.warehouse(warehouse).workdir
    runs = []
    for path in benchmark_manifests(baseline, extra):
        prepared = prepare_run(path, workdir)
        request = _request(
            bench, checks, prepared.run_key, open_snapshot(prepared), prepared.diff_paths
        )
        judge = HeuristicJudge()
        explained = {c.id: explain_check(judge, request, ac, c) for ac, c in checks}
        runs.append(_Run(prepared.run_key, prepared.head_sha, explained))
    return runs


def _cell(matches: tuple[ProbeMatch, ...]) -> str:
    """The first line the judge counts as proof (file:line, "+N" more), else why none."""
    counted = [m for m in matches if m.counts]
    if counted:
        more = f" (+{len(counted) - 1})" if len(counted) > 1 else ""
        return f"{counted[0].path}:{counted[0].line}{more}"
    if matches:
        return f"no counted match ({len(matches)} line(s) not proof)"
    return "no match"


def _table(checks, runs: list[_Run], surface: str, as_json: bool) -> None:
    """Every probe of `checks` × every run: where it matches, and the check's verdict there."""
    rows = []
    for _, check in checks:
        for n, probe in enumerate(check.probes):
            cells = [_cell(run.explained[check.id].probes[n].matches) for run in runs]
            rows.append((check, n, probe, cells))
    if as_json:
        emit_json(
            {
                "diff_surface": surface,
                "runs": [{"run": r.label, "head": r.head} for r in runs],
                "probes": [
                    {
                        "check": check.id,
                        "probe": probe.model_dump(mode="json", exclude_defaults=True),
                        "runs": [
                            [asdict(m) for m in run.explained[check.id].probes[n].matches]
                            for run in runs
                        ],
                    }
                    for check, n, probe, _ in rows
                ],
                "verdicts": {
                    c.id: [run.explained[c.id].verdict.status for run in runs] for _, c in checks
                },
            }
        )
        return
    click.echo(f"diff surface: {surface}")
    for n, run in enumerate(runs, start=1):
        click.echo(f"run {n}: {run.label} at {run.head[:12]}")
    for _, check in checks:
        verdicts = ", ".join(
            f"run {n} {run.explained[check.id].verdict.status}" for n, run in enumerate(runs, 1)
        )
        click.echo(f"{check.id} ({check.kind}): {check.proposition} [{verdicts}]")
        if not check.probes:
            click.echo("  no probes")
        for c, n, probe, cells in rows:
            if c.id != check.id:
                continue
            mark = " (proposed)" if probe.proposed else ""
            click.echo(f"  probe {n + 1}: {probe.kind} '{probe.pattern}'{mark}")
            for k, cell in enumerate(cells, start=1):
                click.echo(f"    run {k}: {cell}")


def _one_repo(bench: Benchmark, ac: BaselineAC, check: Check, repo: Path, head: str,
              base: str | None, as_json: bool) -> None:  # fmt: skip
    from evalflow.judges.heuristic import HeuristicJudge, explain_check

    top, snapshot, base_sha, diff = _open_repo(repo, head, base, whole_tree=False)
    request = _request(bench, ((ac, check),), "probe-test", snapshot, diff)
    result = explain_check(HeuristicJudge(), request, ac, check)
    if as_json:
        emit_json(
            {
                "check": check.id,
                "kind": check.kind,
                "head": snapshot.commit,
                "base": base_sha,
                "diff_surface": list(diff),
                "probes": [
                    {
                        "probe": p.probe.model_dump(mode="json", exclude_defaults=True),
                        "matches": [asdict(m) for m in p.matches],
                        "searches": [s.model_dump(mode="json") for s in p.searches],
                    }
                    for p in result.probes
                ],
                "verdict": {
                    "status": result.verdict.status,
                    "rationale": result.verdict.rationale,
                },
            }
        )
        return
    click.echo(f"check {check.id} ({check.kind}): {check.proposition}")
    click.echo(
        f"repo {top} at {snapshot.commit[:12]}; diff surface: "
        + (f"{len(diff)} file(s) since {base_sha[:12]}" if base_sha else "none (no --base)")
    )
    if not check.probes:
        click.echo("no probes: the heuristic judge cannot prove this check")
    for n, explained in enumerate(result.probes, start=1):
        p = explained.probe
        # The pattern is shown as it is written in single-quoted YAML: no doubled escapes.
        where = ", ".join(p.path_globs) + (" (docs)" if p.files == "docs" else "")
        if p.within is not None:
            where += " within " + ", ".join(
                f"{k}={v}" for k, v in p.within.model_dump(exclude_none=True).items()
            )
        click.echo(f"probe {n}: {p.kind} '{p.pattern}' in {where}")
        for search in explained.searches:
            click.echo(f"  searched {search.scope}: {search.hits} hit(s)")
        if not explained.matches:
            click.echo("  no line matches")
        for match in explained.matches[:_SHOWN]:
            click.echo(f"  {_line(match, p.kind == 'test-assert')}")
        if len(explained.matches) > _SHOWN:
            click.echo(f"  … {len(explained.matches) - _SHOWN} more matching line(s) (--json)")
    click.echo(f"verdict: {result.verdict.status}: {result.verdict.rationale}")
    if base_sha is None and check.kind == "T":
        click.echo("note: without --base no test is in the diff surface, so a T-check cannot "
                   "be MET (give --base to see the scoring verdict)")  # fmt: skip


def _all_runs(
    bench: Benchmark,
    baseline: Path,
    ac: BaselineAC,
    check: Check,
    extra: tuple[Path, ...],
    warehouse: str | None,
    as_json: bool,
) -> None:
    """`probe test --all-runs`: the check's verdict and each probe's matches in every run, so
    a probe that only fits one implementation shows before the baseline is frozen."""
    from evalflow.domain.portability import portable_probes
    from evalflow.io import settings
    from evalflow.io.evaluation import open_snapshot, prepare_run
    from evalflow.judges.base import JudgeRequest
    from evalflow.judges.heuristic import HeuristicJudge, explain_check

    workdir = settings.warehouse(warehouse).workdir
    rows = []
    for path in benchmark_manifests(baseline, extra):
        prepared = prepare_run(path, workdir)
        request = JudgeRequest(
            run_key=prepared.run_key,
            run=1,
            checks=((ac, check),),
            snapshot=open_snapshot(prepared),
            diff_paths=prepared.diff_paths,
            test_levels=bench.baseline.test_levels,
            portable=portable_probes(bench.baseline.checked_against, prepared.run_key),
        )
        result = explain_check(HeuristicJudge(), request, ac, check)
        rows.append(
            {
                "run_key": prepared.run_key,
                "status": result.verdict.status,
                "rationale": result.verdict.rationale,
                "matches": [len(p.matches) for p in result.probes],
                "counted": [sum(m.counts for m in p.matches) for p in result.probes],
            }
        )
    if as_json:
        emit_json({"check": check.id, "runs": rows})
        return
    click.echo(f"check {check.id} ({check.kind}): {check.proposition}")
    for row in rows:
        per_probe = ", ".join(
            f"probe {n}: {m} line(s), {c} counted"
            for n, (m, c) in enumerate(zip(row["matches"], row["counted"], strict=True), 1)
        )
        click.echo(f"{row['run_key']}: {row['status']} ({per_probe}): {row['rationale']}")


@dataclass(frozen=True)
class RunsChecked:
    """Every probe run against every run of a benchmark (`check_runs`)."""

    record: CheckedRuns
    # run key → the paths its change touched (its own source layout)
    layouts: dict[str, tuple[str, ...]]


def benchmark_manifests(baseline: Path, extra: tuple[Path, ...]) -> list[Path]:
    """The benchmark's run manifests: those in the baseline's `runs/` folder, plus `extra`."""
    found = sorted((baseline.parent / "runs").glob("*.yaml")) + list(extra)
    if not found:
        raise InputError("no run manifests to check", where=str(baseline.parent / "runs"),
                         fix="put the runs' manifests there or pass --run MANIFEST")  # fmt: skip
    return found


def check_runs(
    bench: Benchmark, baseline: Path, extra: tuple[Path, ...], warehouse: str | None
) -> RunsChecked:
    """Run every probe of the baseline against every run of its benchmark, with the judge's
    own search: which runs were checked (key, framework, head) and, per probe, the runs in
    which its pattern matches (`record_matches`)."""
    from evalflow.io import settings
    from evalflow.io.evaluation import open_snapshot, prepare_run
    from evalflow.judges.base import JudgeRequest

    workdir = settings.warehouse(warehouse).workdir
    layouts: dict[str, tuple[str, ...]] = {}

    def runs() -> Iterator[tuple[CheckedRun, JudgeRequest]]:
        # One run prepared and held at a time.
        for path in benchmark_manifests(baseline, extra):
            prepared = prepare_run(path, workdir)
            if prepared.benchmark.baseline_sha256 != bench.baseline_sha256:
                raise InputError(
                    "this run's manifest points at another baseline",
                    where=str(path),
                    fix="check only the runs of this baseline's benchmark",
                )
            request = JudgeRequest(
                run_key=prepared.run_key,
                run=1,
                checks=tuple(bench.baseline.checks()),
                snapshot=open_snapshot(prepared),
                diff_paths=prepared.diff_paths,
                test_levels=bench.baseline.test_levels,
            )
            layouts[prepared.run_key] = prepared.diff_paths
            yield CheckedRun(run=prepared.run_key, framework=prepared.manifest.framework,
                             head=prepared.head_sha), request  # fmt: skip

    return RunsChecked(record_matches(bench.baseline.checks(), runs()), layouts)


def record_matches(
    checks: Iterable[tuple[BaselineAC, Check]], runs: Iterable[tuple[CheckedRun, JudgeRequest]]
) -> CheckedRuns:
    """The `checked_against` record: the runs checked and, per probe of `checks`, the runs in
    which its pattern matches (`evalflow.judges.heuristic.matching_probes`). Shared by
    `baseline lint --runs --record` and `baseline draft --drafter claude`."""
    from evalflow.judges.heuristic import HeuristicJudge, matching_probes

    checked: list[CheckedRun] = []
    matched: dict[str, list[list[str]]] = {c.id: [[] for _ in c.probes] for _, c in checks}
    for run, request in runs:
        for check_id, matches in matching_probes(HeuristicJudge(), request).items():
            for n, ok in enumerate(matches):
                if ok:
                    matched[check_id][n].append(run.run)
        checked.append(run)
    return CheckedRuns(
        runs=tuple(sorted(checked, key=lambda r: r.run)),
        matched={
            c: tuple(tuple(sorted(keys)) for keys in per) for c, per in matched.items() if per
        },
    )


def _line(match: ProbeMatch, tests: bool) -> str:
    """`+` a line the judge counts as proof, `-` one it does not, with the reason why not."""
    where = "diff" if match.in_diff else "repo"
    notes: list[str] = []
    if match.in_scope is not None:
        notes.append("in within scope" if match.in_scope else "outside within scope")
    if match.disqualifier:
        notes.append(match.disqualifier)
    if match.test is not None:
        notes.append(f"test {match.test} ({match.level})")
        notes.append("asserts" if match.asserts else "not an assertion line")
        if match.skipped:
            notes.append("skipped")
        if match.mock_only:
            notes.append("mock-only")
    elif tests:
        notes.append("outside any test case")
    mark = "+" if match.counts else "-"
    detail = f" [{'; '.join(notes)}]" if notes else ""
    return f"{mark} {match.path}:{match.line} ({where}){detail}  {match.text}"
