"""Leaderboard plots: rating forest plot, Final-vs-cost Pareto plot, per-story and per-AC
heat maps.

Each function writes `<stem>.png` and `<stem>.svg` into a given directory and returns both
paths. Rendering never touches pyplot or the global backend: every figure is a plain
`Figure` drawn on an explicit Agg canvas, so plotting is safe inside Dagster workers and
tests. Output is byte-identical on reruns: fixed style (bundled DejaVu Sans, text as paths),
a fixed `svg.hashsalt` for SVG element ids, and no creation date in the metadata (SVG's
`Date` is dropped; PNG carries none). matplotlib is imported here and nowhere else.

Only ranked runs are drawn: a run whose Final is undetermined has no place on a Final or
score axis, so the caller passes it as `omitted` and the plot names it in a note instead.
Cell labels use the one rounding rule (`evalflow.domain.rounding.format_half_up`).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from evalflow.domain.ranking.elo import ELO_START
from evalflow.domain.rounding import format_half_up
from evalflow.errors import InputError

_STYLE = {
    "svg.hashsalt": "evalflow",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "font.size": 9.0,
    "axes.grid": False,
    "figure.dpi": 100.0,
    "savefig.dpi": 150.0,
}
_PNG_METADATA = {"Software": "evalflow"}
_SVG_METADATA = {"Date": None, "Creator": "evalflow"}
_FRONTIER_COLOUR = "#d62728"
_OTHER_COLOUR = "#7f7f7f"
_HEATMAP_ANNOTATE_MAX_CELLS = 400


@dataclass(frozen=True)
class PlotFiles:
    """The two files one plot was written to."""

    png: Path
    svg: Path


@contextmanager
def _figure(width: float, height: float) -> Iterator[Figure]:
    with mpl.rc_context(_STYLE):
        figure = Figure(figsize=(width, height), layout="constrained")
        FigureCanvasAgg(figure)
        yield figure


def _save(figure: Figure, out_dir: Path, stem: str) -> PlotFiles:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = PlotFiles(png=out_dir / f"{stem}.png", svg=out_dir / f"{stem}.svg")
    with mpl.rc_context(_STYLE):
        figure.savefig(files.png, format="png", metadata=_PNG_METADATA)
        figure.savefig(files.svg, format="svg", metadata=_SVG_METADATA)
    return files


def markdown_image(png: Path, alt: str) -> str:
    """A PNG as a Markdown image with the bytes inline (a data URI): how the Dagster UI shows a
    plot in an asset's metadata (`MetadataValue.md`), as it has no image metadata type."""
    data = base64.b64encode(Path(png).read_bytes()).decode("ascii")
    return f"![{alt}](data:image/png;base64,{data})"


def _note_omitted(figure: Figure, omitted: Sequence[str]) -> None:
    """Name the runs left out because they are not ranked (an undetermined Final)."""
    if omitted:
        figure.text(
            0.01,
            0.0,
            "not ranked (incomplete or stale), not drawn: " + ", ".join(omitted),
            fontsize=7,
            va="bottom",
        )


