"""Asset `leaderboard`: every evaluated run of every benchmark, best first, with confidence.

Runs are ranked only against comparable runs: one *ranking group* is one benchmark and one
comparability key (baseline hash, judge id, judge model, prompt version), so a heuristic
result and a Claude-judged one are never in one order. A run keeps one result per judge, so
each benchmark is ranked within ONE key (`evalflow.domain.ranking.judge_choice`: the judge
named by `--judge` / EVALFLOW_RANK_JUDGE, else the one covering the most runs), which every
row names (`ranking_key`, `ranking_choice`); a run without a result of that key is listed
with its own judge's result, not ranked ("other judge: no <judge> result"). The history keeps all.
Within a group: rank by Adjusted Final when a gate failed, else Final; ties by Final, then
run key. Beside the score: how many UNMETs are proven and how many checks are UNSCORED for
want of a portable proof of absence, the Monte Carlo CI of Final, whether the gap to the next
run is within judge noise, the Bradley–Terry rating with its bootstrap CI, the costs and the Pareto
frontier. A run that is not rankable is still listed, below the ranked runs of its group,
with `rank` NULL and the reason: an undetermined Final ("incomplete: N checks unscored",
with its bounds) or a score older than the run's current inputs ("stale": its last scoring
failed or was never rerun).
"""

import dagster as dg
import pandas as pd

from evalflow.domain.cells import listed
from evalflow.domain.portability import absence_counts
from evalflow.domain.ranking.judge_choice import RESULT, chosen_results, keep
from evalflow.domain.ranking.pareto import pareto_frontier
from evalflow.domain.rounding import format_half_up
from evalflow.pipeline.assets.common import IO, KINDS, table_metadata
from evalflow.pipeline.resources import EvalflowResource
from evalflow.storage.tables import columns

_SUMS = ["api_calls", "input_tokens", "output_tokens", "cache_read_tokens",
         "cache_write_tokens", "cost_usd", "spent_usd"]  # fmt: skip


def _sum_or_null(values: pd.Series) -> float | None:
    """The total, or NULL when no row measured it (parts written before spend was recorded)."""
    return values.sum(min_count=1)


def judge_costs(
    verdicts: pd.DataFrame, run_manifest: pd.DataFrame, plugin_judge: pd.DataFrame | None = None
) -> pd.DataFrame:
    """What judging cost per run and judge (every judge's result, not only the ranked one):
    one row per scoring run (`checks`, from the verdict rows' usage totals) and one for
    PluginEval's judged layers (`plugineval`, from its per-skill
    rows; before, its spend reached no table and the leaderboard's cost left it out)."""
    parts = []
    if not verdicts.empty:
        scoring = (
            verdicts.groupby(["run_key", "judge_name", "run", "judge_id"], sort=True)
            .agg(checks=("check_id", "size"), **{c: (c, "sum") for c in _SUMS})
            .reset_index()
        )
        parts.append(scoring.assign(part="checks"))
    if plugin_judge is not None and not plugin_judge.empty:
        plugin = (
            plugin_judge.groupby(["run_key", "judge_name"], sort=True)
            .agg(checks=("skill", "size"), **{c: (c, _sum_or_null) for c in _SUMS})
            .reset_index()
        )
        parts.append(plugin.assign(part="plugineval", run=None, judge_id="plugineval"))
    if not parts:
        return pd.DataFrame(columns=columns("judge_cost"))
    totals = pd.concat(parts, ignore_index=True).astype({"run": "Int64"})
    benchmarks = run_manifest[["run_key", "benchmark"]].drop_duplicates("run_key")
    totals = totals.merge(benchmarks, on="run_key", how="inner")
    order = totals.assign(plugineval_last=totals["part"] == "plugineval")
    order = order.sort_values(
        ["run_key", "judge_name", "plugineval_last", "run"], ignore_index=True
    )
    return order[columns("judge_cost")]


