"""Which judge's results each benchmark is ranked by: one comparability key per benchmark.

A run keeps one result per judge (`judge_name`), so a benchmark's runs may carry results of
several judges side by side; a ranking compares only results of one comparability key. Per
benchmark the key is the one the operator names (`--judge` / `EVALFLOW_RANK_JUDGE`, a judge
name), else the key covering the most runs of the benchmark — ties broken by more complete
results, then by judge name and key, so the choice is deterministic. Each run then enters the
ranking assets with its result of that key; a run without one is listed, not ranked, with
its own judge's result (`pick`).
"""

from __future__ import annotations

import pandas as pd

RESULT = ["run_key", "judge_name"]
CHOICE_COLUMNS = ["benchmark", "ranking_key", "ranking_judge", "ranking_choice"]


def results(final_score: pd.DataFrame, run_manifest: pd.DataFrame) -> pd.DataFrame:
    """Every stored result: run_key, judge_name, benchmark, comparability_key, complete."""
    if final_score.empty or run_manifest.empty:
        return pd.DataFrame(columns=[*RESULT, "benchmark", "comparability_key", "complete"])
    manifest = run_manifest[[*RESULT, "benchmark"]].drop_duplicates(RESULT)
    scored = final_score[[*RESULT, "comparability_key", "complete"]]
    return scored.merge(manifest, on=RESULT, how="inner")


def choose(found: pd.DataFrame, pinned: str | None = None) -> pd.DataFrame:
    """Per benchmark of `results(...)`: the ranking key, its judge and why (CHOICE_COLUMNS);
    with `pinned`, that judge's key (NULL when no run of the benchmark has one)."""
    rows = []
    for benchmark, group in found.groupby("benchmark", sort=True):
        n_runs = group["run_key"].nunique()
        keys = (
            group.groupby(["comparability_key", "judge_name"], sort=True)
            .agg(runs=("run_key", "nunique"), complete=("complete", "sum"))
            .reset_index()
        )
        if pinned:
            keys = keys[keys["judge_name"] == pinned]
            if keys.empty:
                rows.append([benchmark, None, pinned, f"{pinned} (named; no run has its result)"])
                continue
        keys = keys.sort_values(
            ["runs", "complete", "judge_name", "comparability_key"],
            ascending=[False, False, True, True],
        )
        best = keys.iloc[0]
        why = "named" if pinned else "most runs"
        text = f"{best['judge_name']} ({why}: {int(best['runs'])} of {n_runs} runs)"
        rows.append([benchmark, best["comparability_key"], best["judge_name"], text])
    return pd.DataFrame(rows, columns=CHOICE_COLUMNS)


def pick(found: pd.DataFrame, choice: pd.DataFrame) -> pd.DataFrame:
    """One result per run: its result of the benchmark's ranking key (`chosen` true), else
    the result that would rank first among its others (`chosen` false, listed unranked)."""
    if found.empty:
        return pd.DataFrame(columns=[*RESULT, "chosen", *CHOICE_COLUMNS[1:]])
    order = (
        found.groupby(["benchmark", "comparability_key", "judge_name"])["run_key"]
        .transform("nunique")
        .rename("coverage")
    )
    ranked = found.assign(coverage=order).merge(choice, on="benchmark", how="left")
    ranked["chosen"] = ranked["comparability_key"] == ranked["ranking_key"]
    ranked = ranked.sort_values(
        ["run_key", "chosen", "coverage", "complete", "judge_name", "comparability_key"],
        ascending=[True, False, False, False, True, True],
    )
    first = ranked.drop_duplicates("run_key")
    return first[[*RESULT, "chosen", *CHOICE_COLUMNS[1:]]].reset_index(drop=True)


def keep(frame: pd.DataFrame, picked: pd.DataFrame, *, chosen_only: bool = True) -> pd.DataFrame:
    """The rows of a judge-dependent table that belong to the picked results (only the
    results of the ranking keys unless `chosen_only` is false)."""
    wanted = picked[picked["chosen"]] if chosen_only else picked
    if frame.empty:
        return frame
    return frame.merge(wanted[RESULT], on=RESULT, how="inner")[list(frame.columns)]


def chosen_results(
    final_score: pd.DataFrame, run_manifest: pd.DataFrame, pinned: str | None = None
) -> pd.DataFrame:
    """`pick` over `results`: what the ranking assets read, one result per run."""
    found = results(final_score, run_manifest)
    return pick(found, choose(found, pinned))
