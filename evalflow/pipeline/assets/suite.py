"""Suite assets: framework-level ratings across the benchmarks of every suite file, and plots.

- `suite_rating` / `suite_pair` / `suite_prd_score` / `suite_left_out`: for every suite under
  `<benchmarks root>/_suites/`, Bradley–Terry over AC matches pooled across its PRDs with
  frameworks as players, a seeded 1,000-sample cluster bootstrap (PRDs, then runs within each
  PRD), the mean Final per framework with its CI, the judge / run-to-run / PRD-to-PRD
  variance decomposition and P(A better than B) (`evalflow.domain.ranking.suite`);
- `suite_plots`: per suite, the framework forest plot, the Final-vs-cost Pareto plot with CI
  bars and the per-PRD heat map (PNG and SVG), and its static HTML page.
Partition-independent: they read the leaderboard and the per-run tables of all evaluations.
A suite that must be refused (runs scored by several judges with no pin, several baselines
in one benchmark, fewer than two frameworks) is not rated; its runs are listed in
`suite_left_out` with the refusal, and `evalflow leaderboard --suite` exits 2 with it.
"""

import dagster as dg
import pandas as pd

from evalflow.errors import InputError
from evalflow.io.suites import known_suites, rate_from_tables
from evalflow.pipeline.assets.common import IO, KINDS, table_metadata
from evalflow.pipeline.resources import EvalflowResource
from evalflow.reports import html, plots
from evalflow.storage.tables import columns

GROUP = "ranking"
SUITE_SEED = 0
SUITE_TABLES = ("suite_rating", "suite_pair", "suite_prd_score", "suite_left_out")
# Like leaderboard_plots: a table of the plot files matplotlib drew.
PLOT_KINDS = {"python", "parquet", "matplotlib"}


def rate_all_suites(
    leaderboard: pd.DataFrame,
    ac_score: pd.DataFrame,
    majority_vote: pd.DataFrame,
    run_manifest: pd.DataFrame,
    log=None,
) -> dict[str, pd.DataFrame]:
    """SUITE_TABLES frames over every known suite (contract columns, suite first)."""
    parts: dict[str, list[pd.DataFrame]] = {name: [] for name in SUITE_TABLES}
    for suite in known_suites():
        try:
            report = rate_from_tables(
                suite, leaderboard, ac_score, majority_vote, run_manifest, seed=SUITE_SEED
            )
        except InputError as error:
            if log is not None:
                log.warning(f"suite {suite.name} not rated: {error.one_line()}")
            runs = leaderboard[leaderboard["benchmark"].isin(list(suite.weights))]
            refused = runs[["benchmark", "framework", "run_key"]].assign(
                reason=f"suite refused: {error.what}"
            )
            parts["suite_left_out"].append(refused.assign(suite=suite.name))
            continue
        judge = {k: report.judge[k] for k in ("judge_id", "judge_model", "judge_prompt_version")}
        parts["suite_rating"].append(
            report.rating.assign(
                suite=suite.name,
                separability=report.separability,
                **judge,
                n_samples=report.n_samples,
                seed=report.seed,
            )
        )
        parts["suite_pair"].append(report.pairs.assign(suite=suite.name))
        parts["suite_prd_score"].append(report.prd_scores.assign(suite=suite.name))
        parts["suite_left_out"].append(report.left_out.assign(suite=suite.name))
    return {
        name: (
            pd.concat(frames, ignore_index=True).reindex(columns=columns(name))
            if frames
            else pd.DataFrame(columns=columns(name))
        )
        for name, frames in parts.items()
    }


@dg.multi_asset(
    group_name=GROUP,
    outs={
        "suite_rating": dg.AssetOut(
            io_manager_key=IO,
            description="Framework ratings per suite, 95 % cluster CIs",
            kinds=KINDS,
        ),
        "suite_pair": dg.AssetOut(
            io_manager_key=IO,
            description="P(A better than B) per suite framework pair",
            kinds=KINDS,
        ),
        "suite_prd_score": dg.AssetOut(
            io_manager_key=IO,
            description="Framework × PRD mean Final and noise per suite",
            kinds=KINDS,
        ),
        "suite_left_out": dg.AssetOut(
            io_manager_key=IO, description="Runs each suite rating left out, and why", kinds=KINDS
        ),
    },
)
def suite_rating(
    context: dg.AssetExecutionContext,
    leaderboard: pd.DataFrame,
    ac_score: pd.DataFrame,
    majority_vote: pd.DataFrame,
    run_manifest: pd.DataFrame,
):
    """Framework-level Bradley–Terry ratings per suite (frameworks as players, repeated runs
    as samples), seeded 1,000-sample cluster bootstrap, variance decomposition."""
    frames = rate_all_suites(leaderboard, ac_score, majority_vote, run_manifest, context.log)
    for name in SUITE_TABLES:
        yield dg.Output(frames[name], output_name=name, metadata=table_metadata(name, frames[name]))


@dg.asset(io_manager_key=IO, group_name=GROUP, kinds=PLOT_KINDS)
def suite_plots(
    context: dg.AssetExecutionContext,
    evalflow: EvalflowResource,
    suite_rating: pd.DataFrame,
    suite_prd_score: pd.DataFrame,
) -> pd.DataFrame:
    """Per suite: framework forest plot with CIs, Final-vs-cost Pareto with CI bars (Adjusted
    Final when a gate failed, labelled) and per-PRD heat map, PNG + SVG, and the suite's
    static HTML page (`reports/_suites/<suite>.html`)."""
    workdir = evalflow.get_warehouse().workdir
    root = workdir / "plots" / "_suites"
    rows, metadata = [], {}
    for name, rating in suite_rating.groupby("suite", sort=True):
        prd = suite_prd_score[suite_prd_score["suite"] == name]
        made = plots.suite_plots(rating, prd, root / str(name), suite=str(name))
        rows += [
            {"suite": name, "plot": plot, "png_path": str(files.png), "svg_path": str(files.svg)}
            for plot, files in made.items()
        ]
        metadata |= {f"{name}/{plot}": dg.MetadataValue.md(plots.markdown_image(f.png, plot))
                     for plot, f in made.items()}  # fmt: skip
        first = rating.iloc[0]
        page = html.render_suite_html(
            f"Suite leaderboard — {name}",
            f"Judge {first['judge_id']}; {first['n_samples']}-sample cluster bootstrap (PRDs, "
            f"then runs), seed {first['seed']}.",
            rating,
            prd,
        )
        path = workdir / "reports" / "_suites" / f"{name}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page, encoding="utf-8")
        metadata[f"{name}/html"] = dg.MetadataValue.path(str(path))
    frame = pd.DataFrame(rows, columns=columns("suite_plots"))
    context.add_output_metadata({**table_metadata("suite_plots", frame), **metadata})
    return frame