@dg.asset(io_manager_key=IO, group_name="ranking", kinds=KINDS)
def judge_cost(
    scoring_run_1: pd.DataFrame,
    scoring_run_2: pd.DataFrame,
    scoring_run_3: pd.DataFrame,
    plugin_judge: pd.DataFrame,
    run_manifest: pd.DataFrame,
) -> dg.Output:
    """Judge spend (calls, tokens, dollars) per run: each scoring run and PluginEval."""
    verdicts = pd.concat([scoring_run_1, scoring_run_2, scoring_run_3], ignore_index=True)
    frame = judge_costs(verdicts, run_manifest, plugin_judge)
    return dg.Output(frame, metadata=table_metadata("judge_cost", frame))


GROUP_KEYS = ["benchmark", "comparability_key"]
ABSENCE_COLUMNS = ["unmet_proven", "unmet_other", "unscored_no_proof"]


def absences(majority_vote: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per run: UNMETs proven, UNMETs on other grounds, checks UNSCORED for want of a portable
    proof (`evalflow.domain.portability.absence_counts`). A check's flags are those of the
    first scoring run that agrees with its majority (else of its first run), as the report
    reads them."""
    if majority_vote.empty:
        return pd.DataFrame(columns=["run_key", *ABSENCE_COLUMNS])
    merged = verdicts[["run_key", "check_id", "run", "status", "flags"]].merge(
        majority_vote[["run_key", "check_id", "majority"]], on=["run_key", "check_id"]
    )
    merged = merged.assign(disagrees=merged["status"] != merged["majority"])
    first = merged.sort_values(["run_key", "check_id", "disagrees", "run"]).drop_duplicates(
        ["run_key", "check_id"]
    )
    rows = []
    for run_key, group in first.groupby("run_key", sort=True):
        flags = [listed(f) for f in group["flags"]]
        n = absence_counts(zip(group["majority"], flags, strict=True))
        rows.append([run_key, n.proven, n.other, n.unproven])
    return pd.DataFrame(rows, columns=["run_key", *ABSENCE_COLUMNS])


def not_ranked_reasons(final_score: pd.DataFrame, run_manifest: pd.DataFrame) -> pd.Series:
    """run_key → why the run is not ranked (None when it is)."""
    current = run_manifest.set_index("run_key")["fingerprint"]
    reasons = []
    for row in final_score.itertuples(index=False):
        if current.get(row.run_key) != row.fingerprint:
            reasons.append("stale: scored with older inputs than its manifest (score it again)")
        elif not row.complete:
            n = int(row.n_unscored)
            reasons.append(f"incomplete: {n} check{'' if n == 1 else 's'} unscored")
        else:
            reasons.append(None)
    return pd.Series(reasons, index=final_score["run_key"].to_numpy(), dtype="object")


def rankable_runs(final_score: pd.DataFrame, run_manifest: pd.DataFrame) -> list[str]:
    """The runs the ranking assets may use: a determined Final from the current inputs."""
    reasons = not_ranked_reasons(final_score, run_manifest)
    return sorted(reasons.index[reasons.isna()])


def _ratings(board: pd.DataFrame, elo_bootstrap: pd.DataFrame) -> pd.DataFrame:
    bt = elo_bootstrap[elo_bootstrap["method"] == "bradley_terry"]
    # Player names as `form_matches` gave them: the framework, or the run key when the
    # framework has several ranked runs in the group.
    ranked = board["ranked"]
    runs_per_framework = (
        board[ranked].groupby([*GROUP_KEYS, "framework"])["run_key"].transform("size")
    )
    player = board.loc[ranked, "framework"].where(runs_per_framework == 1, board["run_key"])
    keyed = board.assign(player=player.reindex(board.index))
    rated = keyed.merge(
        bt[[*GROUP_KEYS, "player", "rating", "ci_low", "ci_high", "separability"]],
        on=[*GROUP_KEYS, "player"],
        how="left",
    )
    return rated.rename(columns={"ci_low": "rating_ci_low", "ci_high": "rating_ci_high"})


def _noise_to_next(board: pd.DataFrame, final_pair: pd.DataFrame) -> pd.Series:
    noisy = {
        frozenset((row.a, row.b)): bool(row.within_noise)
        for row in final_pair.itertuples(index=False)
    }
    ranked = board[board["ranked"]]
    nxt = ranked.groupby(GROUP_KEYS)["run_key"].shift(-1).reindex(board.index)
    return pd.Series(
        [
            noisy.get(frozenset((run, following))) if isinstance(following, str) else None
            for run, following in zip(board["run_key"], nxt, strict=True)
        ],
        index=board.index,
        dtype="object",
    )


def effective_costs(board: pd.DataFrame) -> pd.DataFrame:
    """Pareto input: the score a run is ranked by (Adjusted Final when a gate failed)."""
    return pd.DataFrame(
        {
            "run_key": board["run_key"],
            "final": board["adjusted_final"].fillna(board["final"]),
            "framework_cost_usd": board["framework_cost_usd"],
            "judge_cost_usd": board["judge_cost_usd"],
        }
    )


def _frontier(board: pd.DataFrame) -> pd.DataFrame:
    """total cost and frontier membership, computed within each ranking group (ranked runs
    only: an undetermined Final has no place on the Final axis)."""
    parts = [
        pareto_frontier(group[["run_key", "final", "framework_cost_usd", "judge_cost_usd"]])
        for _, group in board[board["ranked"]].groupby(GROUP_KEYS, sort=True)
    ]
    if not parts:
        return pd.DataFrame(columns=["run_key", "total_cost_usd", "on_frontier"])
    return pd.concat(parts, ignore_index=True)[["run_key", "total_cost_usd", "on_frontier"]]


def build_leaderboard(
    final_score: pd.DataFrame,
    run_manifest: pd.DataFrame,
    elo_bootstrap: pd.DataFrame,
    final_uncertainty: pd.DataFrame,
    final_pair: pd.DataFrame,
    judge_cost: pd.DataFrame,
    absence: pd.DataFrame,
    picked: pd.DataFrame | None = None,
    report: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per scored run (module docstring): its result of the benchmark's ranking key,
    else its best other result, not ranked. `absence` is `absences(...)` over the picked
    results; `picked` is `judge_choice.chosen_results(...)` (computed here when None)."""
    if final_score.empty:
        return pd.DataFrame(columns=columns("leaderboard"))
    if picked is None:
        picked = chosen_results(final_score, run_manifest)
    final_score = keep(final_score, picked, chosen_only=False)
    run_manifest = keep(run_manifest, picked, chosen_only=False)
    manifest = run_manifest[
        ["run_key", "judge_name", "benchmark", "framework", "framework_cost_usd", "judge_id",
         "judge_model", "judge_prompt_version"]
    ]  # fmt: skip
    # final_score carries benchmark and framework too (every per-run table does): the
    # manifest's are the ones kept.
    scores = final_score.drop(columns=["benchmark", "framework"], errors="ignore")
    board = scores.merge(manifest, on=RESULT, how="inner")
    board = board.merge(picked.drop(columns="judge_name"), on="run_key", how="left")
    board = board.merge(absence, on="run_key", how="left")
    board[ABSENCE_COLUMNS] = board[ABSENCE_COLUMNS].fillna(0).astype(int)
    reasons = not_ranked_reasons(final_score, run_manifest)
    board["not_ranked_reason"] = board["run_key"].map(reasons)
    other = ~board["chosen"].astype(bool)
    board.loc[other, "not_ranked_reason"] = [
        f"other judge: no {judge} result, scored by {own} only"
        for judge, own in zip(
            board.loc[other, "ranking_judge"], board.loc[other, "judge_name"], strict=True
        )
    ]
    board["ranked"] = board["not_ranked_reason"].isna()
    board["effective"] = board["adjusted_final"].fillna(board["final"])
    board = board.sort_values(
        [*GROUP_KEYS, "ranked", "effective", "final", "final_upper", "run_key"],
        ascending=[True, True, False, False, False, False, True],
        na_position="last",
        ignore_index=True,
    )
    ranks = board[board["ranked"]].groupby(GROUP_KEYS).cumcount() + 1
    board["rank"] = ranks.reindex(board.index).astype("Int64")
    ci = final_uncertainty[["run_key", "comparability_key", "ci_low", "ci_high"]].rename(
        columns={"ci_low": "final_ci_low", "ci_high": "final_ci_high"}
    )
    board = board.merge(ci, on=["run_key", "comparability_key"], how="left")
    board["within_noise_of_next"] = _noise_to_next(board, final_pair)
    board = _ratings(board, elo_bootstrap)
    spend = keep(judge_cost, picked, chosen_only=False).groupby("run_key")["cost_usd"].sum()
    board["judge_cost_usd"] = board["run_key"].map(spend).astype(float)
    board = board.merge(_frontier(board), on="run_key", how="left")
    board["on_frontier"] = board["on_frontier"].fillna(False).astype(bool)
    paths = keep(report, picked, chosen_only=False) if report is not None else None
    if paths is not None and not paths.empty:
        board["report_path"] = board["run_key"].map(paths.set_index("run_key")["report_path"])
    else:
        board["report_path"] = None
    return board[columns("leaderboard")]


def _cell(value: object) -> str:
    """A Markdown cell: NULL stays visibly NULL, never 0. Scores by the one rounding rule
    (half up, 2 decimals), as the terminal and the report print them: "0.980 [0.975, 0.975]"
    set a rounded Final beside an unrounded CI that seemed to exclude it."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "NULL"
    return format_half_up(value) if isinstance(value, float) else str(value)


def leaderboard_markdown(board: pd.DataFrame) -> str:
    """The leaderboard as the Dagster UI's Markdown preview, one table per benchmark, ranked
    within the key it names."""
    if board.empty:
        return "No evaluated runs yet."
    parts = []
    for benchmark, runs in board.groupby("benchmark", sort=True):
        first = runs.iloc[0]
        group = runs.sort_values(["ranked", "rank", "run_key"], ascending=[False, True, True])
        parts += [
            f"**{benchmark}** ranked within comparability key `{first['ranking_key']}`: judge "
            f"{first['ranking_choice']}",
            "",
            "| rank | framework | run | judge | Final | Adjusted Final | 95 % CI | "
            "not ranked because |",
            "|---|---|---|---|---|---|---|---|",
        ]
        parts += [
            f"| {_cell(r.rank)} | {r.framework} | {r.run_key} | {r.judge_name} | "
            f"{_cell(r.final)} | {_cell(r.adjusted_final)} | "
            f"[{_cell(r.final_ci_low)}, {_cell(r.final_ci_high)}] | "
            f"{r.not_ranked_reason if isinstance(r.not_ranked_reason, str) else ''} |"
            for r in group.itertuples(index=False)
        ]
        parts.append("")
    return "\n".join(parts).rstrip()


@dg.asset(io_manager_key=IO, group_name="ranking", kinds=KINDS)
def leaderboard(
    evalflow: EvalflowResource,
    final_score: pd.DataFrame,
    run_manifest: pd.DataFrame,
    elo_bootstrap: pd.DataFrame,
    final_uncertainty: pd.DataFrame,
    final_pair: pd.DataFrame,
    judge_cost: pd.DataFrame,
    majority_vote: pd.DataFrame,
    scoring_run_1: pd.DataFrame,
    scoring_run_2: pd.DataFrame,
    scoring_run_3: pd.DataFrame,
    report: pd.DataFrame,
) -> dg.Output:
    """Ranked runs with Final CI, noise flag, rating ± CI, costs, the Pareto frontier and
    the proven/unproven absence counts; per benchmark within one comparability key."""
    picked = chosen_results(final_score, run_manifest, evalflow.ranking_judge())
    verdicts = pd.concat([scoring_run_1, scoring_run_2, scoring_run_3], ignore_index=True)
    board = build_leaderboard(
        final_score,
        run_manifest,
        elo_bootstrap,
        final_uncertainty,
        final_pair,
        judge_cost,
        absences(
            keep(majority_vote, picked, chosen_only=False),
            keep(verdicts, picked, chosen_only=False),
        ),
        picked,
        report,
    )
    choices = board.drop_duplicates("benchmark")[["benchmark", "ranking_key", "ranking_choice"]]
    metadata = {
        "preview": dg.MetadataValue.md(leaderboard_markdown(board)),
        "ranked_by": dg.MetadataValue.json(
            {r.benchmark: {"key": r.ranking_key, "judge": r.ranking_choice}
             for r in choices.itertuples(index=False)}
        ),
    }  # fmt: skip
    return dg.Output(board, metadata={**table_metadata("leaderboard", board), **metadata})
