"""`evalflow labels template BASELINE`: a labels file to fill in for the labels judge.

One entry per check of the baseline, in baseline order, with `status: UNSCORED` and empty
evidence/searches (the format of `evalflow.judges.labels`, documented in
docs/configuration.md). A labeller replaces each status with MET or UNMET, adds `file:line`
evidence for MET and the searches they ran for UNMET. Never overwrites an existing file.
"""

from __future__ import annotations

from pathlib import Path

import click
import yaml

from evalflow.errors import InputError
from evalflow.io.inputs import load_benchmark


@click.group("labels")
def labels_group() -> None:
    """Labels files for the labels judge (human or external verdicts)."""


@labels_group.command("template")
@click.argument("baseline", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Output file (default: ./<benchmark>.labels.yaml).")  # fmt: skip
@click.option("--run-key", default=None, help="Restrict the file to one run_key.")
def template(baseline: Path, out: Path | None, run_key: str | None) -> None:
    """Write a labels file with one UNSCORED entry per check of BASELINE."""
    bench = load_benchmark(baseline)
    out = out or Path(f"{bench.baseline.benchmark}.labels.yaml")
    if out.exists():
        raise InputError("labels file exists", where=str(out), fix="choose another --out")
    lines = [
        f"# Labels for benchmark {bench.baseline.benchmark} (baseline sha256 "
        f"{bench.baseline_sha256[:16]}). Per check: status MET | UNMET | UNSCORED;",
        "# MET needs evidence [{path, start_line, end_line, quote}]; UNMET needs the searches",
        "# you ran [{pattern, scope, hits}] (SPEC core rules 1-2). See docs/configuration.md.",
    ]
    if run_key:
        lines.append(f"run_key: {run_key}")
    lines.append("verdicts:")
    for _, check in bench.baseline.checks():
        prop = yaml.safe_dump(check.proposition, width=10**6).strip().removesuffix("...").strip()
        lines += [
            f"  # {check.kind}{' ' + check.level if check.level else ''}: {prop}",
            f"  - check_id: {check.id}",
            "    status: UNSCORED",
            "    evidence: []",
            "    searches: []",
            '    rationale: ""',
        ]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    click.echo(f"wrote {out} ({len(bench.baseline.checks())} checks to label)")
