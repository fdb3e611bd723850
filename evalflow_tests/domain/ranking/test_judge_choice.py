"""One comparability key per benchmark: the named judge's, else the one covering the most
runs (ties: more complete results, then judge name and key); every run keeps one row."""

from __future__ import annotations

import pandas as pd

from evalflow.domain.ranking.judge_choice import choose, chosen_results, keep, pick, results


def found(rows: list[tuple[str, str, str, bool]]) -> pd.DataFrame:
    """(run_key, judge_name, comparability_key, complete) of benchmark b."""
    frame = pd.DataFrame(rows, columns=["run_key", "judge_name", "comparability_key", "complete"])
    return frame.assign(benchmark="b")


def test_the_key_covering_most_runs_is_chosen_and_named() -> None:
    runs = found([
        ("b.x.r1", "heuristic", "kh", True), ("b.y.r1", "heuristic", "kh", True),
        ("b.x.r1", "labels", "kl", True),
    ])  # fmt: skip
    choice = choose(runs)
    assert choice.to_dict("records") == [
        {"benchmark": "b", "ranking_key": "kh", "ranking_judge": "heuristic",
         "ranking_choice": "heuristic (most runs: 2 of 2 runs)"}
    ]  # fmt: skip
    picked = pick(runs, choice)
    assert picked[["run_key", "judge_name", "chosen"]].values.tolist() == [
        ["b.x.r1", "heuristic", True],
        ["b.y.r1", "heuristic", True],
    ]


def test_ties_go_to_more_complete_results_then_the_name() -> None:
    tie = found([("b.x.r1", "labels", "kl", True), ("b.x.r1", "heuristic", "kh", False)])
    assert choose(tie)["ranking_judge"].tolist() == ["labels"]
    names = found([("b.x.r1", "labels", "kl", True), ("b.x.r1", "heuristic", "kh", True)])
    assert choose(names)["ranking_judge"].tolist() == ["heuristic"]
    assert choose(names.iloc[::-1])["ranking_judge"].tolist() == ["heuristic"]  # any order


def test_a_named_judge_wins_and_runs_without_its_result_keep_their_own() -> None:
    runs = found([
        ("b.x.r1", "heuristic", "kh", True), ("b.y.r1", "heuristic", "kh", True),
        ("b.x.r1", "labels", "kl", False),
    ])  # fmt: skip
    choice = choose(runs, "labels")
    assert choice["ranking_choice"].tolist() == ["labels (named: 1 of 2 runs)"]
    picked = pick(runs, choice).set_index("run_key")
    assert picked.loc["b.x.r1", "judge_name"] == "labels" and picked.loc["b.x.r1", "chosen"]
    assert picked.loc["b.y.r1", "judge_name"] == "heuristic"
    assert not picked.loc["b.y.r1", "chosen"]
    nobody = choose(runs, "anthropic")
    assert nobody["ranking_key"].isna().all()
    assert nobody["ranking_choice"].tolist() == ["anthropic (named; no run has its result)"]
    assert not pick(runs, nobody)["chosen"].any()


def test_keep_filters_a_judge_dependent_table_to_the_picked_results() -> None:
    final = pd.DataFrame({
        "run_key": ["b.x.r1", "b.x.r1", "b.y.r1"], "judge_name": ["heuristic", "labels", "labels"],
        "comparability_key": ["kh", "kl", "kl"], "complete": [True, True, True],
    })  # fmt: skip
    manifest = final[["run_key", "judge_name"]].assign(benchmark="b")
    picked = chosen_results(final, manifest)
    assert keep(final, picked)["judge_name"].tolist() == ["labels", "labels"]
    assert len(results(final, manifest)) == 3
    assert keep(final.iloc[0:0], picked).empty
