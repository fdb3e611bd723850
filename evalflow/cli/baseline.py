"""`evalflow baseline check|render|freeze`: the frozen AC checklist of a benchmark.

`freeze` validates the YAML against its PRD, renders `_ac-baseline.md` (never timestamped)
and records the baseline's sha256 in `_ac-baseline.lock`; `check` then refuses a baseline
whose hash no longer matches the lock, because results scored against different hashes are
never compared.
"""

from __future__ import annotations

from pathlib import Path

import click

from evalflow.cli.output import emit_json
from evalflow.domain.baseline import render_baseline_markdown
from evalflow.inputs import Benchmark, load_benchmark, lock_path

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
    _markdown_path(baseline).write_text(
        render_baseline_markdown(bench.baseline, bench.prd, bench.baseline_sha256)
    )
    lock.write_text(bench.baseline_sha256 + "\n")
    click.echo(f"frozen {bench.baseline.benchmark}: sha256 {bench.baseline_sha256}")
