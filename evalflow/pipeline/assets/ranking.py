"""Cross-run ranking assets: ratings with bootstrap CIs, the uncertainty of each Final, plots.

- `elo_bootstrap`: per ranking group, AC-by-AC matches between runs → Bradley–Terry
  (headline, order-independent) and sequential Elo (SPEC §2 constants), 500 seeded bootstrap
  samples, 95 % percentile CIs, percentile and separability;
- `final_uncertainty` / `final_pair`: per ranking group, each check redrawn from its k-run
  vote split (seeded) ⇒ a CI on every Final and P(A > B) for every pair of runs;
- `leaderboard_plots`: rating forest plot, Final-vs-cost Pareto plot with CI bars, per-story
  and per-AC heat maps (PNG and SVG) per ranking group, and each group's static HTML page.
A ranking group is one benchmark and one comparability key (baseline hash, judge id, judge
model, prompt version: `evalflow.io.evaluation.comparability`): the one key each benchmark
is ranked within (`evalflow.domain.ranking.judge_choice`, as the leaderboard chooses it);
only the results of that key that the leaderboard ranks enter (`rankable_runs`: complete
and current — an undetermined Final is never a rating).
Every asset returns its contract's empty frame when nothing is rankable.
"""

from pathlib import Path

import dagster as dg
import pandas as pd

from evalflow.domain.ranking.bootstrap import rate
from evalflow.domain.ranking.final_uncertainty import final_uncertainty as simulate
from evalflow.domain.ranking.judge_choice import chosen_results, keep
from evalflow.domain.ranking.matches import form_matches
from evalflow.domain.ranking.pareto import pareto_frontier
from evalflow.domain.rollup import PRIORITY_WEIGHTS
from evalflow.io.evaluation import checks_frame
from evalflow.io.inputs import load_benchmark, load_manifest
from evalflow.pipeline.assets.common import IO, KINDS, table_metadata
from evalflow.pipeline.assets.leaderboard import GROUP_KEYS, effective_costs, rankable_runs
from evalflow.pipeline.resources import EvalflowResource
from evalflow.reports import html, plots
from evalflow.storage.tables import columns

GROUP = "ranking"
RANKING_SEED = 0


def _ac_scores(
    ac_score: pd.DataFrame, final_score: pd.DataFrame, run_manifest: pd.DataFrame
) -> pd.DataFrame:
    meta = run_manifest[
        ["run_key", "benchmark", "framework", "baseline_sha256", "prd_sha256", "comparability_key"]
    ]
    meta = meta[meta["run_key"].isin(rankable_runs(final_score, run_manifest))]
    scored = ac_score[ac_score["scored"].astype(bool)]
    scored = scored.drop(columns=["benchmark", "framework"], errors="ignore")
    frame = scored.merge(meta, on="run_key", how="inner")
    return frame.assign(prd_id=frame["prd_sha256"].str[:12])


def _output(table: str, frame: pd.DataFrame, metadata: dict | None = None, **fields) -> dg.Output:
    return dg.Output(frame, metadata={**table_metadata(table, frame), **(metadata or {})}, **fields)


def ranked_results(
    evalflow: EvalflowResource, final_score: pd.DataFrame, run_manifest: pd.DataFrame
) -> pd.DataFrame:
    """Per run, its result of its benchmark's ranking key (`judge_choice.chosen_results`)."""
    return chosen_results(final_score, run_manifest, evalflow.ranking_judge())


@dg.asset(io_manager_key=IO, group_name=GROUP, kinds=KINDS)
def elo_bootstrap(
    evalflow: EvalflowResource,
    ac_score: pd.DataFrame,
    final_score: pd.DataFrame,
    run_manifest: pd.DataFrame,
) -> dg.Output:
    """Bradley–Terry and Elo ratings per ranking group with seeded 500-sample bootstrap CIs."""
    picked = ranked_results(evalflow, final_score, run_manifest)
    ac_score, final_score, run_manifest = (
        keep(frame, picked) for frame in (ac_score, final_score, run_manifest)
    )
    parts, left_out = [], []
    scores_by_group = _ac_scores(ac_score, final_score, run_manifest).groupby(GROUP_KEYS, sort=True)
    for (benchmark, key), scores in scores_by_group:
        if scores["run_key"].nunique() < 2:
            continue
        report = rate(form_matches(scores), seed=RANKING_SEED)
        if report.elo_left_out:
            left_out.append(f"{benchmark} ({key}): {report.elo_left_out}")
        parts.append(
            report.rating.assign(
                benchmark=benchmark,
                comparability_key=key,
                separability=report.separability,
                n_samples=report.n_samples,
                seed=report.seed,
            )
        )
    metadata = {"elo_left_out": dg.MetadataValue.text("\n".join(left_out))} if left_out else None
    if not parts:
        return _output("elo_bootstrap", pd.DataFrame(columns=columns("elo_bootstrap")))
    frame = pd.concat(parts, ignore_index=True)[columns("elo_bootstrap")]
    return _output("elo_bootstrap", frame, metadata)