def _require(frame: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", where=what)
    if frame.empty:
        raise InputError("nothing to plot", where=what)


def rating_forest_plot(
    rating: pd.DataFrame,
    out_dir: Path,
    *,
    method: str = "bradley_terry",
    stem: str = "rating_forest",
    title: str | None = None,
) -> PlotFiles:
    """One row per player: rating with its CI, best at the top (the `rate()` table)."""
    _require(rating, ("player", "method", "rating", "ci_low", "ci_high"), "rating table")
    rows = rating[rating["method"] == method].sort_values(["rating", "player"])
    if rows.empty:
        raise InputError(f"no rows for method {method!r}", where="rating table")
    with _figure(6.5, 1.2 + 0.3 * len(rows)) as figure:
        _forest(
            figure,
            rows[["ci_low", "rating", "ci_high"]].to_numpy(dtype=float),
            rows["player"].astype(str).tolist(),
            f"{method.replace('_', '-')} rating (Elo scale) with CI",
            title or "Ratings with bootstrap confidence intervals",
        )
        return _save(figure, out_dir, stem)


def _forest(
    figure: Figure, intervals: np.ndarray, labels: list[str], xlabel: str, title: str
) -> None:
    """One row per (low, point, high) of `intervals`, bottom up, around the Elo start."""
    y = np.arange(len(intervals))
    ax = figure.add_subplot()
    ax.axvline(ELO_START, color=_OTHER_COLOUR, linewidth=0.8, linestyle="--")
    # Interval lines, not error bars: a percentile CI need not contain the point estimate
    # (e.g. under perfect separation), and error bars cannot draw that honestly.
    ax.hlines(y, intervals[:, 0], intervals[:, 2], color="#1f77b4", linewidth=1.5)
    ax.plot(intervals[:, 1], y, "o", color="#1f77b4", markersize=4)
    ax.set_yticks(y, labels=labels)
    ax.set_xlabel(xlabel)
    ax.set_title(title)


def pareto_plot(
    frontier: pd.DataFrame,
    out_dir: Path,
    *,
    stem: str = "final_vs_cost",
    title: str | None = None,
    omitted: Sequence[str] = (),
) -> PlotFiles:
    """The score each run is ranked by (Adjusted Final where a gate failed, else Final)
    against total cost (the `pareto_frontier` table), the frontier as a red step line.

    With `final_ci_low`/`final_ci_high` columns each point carries its Final's 95 % CI as a
    vertical bar (halved with the score for an adjusted run, `adjusted_final` not NULL, drawn
    hollow). Runs are named in a legend, never by labels beside the points (those overlapped
    where runs cost and score alike). Runs with unknown cost cannot be placed on the cost
    axis; they are named in a note, as are the `omitted` runs (not ranked).
    """
    _require(
        frontier,
        ("run_key", "final", "total_cost_usd", "cost_known", "on_frontier"),
        "cost table",
    )
    known = frontier[frontier["cost_known"].astype(bool)].sort_values(["total_cost_usd", "run_key"])
    on = known[known["on_frontier"].astype(bool)]
    unknown = frontier.loc[~frontier["cost_known"].astype(bool), "run_key"].astype(str)
    colours = mpl.colormaps["tab10"]
    with _figure(8.0, 4.5) as figure:
        ax = figure.add_subplot()
        ax.step(on["total_cost_usd"], on["final"], where="post", color=_FRONTIER_COLOUR,
                linewidth=1.0, label="Pareto frontier")  # fmt: skip
        for i, row in enumerate(known.to_dict("records")):
            adjusted = not pd.isna(row.get("adjusted_final", float("nan")))
            factor = 0.5 if adjusted else 1.0
            low, high = row.get("final_ci_low"), row.get("final_ci_high")
            bars = None
            if low is not None and high is not None and not (pd.isna(low) or pd.isna(high)):
                bars = [[max(row["final"] - low * factor, 0.0)],
                        [max(high * factor - row["final"], 0.0)]]  # fmt: skip
            colour = colours(i % 10)
            label = str(row["run_key"]) + (" (Adjusted)" if adjusted else "")
            label += " ★ frontier" if row["on_frontier"] else ""
            ax.errorbar([row["total_cost_usd"]], [row["final"]], yerr=bars,
                        fmt="*" if row["on_frontier"] else "o", markersize=9 if row["on_frontier"]
                        else 6, color=colour, ecolor=colour, elinewidth=1.0, capsize=3,
                        markerfacecolor="none" if adjusted else colour, label=label)  # fmt: skip
        ax.set_xlabel("total cost (USD): framework + judge")
        ax.set_ylabel("Final (Adjusted Final where a gate failed), 95 % CI")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
        ax.set_title(title or "Final vs cost (Pareto frontier)")
        if len(unknown):
            ax.text(
                0.01,
                0.99,
                "cost unknown (not placed): " + ", ".join(unknown),
                transform=ax.transAxes,
                va="top",
                fontsize=7,
            )
        _note_omitted(figure, omitted)
        return _save(figure, out_dir, stem)


def _annotate(ax, values: np.ndarray, spread: np.ndarray | None = None) -> None:
    """Each cell's value half up, with "±" its `spread` where there is one."""
    if values.size > _HEATMAP_ANNOTATE_MAX_CELLS:
        return
    for (i, j), value in np.ndenumerate(values):
        if np.isnan(value):
            continue
        text = format_half_up(float(value))
        if spread is not None and not np.isnan(spread[i, j]):
            text += f"\n±{format_half_up(float(spread[i, j]))}"
        ax.text(j, i, text, ha="center", va="center", fontsize=7,
                color="white" if value < 0.5 else "black")  # fmt: skip


def story_heatmap(
    story_scores: pd.DataFrame,
    out_dir: Path,
    *,
    stem: str = "story_heatmap",
    title: str | None = None,
    omitted: Sequence[str] = (),
    failed_gates: Sequence[str] = (),
) -> PlotFiles:
    """Runs × stories of story scores (0–1); a story a run lacks (or whose score is NULL,
    unmeasured) is left blank. Each story is labelled with its priority (a `priority`
    column), each run in `failed_gates` with "gate ✗" (its Final is halved). `omitted` runs
    (not ranked) are named in a note.

    Pass the roll-up's reported `story_score` (already rounded half up); the labels print it
    through the one half-up rule, which leaves a rounded value unchanged.
    """
    _require(story_scores, ("run_key", "story_id", "story_score"), "story table")
    grid = story_scores.pivot_table(
        index="run_key", columns="story_id", values="story_score", aggfunc="first", sort=True
    )
    priority = {}
    if "priority" in story_scores:
        priority = story_scores.drop_duplicates("story_id").set_index("story_id")["priority"]
    x_labels = [f"{s} ({priority[s]})" if s in priority else str(s) for s in grid.columns]
    y_labels = [f"{r}  gate ✗" if r in failed_gates else str(r) for r in grid.index]
    values = grid.to_numpy(dtype=float)
    n_runs, n_stories = values.shape
    size = (2.2 + 0.7 * n_stories, 1.3 + 0.35 * n_runs)
    labels = (x_labels, y_labels, "story score", title or "Story scores per run")
    return _score_heatmap(values, size, labels, omitted, out_dir, stem)


def ac_heatmap(
    ac_scores: pd.DataFrame,
    runs: pd.DataFrame,
    gates: pd.DataFrame,
    out_dir: Path,
    *,
    stem: str = "ac_heatmap",
    title: str | None = None,
    omitted: Sequence[str] = (),
) -> PlotFiles:
    """Acceptance criteria × framework runs of AC scores (the `ac_score` table): each AC
    labelled with its priority (P2 weighs 0 in Final), each run "<framework> <run>" with
    "gate ✗" when a gate failed (a confirmed ✗ halves its Final); an unmeasured score (NULL)
    is blank, never 0. `runs` maps run_key → framework; `gates` is the gates table."""
    _require(ac_scores, ("run_key", "ac_id", "priority", "ac_score"), "AC table")
    _require(runs, ("run_key", "framework"), "run table")
    grid = ac_scores.pivot_table(
        index="ac_id", columns="run_key", values="ac_score", aggfunc="first", sort=True,
        dropna=False,
    )  # fmt: skip
    priority = ac_scores.drop_duplicates("ac_id").set_index("ac_id")["priority"]
    framework = runs.set_index("run_key")["framework"]
    failed = set(gates.loc[gates["status"] == "fail", "run_key"]) if len(gates) else set()
    x_labels = [
        f"{framework.get(r, r)} {str(r).rsplit('.', 1)[-1]}" + ("  gate ✗" if r in failed else "")
        for r in grid.columns
    ]
    y_labels = [f"{ac} ({priority[ac]}{', w = 0' if priority[ac] == 'P2' else ''})"
                for ac in grid.index]  # fmt: skip
    values = grid.to_numpy(dtype=float)
    n_acs, n_runs = values.shape
    size = (3.0 + 0.75 * n_runs, 1.4 + 0.3 * n_acs)
    labels = (
        x_labels,
        y_labels,
        "AC score (0.6·I + 0.4·T)",
        title or "AC scores per framework run",
    )
    return _score_heatmap(values, size, labels, omitted, out_dir, stem)


def _score_heatmap(
    values: np.ndarray,
    size: tuple[float, float],
    labels: tuple[Sequence[str], Sequence[str], str, str],
    omitted: Sequence[str],
    out_dir: Path,
    stem: str,
    *,
    spread: np.ndarray | None = None,
) -> PlotFiles:
    """A grid of 0–1 scores (rows × columns), NULL cells blank, each cell labelled half up
    (with "±" its `spread`); `labels` are the column and row labels, the colour bar's and the
    title."""
    x_labels, y_labels, bar, title = labels
    n_rows, n_columns = values.shape
    with _figure(*size) as figure:
        ax = figure.add_subplot()
        image = ax.imshow(
            np.ma.masked_invalid(values), cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto"
        )
        ax.set_xticks(np.arange(n_columns), labels=x_labels, rotation=45, ha="right")
        ax.set_yticks(np.arange(n_rows), labels=y_labels)
        _annotate(ax, values, spread)
        figure.colorbar(image, ax=ax, label=bar)
        ax.set_title(title)
        _note_omitted(figure, omitted)
        return _save(figure, out_dir, stem)


def framework_forest_plot(
    rating: pd.DataFrame, out_dir: Path, *, stem: str = "suite_forest", title: str | None = None
) -> PlotFiles:
    """One row per framework of a suite (the `suite_rating` table): Bradley–Terry rating with
    its cluster-bootstrap CI, best at the top, with its mean Final and CI as the label."""
    wanted = (
        "framework",
        "rating",
        "rating_ci_low",
        "rating_ci_high",
        "mean_final",
        "mean_final_ci_low",
        "mean_final_ci_high",
        "n_prds",
        "n_runs",
    )
    _require(rating, wanted, "suite rating table")
    rows = rating.sort_values(["rating", "framework"], ascending=[True, False])
    labels = [
        f"{r.framework}  (Final {format_half_up(r.mean_final)} "
        f"[{format_half_up(r.mean_final_ci_low)}–{format_half_up(r.mean_final_ci_high)}], "
        f"{r.n_prds} PRDs, {r.n_runs} runs)"
        for r in rows.itertuples(index=False)
    ]
    with _figure(7.5, 1.3 + 0.32 * len(rows)) as figure:
        _forest(
            figure,
            rows[["rating_ci_low", "rating", "rating_ci_high"]].to_numpy(dtype=float),
            labels,
            "framework Bradley–Terry rating (Elo scale), 95 % cluster bootstrap CI",
            title or "Framework ratings across the suite's PRDs",
        )
        return _save(figure, out_dir, stem)


def suite_pareto_plot(
    rating: pd.DataFrame,
    out_dir: Path,
    *,
    stem: str = "suite_final_vs_cost",
    title: str | None = None,
) -> PlotFiles:
    """Mean score per framework against its cost per run, with the score's CI as a vertical
    bar. The score is the mean Adjusted Final where a gate failed (else Final); a framework
    with any adjusted run is labelled "(Adjusted in n of N runs)". The frontier is drawn over the
    frameworks with a known cost; unknown costs are named in a note, never placed at 0."""
    wanted = (
        "framework",
        "n_runs",
        "mean_effective_final",
        "mean_effective_ci_low",
        "mean_effective_ci_high",
        "n_adjusted",
        "cost_per_run_usd",
    )
    _require(rating, wanted, "suite rating table")
    known = rating[rating["cost_per_run_usd"].notna()].sort_values(
        ["cost_per_run_usd", "framework"]
    )
    unknown = rating.loc[rating["cost_per_run_usd"].isna(), "framework"].astype(str)
    cost = known["cost_per_run_usd"].to_numpy(dtype=float)
    score = known["mean_effective_final"].to_numpy(dtype=float)
    # dominated[i]: another framework scores at least as high for at most the cost, and
    # strictly better on one of the two (the rule of `domain/ranking/pareto.py`).
    at_least = (score[:, None] >= score[None, :]) & (cost[:, None] <= cost[None, :])
    strictly = (score[:, None] > score[None, :]) | (cost[:, None] < cost[None, :])
    dominated = (at_least & strictly).any(axis=0)
    with _figure(6.5, 4.5) as figure:
        ax = figure.add_subplot()
        low = score - known["mean_effective_ci_low"].to_numpy(dtype=float)
        high = known["mean_effective_ci_high"].to_numpy(dtype=float) - score
        bars = np.vstack([np.maximum(low, 0.0), np.maximum(high, 0.0)])
        for mask, colour, label in ((~dominated, _FRONTIER_COLOUR, "frontier"),
                                    (dominated, _OTHER_COLOUR, "dominated")):  # fmt: skip
            ax.errorbar(cost[mask], score[mask], yerr=bars[:, mask], fmt="o", color=colour,
                        ecolor=colour, elinewidth=1.0, capsize=3, label=label)  # fmt: skip
        ax.step(
            cost[~dominated], score[~dominated], where="post", color=_FRONTIER_COLOUR, linewidth=1.0
        )
        for row in known.itertuples(index=False):
            label = str(row.framework)
            if row.n_adjusted:
                label += f" (Adjusted in {row.n_adjusted} of {row.n_runs} runs)"
            ax.annotate(
                label,
                (row.cost_per_run_usd, row.mean_effective_final),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize=7,
            )
        ax.set_xlabel("cost per framework run (USD): framework + judge")
        ax.set_ylabel("mean Final (Adjusted Final where a gate failed), 95 % CI")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(loc="lower right")
        ax.set_title(title or "Suite: Final vs cost per run (frontier in red)")
        if len(unknown):
            ax.text(
                0.01,
                0.99,
                "cost unknown (not placed): " + ", ".join(unknown),
                transform=ax.transAxes,
                va="top",
                fontsize=7,
            )
        return _save(figure, out_dir, stem)


def prd_heatmap(
    prd_scores: pd.DataFrame,
    out_dir: Path,
    *,
    stem: str = "suite_prd_heatmap",
    title: str | None = None,
) -> PlotFiles:
    """Frameworks × PRDs of mean Final (the `suite_prd_score` table); a PRD a framework did
    not run is blank, never 0. Labels: mean Final and, with repeated runs, ± run-to-run SD."""
    _require(prd_scores, ("framework", "benchmark", "mean_final", "run_to_run_sd"), "PRD table")
    grid = prd_scores.pivot_table(
        index="framework", columns="benchmark", values="mean_final", aggfunc="first", sort=True
    )
    spread = prd_scores.pivot_table(
        index="framework",
        columns="benchmark",
        values="run_to_run_sd",
        aggfunc="first",
        sort=True,
        dropna=False,
    ).reindex(index=grid.index, columns=grid.columns)
    values = grid.to_numpy(dtype=float)
    n_rows, n_cols = values.shape
    size = (2.2 + 0.9 * n_cols, 1.2 + 0.35 * n_rows)
    x_labels, y_labels = grid.columns.astype(str).tolist(), grid.index.astype(str).tolist()
    labels = (x_labels, y_labels, "mean Final", title or "Mean Final per framework and PRD")
    return _score_heatmap(
        values, size, labels, (), out_dir, stem, spread=spread.to_numpy(dtype=float)
    )


def suite_plots(
    rating: pd.DataFrame, prd_scores: pd.DataFrame, out_dir: Path, *, suite: str
) -> dict[str, PlotFiles]:
    """The three plots of one suite, by name."""
    return {
        "suite_forest": framework_forest_plot(
            rating, out_dir, title=f"{suite}: framework ratings, 95 % cluster bootstrap CI"
        ),
        "suite_final_vs_cost": suite_pareto_plot(
            rating, out_dir, title=f"{suite}: Final (Adjusted where a gate failed) vs cost"
        ),
        "suite_prd_heatmap": prd_heatmap(prd_scores, out_dir, title=f"{suite}: mean Final per PRD"),
    }
