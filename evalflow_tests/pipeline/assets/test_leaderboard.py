"""The leaderboard ranks only comparable, complete, current runs; every other run is listed
below its group with the reason, and every ranking asset tolerates an empty warehouse."""

from __future__ import annotations

import pandas as pd
import pytest

from evalflow.domain.ranking.judge_choice import chosen_results
from evalflow.pipeline.assets.leaderboard import (
    absences,
    build_leaderboard,
    judge_costs,
    not_ranked_reasons,
    rankable_runs,
)
from evalflow.pipeline.assets.ranking import elo_bootstrap, final_uncertainty
from evalflow.pipeline.resources import EvalflowResource
from evalflow.storage.tables import columns

KEY_H, KEY_C = "heuristic-key", "claude-key"
JUDGE = {KEY_H: "heuristic", KEY_C: "anthropic"}


def final_row(run_key: str, final: float | None, key: str = KEY_H, **extra) -> dict:
    complete = final is not None
    return {
        "run_key": run_key,
        "fingerprint": f"fp-{run_key}",
        "judge_name": JUDGE[key],
        "sum_w": 5,
        "final_value": final,
        "final": final,
        "band": "poor" if complete else None,
        "complete": complete,
        "n_unscored": 0 if complete else 7,
        "final_lower": final if complete else 0.10,
        "final_upper": final if complete else 0.90,
        "gates_failed": False,
        "adjusted_final_value": None,
        "adjusted_final": None,
        "fleiss_kappa": None,
        "n_checks": 10,
        "n_borderline": 0,
        "borderline_rate": 0.0,
        "baseline_sha256": "b" * 64,
        "comparability_key": key,
        **extra,
    }


def manifest_row(run_key: str, key: str = KEY_H, fingerprint: str | None = None) -> dict:
    framework = run_key.split(".")[1]
    return {
        "run_key": run_key,
        "fingerprint": fingerprint or f"fp-{run_key}",
        "judge_name": JUDGE[key],
        "benchmark": "b",
        "framework": framework,
        "framework_cost_usd": None,
        "judge_id": "heuristic" if key == KEY_H else "anthropic:claude-x",
        "judge_model": None if key == KEY_H else "claude-x",
        "judge_prompt_version": "heuristic-3" if key == KEY_H else "claude-judge-1",
        "comparability_key": key,
    }


def empty(table: str) -> pd.DataFrame:
    return pd.DataFrame(columns=columns(table))


def board(
    finals: list[dict], manifests: list[dict], picked: pd.DataFrame | None = None
) -> pd.DataFrame:
    return build_leaderboard(
        pd.DataFrame(finals),
        pd.DataFrame(manifests),
        empty("elo_bootstrap"),
        empty("final_uncertainty"),
        empty("final_pair"),
        empty("judge_cost"),
        absences(empty("majority_vote"), empty("scoring_run_1")),
        picked,
    )


def test_incomplete_runs_are_listed_below_the_ranked_ones_without_a_rank() -> None:
    out = board(
        [final_row("b.a.r1", 0.5), final_row("b.blind.r1", None), final_row("b.c.r1", 0.7)],
        [manifest_row("b.a.r1"), manifest_row("b.blind.r1"), manifest_row("b.c.r1")],
    )
    assert list(out.columns) == columns("leaderboard")
    assert out["run_key"].tolist() == ["b.c.r1", "b.a.r1", "b.blind.r1"]
    assert out["rank"].tolist()[:2] == [1, 2] and pd.isna(out["rank"].iloc[2])
    blind = out.iloc[2]
    assert not blind["ranked"] and blind["not_ranked_reason"] == "incomplete: 7 checks unscored"
    assert pd.isna(blind["final"]) and (blind["final_lower"], blind["final_upper"]) == (0.1, 0.9)
    assert not blind["on_frontier"] and pd.isna(blind["within_noise_of_next"])


def test_a_benchmark_is_ranked_within_the_key_covering_the_most_runs() -> None:
    """A run scored by another judge only is listed, not ranked, and says whose result the
    benchmark is ranked by (one comparability key per benchmark, named on every row)."""
    out = board(
        [final_row("b.a.r1", 0.5), final_row("b.c.r1", 0.7), final_row("b.x.r1", 0.9, KEY_C)],
        [manifest_row("b.a.r1"), manifest_row("b.c.r1"), manifest_row("b.x.r1", KEY_C)],
    )
    ranks = {(r.comparability_key, r.run_key): r.rank for r in out.itertuples()}
    assert ranks[(KEY_H, "b.c.r1")] == 1 and ranks[(KEY_H, "b.a.r1")] == 2
    assert pd.isna(ranks[(KEY_C, "b.x.r1")])
    assert set(out["ranking_key"]) == {KEY_H}
    assert set(out["ranking_choice"]) == {"heuristic (most runs: 2 of 3 runs)"}
    other = out.set_index("run_key").loc["b.x.r1"]
    assert other["not_ranked_reason"] == (
        "other judge: no heuristic result, scored by anthropic only"
    )
    assert other["final"] == 0.9  # its own judge's result, listed