def _check_votes(
    majority_vote: pd.DataFrame, ac_score: pd.DataFrame, run_manifest: pd.DataFrame
) -> pd.DataFrame:
    """The vote table joined to each check's AC, kind and story weight."""
    frames = []
    for manifest_path, runs in run_manifest.groupby("manifest_path", sort=True):
        loaded = load_manifest(Path(manifest_path))
        bench = load_benchmark(loaded.resolve(loaded.manifest.baseline))
        checks = checks_frame(bench.baseline)[["check_id", "ac_id", "kind"]]
        votes = majority_vote[majority_vote["run_key"].isin(runs["run_key"])]
        frames.append(votes.merge(checks, on="check_id", how="inner"))
    joined = pd.concat(frames, ignore_index=True)
    stories = ac_score[["run_key", "ac_id", "story_id", "priority"]]
    joined = joined.merge(stories, on=["run_key", "ac_id"], how="inner")
    return joined.assign(weight=joined["priority"].map(PRIORITY_WEIGHTS))


@dg.multi_asset(
    group_name=GROUP,
    outs={
        "final_uncertainty": dg.AssetOut(
            io_manager_key=IO, description="CI of each Final", kinds=KINDS
        ),
        "final_pair": dg.AssetOut(
            io_manager_key=IO, description="P(A > B) per pair of runs", kinds=KINDS
        ),
    },
)
def final_uncertainty(
    evalflow: EvalflowResource,
    majority_vote: pd.DataFrame,
    ac_score: pd.DataFrame,
    final_score: pd.DataFrame,
    run_manifest: pd.DataFrame,
) -> tuple[dg.Output, dg.Output]:
    """Monte Carlo of Final from each check's k-run disagreement (2,000 seeded draws)."""
    picked = ranked_results(evalflow, final_score, run_manifest)
    majority_vote, ac_score, final_score, run_manifest = (
        keep(frame, picked) for frame in (majority_vote, ac_score, final_score, run_manifest)
    )
    ranked = run_manifest[run_manifest["run_key"].isin(rankable_runs(final_score, run_manifest))]
    runs, pairs = [], []
    if not ranked.empty:
        votes = _check_votes(majority_vote, ac_score, ranked)
        # self_preference: rule 4 holds a borderline check at its voted outcome.
        group_of = ranked.set_index("run_key")[[*GROUP_KEYS, "self_preference"]]
        votes = votes.drop(columns=["benchmark", "framework"], errors="ignore")
        votes = votes.join(group_of, on="run_key")
        for (benchmark, key), group in votes.groupby(GROUP_KEYS, sort=True):
            result = simulate(group.drop(columns=GROUP_KEYS), seed=RANKING_SEED)
            labels = {"benchmark": benchmark, "comparability_key": key}
            runs.append(
                result.runs.assign(**labels, n_simulations=result.n_simulations, seed=result.seed)
            )
            pairs.append(result.pairs.assign(**labels))
    run_frame = pd.concat(runs, ignore_index=True) if runs else pd.DataFrame()
    pair_frame = pd.concat(pairs, ignore_index=True) if pairs else pd.DataFrame()
    run_frame = run_frame.reindex(columns=columns("final_uncertainty"))
    pair_frame = pair_frame.reindex(columns=columns("final_pair"))
    return (
        _output("final_uncertainty", run_frame, output_name="final_uncertainty"),
        _output("final_pair", pair_frame, output_name="final_pair"),
    )


