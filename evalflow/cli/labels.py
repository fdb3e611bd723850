"""`evalflow labels template BASELINE`: a labels file to fill in for the labels judge.

One entry per check of the baseline, in baseline order, with `status: UNSCORED` and empty
evidence/searches (the format of `evalflow.judges.labels`, documented in
docs/configuration.md). With several `--run-key`, or `--runs DIR` (the benchmark's run
manifests), one file for the whole benchmark: a block of entries per run key, scored in one
call. A labeller replaces each status with MET or UNMET, adds `file:line` evidence for MET and
the searches they ran for UNMET. Never overwrites an existing file.
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
@click.option("--run-key", "run_keys", multiple=True,
              help="A run the file labels (repeat for several: one block per run).")  # fmt: skip
@click.option("--runs", "runs_dir", type=click.Path(path_type=Path), default=None,
              help="A folder of run manifests (*.yaml, searched below): a block each.")  # fmt: skip
def template(
    baseline: Path, out: Path | None, run_keys: tuple[str, ...], runs_dir: Path | None
) -> None:
    """Write a labels file with one UNSCORED entry per check of BASELINE."""
    bench = load_benchmark(baseline)
    keys = list(run_keys) + (_run_keys(runs_dir, bench.baseline.benchmark) if runs_dir else [])
    out = out or Path(f"{bench.baseline.benchmark}.labels.yaml")
    if out.exists():
        raise InputError("labels file exists", where=str(out), fix="choose another --out")
    lines = [
        f"# Labels for benchmark {bench.baseline.benchmark} (baseline sha256 "
        f"{bench.baseline_sha256[:16]}). Per check: status MET | UNMET | UNSCORED;",
        "# MET needs evidence [{path, start_line, end_line, quote}]; UNMET needs the searches",
        "# you ran [{pattern, scope, hits}] (SPEC core rules 1-2). See docs/configuration.md.",
    ]
    if len(keys) == 1:
        lines.append(f"run_key: {keys[0]}")
    if len(keys) > 1:
        lines.append("runs:")
        for key in keys:
            lines.append(f"  {key}:")
            lines += _entries(bench, "    ")
    else:
        lines.append("verdicts:")
        lines += _entries(bench, "  ")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    runs = f" for {len(keys)} runs" if len(keys) > 1 else ""
    click.echo(f"wrote {out} ({len(bench.baseline.checks())} checks to label{runs})")


def _entries(bench, indent: str) -> list[str]:
    lines = []
    for _, check in bench.baseline.checks():
        prop = yaml.safe_dump(check.proposition, width=10**6).strip().removesuffix("...").strip()
        lines += [
            f"{indent}# {check.kind}{' ' + check.level if check.level else ''}: {prop}",
            f"{indent}- check_id: {check.id}",
            f"{indent}  status: UNSCORED",
            f"{indent}  evidence: []",
            f"{indent}  searches: []",
            f'{indent}  rationale: ""',
        ]
    return lines


def _run_keys(runs_dir: Path, benchmark: str) -> list[str]:
    """The run keys of the benchmark's run manifests under `runs_dir`, sorted."""
    from evalflow.domain.models import RunManifest
    from evalflow.io.inputs import read_yaml, validate_model

    keys = []
    for path in sorted(runs_dir.rglob("*.yaml")):
        data = read_yaml(path, "run manifest")
        if not isinstance(data, dict) or data.get("benchmark") != benchmark or "run" not in data:
            continue  # not a manifest of this benchmark (a labels file, another benchmark)
        keys.append(validate_model(RunManifest, data, path, "run manifest").run_key)
    if not keys:
        raise InputError(f"no run manifest of benchmark {benchmark!r} found", where=str(runs_dir),
                         fix="pass the folder holding its runs/*.yaml, or --run-key")  # fmt: skip
    return sorted(set(keys))