def test_two_judges_of_one_run_rank_by_the_chosen_or_the_named_judge() -> None:
    finals = [
        final_row("b.a.r1", 0.5), final_row("b.c.r1", 0.7),
        final_row("b.a.r1", 0.8, KEY_C),
    ]  # fmt: skip
    manifests = [manifest_row("b.a.r1"), manifest_row("b.c.r1"), manifest_row("b.a.r1", KEY_C)]
    out = board(finals, manifests)
    assert out["run_key"].tolist() == ["b.c.r1", "b.a.r1"]  # one row per run
    assert out["judge_name"].tolist() == ["heuristic", "heuristic"]
    assert out["final"].tolist() == [0.7, 0.5]
    pinned = chosen_results(pd.DataFrame(finals), pd.DataFrame(manifests), "anthropic")
    out = board(finals, manifests, pinned)
    by_run = out.set_index("run_key")
    assert by_run.loc["b.a.r1", "judge_name"] == "anthropic" and by_run.loc["b.a.r1", "rank"] == 1
    assert by_run.loc["b.c.r1", "not_ranked_reason"].startswith("other judge: no anthropic")
    assert set(out["ranking_choice"]) == {"anthropic (named: 1 of 2 runs)"}


def test_a_score_older_than_its_manifest_is_not_ranked() -> None:
    finals = pd.DataFrame([final_row("b.a.r1", 0.5), final_row("b.c.r1", 0.7)])
    manifests = pd.DataFrame([manifest_row("b.a.r1"), manifest_row("b.c.r1", fingerprint="new")])
    assert rankable_runs(finals, manifests) == ["b.a.r1"]
    assert not_ranked_reasons(finals, manifests)["b.c.r1"].startswith("stale:")


def test_empty_frames_give_empty_tables() -> None:
    assert build_leaderboard(
        empty("final_score"), empty("run_manifest"), empty("elo_bootstrap"),
        empty("final_uncertainty"), empty("final_pair"), empty("judge_cost"),
        absences(empty("majority_vote"), empty("scoring_run_1")),
    ).empty  # fmt: skip
    ratings = elo_bootstrap(
        evalflow=EvalflowResource(), ac_score=empty("ac_score"), final_score=empty("final_score"),
        run_manifest=empty("run_manifest"),
    ).value  # fmt: skip
    assert ratings.empty and list(ratings.columns) == columns("elo_bootstrap")
    runs, pairs = (out.value for out in final_uncertainty(
        evalflow=EvalflowResource(), majority_vote=empty("majority_vote"),
        ac_score=empty("ac_score"),
        final_score=empty("final_score"), run_manifest=empty("run_manifest"),
    ))  # fmt: skip
    assert runs.empty and list(runs.columns) == columns("final_uncertainty")
    assert pairs.empty and list(pairs.columns) == columns("final_pair")


def test_only_incomplete_runs_rank_nothing() -> None:
    finals = [final_row("b.a.r1", None), final_row("b.c.r1", None)]
    out = board(finals, [manifest_row("b.a.r1"), manifest_row("b.c.r1")])
    assert out["rank"].isna().all() and not out["ranked"].any()
    assert rankable_runs(pd.DataFrame(finals), pd.DataFrame(
        [manifest_row("b.a.r1"), manifest_row("b.c.r1")])) == []  # fmt: skip


def test_the_preview_rounds_final_and_ci_by_one_rule() -> None:
    """Issue 27: the preview showed "0.980 [0.975, 0.975]"."""
    from evalflow.pipeline.assets.leaderboard import _cell

    assert (_cell(0.98), _cell(0.975), _cell(None)) == ("0.98", "0.98", "NULL")


