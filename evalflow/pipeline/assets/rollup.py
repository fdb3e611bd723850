"""Stage `rollup`: AC, story and final score tables (`ac_score`, `story_score`, `final_score`)."""

import dagster as dg
import pandas as pd

from evalflow.domain.gates import failed_by_run
from evalflow.domain.rollup import rollup as roll
from evalflow.domain.vote import agreement
from evalflow.io.evaluation import checks_frame, stories_frame
from evalflow.pipeline.assets.common import benchmark, run_output, stamp
from evalflow.pipeline.resources import EvalflowResource

ROLLUP_TABLES = ("ac_score", "story_score", "final_score")


def rollup(
    context: dg.AssetExecutionContext,
    evalflow: EvalflowResource,
    run_manifest: pd.DataFrame,
    majority_vote: pd.DataFrame,
    gates: pd.DataFrame,
) -> tuple[dg.Output, dg.Output, dg.Output]:
    """SPEC roll-up: AC = 0.6·I + 0.4·T, story mean, Final = Σ w·story / Σw, rounded once;
    Adjusted Final = Final × 0.5 iff a gate is a confirmed ✗."""
    bench = benchmark(context, evalflow)
    tables = roll(
        majority_vote,
        checks_frame(bench.baseline),
        stories_frame(bench.prd),
        failed_by_run(gates),
    )
    final = tables.final.merge(agreement(majority_vote), on="run_key", how="left")
    final["baseline_sha256"] = bench.baseline_sha256
    final["comparability_key"] = run_manifest["comparability_key"].iloc[0]
    row = final.iloc[0]
    story = stamp(tables.story, run_manifest)
    # An undetermined Final is NULL: the metadata says so instead of showing a number.
    summary = {
        "final": None if pd.isna(row["final"]) else float(row["final"]),
        "band": None if pd.isna(row["band"]) else str(row["band"]),
        "complete": bool(row["complete"]),
        "n_unscored": int(row["n_unscored"]),
        "rollup": dg.MetadataValue.md(rollup_markdown(row, story)),
    }
    return (
        run_output("ac_score", stamp(tables.ac, run_manifest), run_manifest),
        run_output("story_score", story, run_manifest),
        run_output("final_score", stamp(final, run_manifest), run_manifest, summary),
    )


def _cell(value: object) -> str:
    """A Markdown cell: NULL stays visibly NULL, never 0."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "NULL"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def rollup_markdown(final: pd.Series, story: pd.DataFrame) -> str:
    """The run's roll-up as the Dagster UI's Markdown preview: Final, then each story."""
    lines = [
        f"**Final** {_cell(final['final'])} ({_cell(final['band'])}), bounds "
        f"[{_cell(final['final_lower'])}, {_cell(final['final_upper'])}], "
        f"Adjusted Final {_cell(final['adjusted_final'])}, "
        f"{int(final['n_unscored'])} check(s) unscored",
        "",
        "| story | priority | weight | story_score |",
        "|---|---|---|---|",
    ]
    for s in story.sort_values("story_id").itertuples(index=False):
        lines.append(
            f"| {s.story_id} | {s.priority} | {_cell(s.weight)} | {_cell(s.story_score)} |"
        )
    return "\n".join(lines)