@dg.asset(io_manager_key=IO, group_name=GROUP, kinds={"python", "parquet", "matplotlib"})
def leaderboard_plots(
    evalflow: EvalflowResource,
    leaderboard: pd.DataFrame,
    elo_bootstrap: pd.DataFrame,
    story_score: pd.DataFrame,
    ac_score: pd.DataFrame,
    gates: pd.DataFrame,
) -> dg.Output:
    """Forest plot of ratings, Final-vs-cost Pareto plot, per-story and per-AC heat maps (PNG
    + SVG) per ranking group, and the group's static HTML page (leaderboard with CI bars, AC ×
    run heat map, the plots inline) beside the reports; runs that are not ranked are left out
    of the plots and named on them."""
    workdir = evalflow.get_warehouse().workdir
    root = workdir / "plots"
    rows, pages = [], {}
    # Each run's result on the leaderboard (of its benchmark's ranking key, or its own).
    listed = leaderboard[["run_key", "judge_name"]]
    story_score, ac_score = (
        frame.merge(listed, on=["run_key", "judge_name"], how="inner")[list(frame.columns)]
        for frame in (story_score, ac_score)
    )
    for (benchmark, key), runs in leaderboard.groupby(
        ["benchmark", "ranking_key"], sort=True, dropna=False
    ):
        # The ranking key's rows first: the page names its judge from the first row.
        group = runs.sort_values("comparability_key", key=lambda k: k != key, kind="stable")
        board = group[group["ranked"].astype(bool)]
        omitted = group.loc[~group["ranked"].astype(bool), "run_key"].astype(str).tolist()
        out_dir = root / str(benchmark) / str(key)
        made = {}
        ratings = elo_bootstrap[
            (elo_bootstrap["benchmark"] == benchmark) & (elo_bootstrap["comparability_key"] == key)
        ]
        if not ratings.empty and not board.empty:
            made["rating_forest"] = plots.rating_forest_plot(
                ratings, out_dir, title=f"{benchmark}: Bradley–Terry ratings, 95 % CI"
            )
        if not board.empty:
            made["final_vs_cost"] = plots.pareto_plot(
                pareto_frontier(effective_costs(board)).merge(
                    board[["run_key", "final_ci_low", "final_ci_high", "adjusted_final"]],
                    on="run_key",
                ),
                out_dir,
                title=f"{benchmark}: Final (Adjusted when a gate failed) vs cost",
                omitted=omitted,
            )
            stories = story_score[
                story_score["run_key"].isin(board["run_key"]) & story_score["scored"].astype(bool)
            ]
            failed = gates.loc[gates["status"] == "fail", "run_key"].astype(str).tolist()
            made["story_heatmap"] = plots.story_heatmap(
                stories, out_dir, title=f"{benchmark}: story scores", omitted=omitted,
                failed_gates=failed,
            )  # fmt: skip
            made["ac_heatmap"] = plots.ac_heatmap(
                ac_score[ac_score["run_key"].isin(board["run_key"])],
                board[["run_key", "framework"]],
                gates[gates["run_key"].isin(board["run_key"])],
                out_dir,
                title=f"{benchmark}: AC score per run (priority per row)",
                omitted=omitted,
            )
        rows += [
            {"benchmark": benchmark, "comparability_key": key, "plot": name,
             "png_path": str(f.png), "svg_path": str(f.svg)}
            for name, f in made.items()
        ]  # fmt: skip
        pages[f"{benchmark}/{key}"] = board_page(
            workdir / "reports" / str(benchmark), group, ac_score, gates, made
        )
    frame = pd.DataFrame(rows, columns=columns("leaderboard_plots"))
    # The plots as images in the asset's page (Markdown with the PNG inline: Dagster has no
    # image metadata type), and the path of each group's HTML page.
    metadata: dict[str, dg.MetadataValue] = {
        f"{r['benchmark']}/{r['comparability_key']}/{r['plot']}": dg.MetadataValue.md(
            plots.markdown_image(Path(r["png_path"]), r["plot"])
        )
        for r in rows
    }
    metadata |= {f"{name}/html": dg.MetadataValue.path(str(p)) for name, p in pages.items()}
    return _output("leaderboard_plots", frame, metadata)


def board_page(
    folder: Path,
    group: pd.DataFrame,
    ac_score: pd.DataFrame,
    gates: pd.DataFrame,
    made: dict[str, plots.PlotFiles],
) -> Path:
    """Write one ranking group's HTML page beside its runs' reports; returns its path."""
    first = group.iloc[0]
    runs = []
    for row in group.to_dict("records"):
        key = row["run_key"]
        report = row.get("report_path")
        page = Path(str(report)).with_suffix(".html").name if isinstance(report, str) else None
        runs.append(
            html.BoardRun(
                board=row,
                ac=ac_score[ac_score["run_key"] == key],
                gates=gates[gates["run_key"] == key],
                report_html=page,
            )
        )
    judge = str(first["judge_id"]) + (
        f", prompt {first['judge_prompt_version']}" if first["judge_prompt_version"] else ""
    )
    text = html.render_board_html(
        f"Leaderboard — {first['benchmark']}",
        f"Ranked within: baseline {str(first['baseline_sha256'])[:12]}, judge {judge} "
        f"(comparability key {first['comparability_key']}).",
        runs,
        images={name: f.png for name, f in made.items()},
    )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"leaderboard-{first['comparability_key']}.html"
    path.write_text(text, encoding="utf-8")
    return path