def test_judge_cost_and_the_leaderboard_count_plugineval() -> None:
    """PluginEval's spend is a judge_cost row of its own and part of the leaderboard's judge
    cost (the product reported $1.05 of $1.62: PluginEval's $0.57 was left out)."""
    sums = {"input_tokens": 10, "output_tokens": 5, "cache_read_tokens": 0,
            "cache_write_tokens": 0}  # fmt: skip
    verdicts = pd.DataFrame(
        [
            {"run_key": "b.a.r1", "judge_name": "anthropic", "run": run,
             "judge_id": "anthropic:claude-x", "check_id": c,
             "api_calls": 1, "cost_usd": 0.175, "spent_usd": 0.175, **sums}
            for run in (1, 2, 3) for c in ("S1-AC1-I1", "S1-AC1-T1")
        ]
    )  # fmt: skip
    plugin = pd.DataFrame(
        [
            {"run_key": "b.a.r1", "judge_name": "anthropic", "skill": s, "api_calls": 3,
             "cost_usd": 0.285,
             "spent_usd": 0.285, **sums}
            for s in ("one", "two")
        ]
    )  # fmt: skip
    manifest = pd.DataFrame([manifest_row("b.a.r1", KEY_C)])
    cost = judge_costs(verdicts, manifest, plugin)
    assert list(cost.columns) == columns("judge_cost")
    assert list(cost["part"]) == ["checks"] * 3 + ["plugineval"]
    last = cost.iloc[-1]
    assert pd.isna(last["run"]) and last["checks"] == 2 and last["cost_usd"] == 0.57
    out = build_leaderboard(
        pd.DataFrame([final_row("b.a.r1", 0.5, KEY_C)]),
        manifest,
        empty("elo_bootstrap"),
        empty("final_uncertainty"),
        empty("final_pair"),
        cost,
        absences(empty("majority_vote"), empty("scoring_run_1")),
    )
    assert out["judge_cost_usd"].iloc[0] == pytest.approx(1.62)


def test_plugineval_spend_of_parts_written_before_it_was_recorded_is_null() -> None:
    # Old plugin_judge parts read the spend columns as NULL: unmeasured, never $0.
    plugin = pd.DataFrame(
        {"run_key": ["b.a.r1"], "judge_name": ["anthropic"], "skill": ["one"]}
    ).reindex(
        columns=["run_key", "judge_name", "skill", "api_calls", "cost_usd", "spent_usd",
                 "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"]
    )  # fmt: skip
    manifest = pd.DataFrame([manifest_row("b.a.r1", KEY_C)])
    cost = judge_costs(pd.DataFrame(), manifest, plugin)
    assert list(cost["part"]) == ["plugineval"] and pd.isna(cost["cost_usd"].iloc[0])


def test_the_board_counts_proven_unmets_and_checks_without_a_portable_proof() -> None:
    # Flags come from the first scoring run that agrees with the majority, as in the report.
    votes = pd.DataFrame(
        [
            {"run_key": "b.a.r1", "check_id": c, "majority": m}
            for c, m in (("I1", "UNMET"), ("I2", "UNMET"), ("I3", "UNSCORED"), ("I4", "UNMET"))
        ]
    )
    flags = {
        ("I1", 1): ["absence-proven"],
        ("I2", 1): [],
        ("I2", 2): ["run-failed"],
        ("I3", 1): ["no-portable-proof"],
        ("I4", 1): ["evidence-invalid"],
    }
    verdicts = pd.DataFrame(
        [
            {
                "run_key": "b.a.r1",
                "check_id": c,
                "run": run,
                "status": "MET" if (c, run) == ("I2", 1) else m,
                "flags": flags.get((c, run), []),
            }
            for c, m in (("I1", "UNMET"), ("I2", "UNMET"), ("I3", "UNSCORED"), ("I4", "UNMET"))
            for run in (1, 2, 3)
        ]
    )
    counted = absences(votes, verdicts)
    assert counted.to_dict("records") == [
        {"run_key": "b.a.r1", "unmet_proven": 2, "unmet_other": 1, "unscored_no_proof": 1}
    ]
    out = build_leaderboard(
        pd.DataFrame([final_row("b.a.r1", 0.5), final_row("b.c.r1", 0.7)]),
        pd.DataFrame([manifest_row("b.a.r1"), manifest_row("b.c.r1")]),
        empty("elo_bootstrap"), empty("final_uncertainty"), empty("final_pair"),
        empty("judge_cost"), counted,
    )  # fmt: skip
    by_run = out.set_index("run_key")[["unmet_proven", "unmet_other", "unscored_no_proof"]]
    assert by_run.loc["b.a.r1"].tolist() == [2, 1, 1]
    assert by_run.loc["b.c.r1"].tolist() == [0, 0, 0]


def test_one_unscored_check_is_singular() -> None:
    """Issue 27: "incomplete: 1 checks unscored"."""
    finals = pd.DataFrame([final_row("b.a.r1", None, n_unscored=1)])
    reason = not_ranked_reasons(finals, pd.DataFrame([manifest_row("b.a.r1")]))["b.a.r1"]
    assert reason == "incomplete: 1 check unscored"
