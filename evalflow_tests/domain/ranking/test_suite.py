"""Suite ratings: hand-computed Bradley–Terry cases, the cluster bootstrap, the variance
decomposition and comparability enforcement."""

import math
import tracemalloc

import numpy as np
import pandas as pd
import pytest

from evalflow.domain.ranking import suite
from evalflow.domain.ranking.bradley_terry import ELO_SCALE
from evalflow.domain.ranking.suite import judge_variance, rate_suite, select_runs
from evalflow.errors import InputError


def _run(key, benchmark, framework, final, **extra):
    row = {
        "run_key": key,
        "benchmark": benchmark,
        "framework": framework,
        "baseline_sha256": f"sha-{benchmark}",
        "judge_id": "heuristic",
        "judge_model": None,
        "judge_prompt_version": "heuristic-4",
        "final": final,
        "adjusted_final": None,
        "not_ranked_reason": None,
        "framework_cost_usd": 1.0,
        "judge_cost_usd": 0.0,
    }
    return row | extra


def _tables(spec):
    """spec: (benchmark, framework, run, [AC scores], Final or None for the mean) rows."""
    runs, acs = [], []
    for benchmark, framework, run, scores, *final in spec:
        key = f"{benchmark}.{framework}.{run}"
        value = final[0] if final else float(np.mean(scores))
        runs.append(_run(key, benchmark, framework, value))
        acs += [{"run_key": key, "ac_id": f"AC-{i}", "ac_score": s} for i, s in enumerate(scores)]
    return pd.DataFrame(runs), pd.DataFrame(acs)


def _row(report, framework):
    return report.rating.set_index("framework").loc[framework]


def test_two_wins_to_one_is_a_gap_of_ln2_on_the_elo_scale():
    runs, acs = _tables([("p", "a", "r1", [1.0, 1.0, 0.0]), ("p", "b", "r1", [0.0, 0.0, 1.0])])
    report = rate_suite(runs, acs, {"p": 1.0}, n_samples=50)
    gap = _row(report, "a")["rating"] - _row(report, "b")["rating"]
    assert gap == pytest.approx(ELO_SCALE * math.log(2.0), abs=1e-3)
    assert list(report.rating["framework"]) == ["a", "b"]
    assert list(report.rating["rank"]) == [1, 2]
    assert _row(report, "a")["n_matches"] == 3


def test_a_tie_is_half_a_win_each():
    # One win for a and two ties: a has 2 of 3 points, the same as two wins and a loss.
    runs, acs = _tables([("p", "a", "r1", [1.0, 0.5, 0.5]), ("p", "b", "r1", [0.0, 0.5, 0.5])])
    report = rate_suite(runs, acs, {"p": 1.0}, n_samples=50)
    gap = _row(report, "a")["rating"] - _row(report, "b")["rating"]
    assert gap == pytest.approx(ELO_SCALE * math.log(2.0), abs=1e-3)


def test_repeated_runs_are_samples_of_one_player_not_louder_voices():
    # a's two runs split every AC against b: a and b are level, not a 2-to-1 majority.
    runs, acs = _tables(
        [
            ("p", "a", "r1", [1.0, 1.0]),
            ("p", "a", "r2", [0.0, 0.0]),
            ("p", "b", "r1", [0.5, 0.5]),
        ]
    )
    report = rate_suite(runs, acs, {"p": 1.0}, n_samples=50)
    assert _row(report, "a")["rating"] == pytest.approx(1500.0, abs=1e-6)
    assert _row(report, "b")["rating"] == pytest.approx(1500.0, abs=1e-6)
    assert _row(report, "a")["n_runs"] == 2
    assert _row(report, "a")["n_matches"] == 4  # 2 run pairs × 2 ACs


def test_cluster_bootstrap_resamples_prds():
    # a wins everything on p1, b everything on p2: only PRD resampling can make either lead.
    runs, acs = _tables(
        [
            ("p1", "a", "r1", [1.0, 1.0, 1.0], 1.0),
            ("p1", "b", "r1", [0.0, 0.0, 0.0], 0.0),
            ("p2", "a", "r1", [0.0, 0.0, 0.0], 0.0),
            ("p2", "b", "r1", [1.0, 1.0, 1.0], 1.0),
        ]
    )
    report = rate_suite(runs, acs, {"p1": 1.0, "p2": 1.0}, n_samples=2000, seed=3)
    a = _row(report, "a")
    assert a["mean_final"] == pytest.approx(0.5)
    # Samples are (p1, p1), (p1, p2) or (p2, p2): a's mean Final 1, 0.5 or 0.
    assert (a["mean_final_ci_low"], a["mean_final_ci_high"]) == (0.0, 1.0)
    assert a["rating_ci_low"] < 1500.0 < a["rating_ci_high"]
    pair = report.pairs.iloc[0]
    assert (pair["a"], pair["b"]) == ("a", "b")
    assert pair["p_a_better"] == pytest.approx(0.5, abs=0.03)  # ¼·1 + ½·½ + ¼·0
    assert bool(pair["ci_overlap"])
    assert report.separability == 0.0


def test_runs_are_resampled_within_a_prd():
    runs, acs = _tables(
        [
            ("p", "a", "r1", [0.2], 0.2),
            ("p", "a", "r2", [0.8], 0.8),
            ("p", "b", "r1", [0.5], 0.5),
        ]
    )
    report = rate_suite(runs, acs, {"p": 1.0}, n_samples=2000, seed=1)
    a = _row(report, "a")
    assert a["mean_final"] == pytest.approx(0.5)
    assert (a["mean_final_ci_low"], a["mean_final_ci_high"]) == pytest.approx((0.2, 0.8))


def test_point_and_interval_are_consistent_and_deterministic_for_a_seed():
    rng = np.random.default_rng(7)
    spec = []
    for p in range(4):
        for f, skill in (("a", 0.8), ("b", 0.5), ("c", 0.45)):
            for r in range(3):
                scores = np.clip(skill + rng.normal(0, 0.15, 6), 0, 1).round(2).tolist()
                spec.append((f"p{p}", f, f"r{r}", scores))
    runs, acs = _tables(spec)
    weights = {f"p{p}": 1.0 for p in range(4)}
    first = rate_suite(runs, acs, weights, n_samples=300, seed=11)
    again = rate_suite(
        runs.sample(frac=1, random_state=2), acs[::-1], weights, n_samples=300, seed=11
    )
    pd.testing.assert_frame_equal(first.rating, again.rating)
    pd.testing.assert_frame_equal(first.pairs, again.pairs)
    other = rate_suite(runs, acs, weights, n_samples=300, seed=12)
    assert not first.rating["rating_ci_low"].equals(other.rating["rating_ci_low"])
    r = first.rating
    assert (r["rating_ci_low"] <= r["rating"]).all() and (r["rating"] <= r["rating_ci_high"]).all()
    assert (r["mean_final_ci_low"] <= r["mean_final"]).all()
    assert (r["mean_final"] <= r["mean_final_ci_high"]).all()
    assert r["framework"].iloc[0] == "a"
    ab = first.pairs.set_index(["a", "b"]).loc[("a", "b")]
    assert ab["p_a_better"] > 0.95


def test_variance_decomposition_numbers():
    runs, acs = _tables(
        [
            ("p1", "a", "r1", [0.4], 0.4),
            ("p1", "a", "r2", [0.6], 0.6),
            ("p2", "a", "r1", [0.5], 0.5),
            ("p2", "a", "r2", [0.7], 0.7),
            ("p1", "b", "r1", [0.5], 0.5),
            ("p1", "b", "r2", [0.5], 0.5),
            ("p2", "b", "r1", [0.5], 0.5),
            ("p2", "b", "r2", [0.5], 0.5),
            ("p1", "c", "r1", [0.1], 0.1),
        ]
    )
    judge_var = pd.Series(0.01, index=runs["run_key"])
    judge_var["p1.c.r1"] = np.nan  # unmeasured stays unmeasured
    report = rate_suite(runs, acs, {"p1": 1.0, "p2": 1.0}, judge_var=judge_var, n_samples=100)
    a, b, c = (_row(report, f) for f in "abc")
    assert a["run_to_run_sd"] == pytest.approx(math.sqrt(0.02))  # (0.1² + 0.1²) / 1 each PRD
    assert a["prd_sd"] == pytest.approx(math.sqrt(0.005))  # PRD means 0.5 and 0.6
    assert a["judge_sd"] == pytest.approx(0.1)
    assert a["mean_final"] == pytest.approx(0.55)
    assert b["run_to_run_sd"] == 0.0
    assert math.isnan(c["run_to_run_sd"]) and math.isnan(c["judge_sd"]) and math.isnan(c["prd_sd"])
    pairs = report.pairs.set_index(["a", "b"])
    # |0.55 − 0.5| = 0.05 < √(0.02 + 0) ≈ 0.141: within the noise of one run of each.
    assert bool(pairs.loc[("a", "b"), "within_run_noise"])
    assert pairs.loc[("a", "c"), "within_run_noise"] is None  # c never ran twice
    cells = report.prd_scores.set_index(["framework", "benchmark"])
    assert cells.loc[("a", "p1"), "run_to_run_sd"] == pytest.approx(math.sqrt(0.02))
    assert cells.loc[("a", "p2"), "n_runs"] == 2


def test_judge_variance_is_the_vote_split_variance_of_final():
    votes = pd.DataFrame(
        [
            # one P0 story, one AC: I-check 2 of 3 MET (borderline), T-check unanimous.
            {"run_key": "r", "story_id": "S1", "weight": 3, "ac_id": "A1", "check_id": "I1",
             "kind": "I", "met_votes": 2, "k": 3},
            {"run_key": "r", "story_id": "S1", "weight": 3, "ac_id": "A1", "check_id": "T1",
             "kind": "T", "met_votes": 3, "k": 3},
        ]
    )  # fmt: skip
    assert judge_variance(votes)["r"] == pytest.approx(0.6**2 * (2 / 3) * (1 / 3))


def test_suite_weights_weigh_prds():
    runs, acs = _tables(
        [
            ("p1", "a", "r1", [1.0], 1.0),
            ("p1", "b", "r1", [0.0], 0.0),
            ("p2", "a", "r1", [0.0], 0.0),
            ("p2", "b", "r1", [1.0], 1.0),
        ]
    )
    report = rate_suite(runs, acs, {"p1": 3.0, "p2": 1.0}, n_samples=50)
    assert _row(report, "a")["mean_final"] == pytest.approx(0.75)
    gap = _row(report, "a")["rating"] - _row(report, "b")["rating"]
    assert gap == pytest.approx(ELO_SCALE * math.log(3.0), abs=1e-3)


def test_mixed_judges_are_refused():
    runs, acs = _tables([("p", "a", "r1", [1.0]), ("p", "b", "r1", [0.0])])
    runs.loc[1, "judge_id"] = "anthropic"
    with pytest.raises(InputError, match="different judges") as error:
        rate_suite(runs, acs, {"p": 1.0})
    assert "\n" not in str(error.value)
    assert "pin `comparability:`" in str(error.value)


def test_pins_leave_other_runs_out_and_say_why():
    runs, _ = _tables([("p", "a", "r1", [1.0]), ("p", "b", "r1", [0.0]), ("p", "c", "r1", [0.5])])
    runs.loc[2, "judge_id"] = "anthropic"
    kept, left_out = select_runs(runs, {"p": 1.0}, pins={"judge_id": "heuristic"})
    assert sorted(kept["run_key"]) == ["p.a.r1", "p.b.r1"]
    assert left_out.to_dict("records") == [
        {
            "benchmark": "p",
            "framework": "c",
            "run_key": "p.c.r1",
            "reason": "different key: judge_id anthropic, the suite pins heuristic",
        }
    ]


def test_incomplete_stale_and_null_finals_are_left_out_never_zero():
    runs, acs = _tables(
        [
            ("p", "a", "r1", [1.0]),
            ("p", "b", "r1", [0.0]),
            ("p", "c", "r1", [0.5]),
            ("p", "d", "r1", [0.5]),
            ("q", "e", "r1", [0.5]),
            ("p", "f", "r1", [0.2]),
        ]
    )
    runs.loc[2, ["final", "not_ranked_reason"]] = [None, "incomplete: 2 checks unscored"]
    runs.loc[3, "final"] = None
    runs.loc[1, "baseline_sha256"] = "other"
    report = rate_suite(
        runs, acs, {"p": 1.0}, baselines={"p": "sha-p"}, n_samples=20
    )  # q is not in the suite
    reasons = report.left_out.set_index("framework")["reason"].to_dict()
    assert reasons["c"] == "incomplete: 2 checks unscored"
    assert reasons["d"] == "unmeasured: Final is NULL"
    assert reasons["b"].startswith("different key: baseline other")
    assert "e" not in reasons
    with pytest.raises(InputError, match="at least 2 frameworks"):
        rate_suite(runs[runs["framework"] != "f"], acs, {"p": 1.0}, baselines={"p": "sha-p"})


def test_mixed_baselines_within_a_benchmark_are_refused():
    runs, acs = _tables([("p", "a", "r1", [1.0]), ("p", "b", "r1", [0.0])])
    runs.loc[1, "baseline_sha256"] = "other"
    with pytest.raises(InputError, match="different baselines"):
        rate_suite(runs, acs, {"p": 1.0})


def test_drawn_prd_wins_equal_the_direct_bilinear_form():
    rng = np.random.default_rng(5)
    spec = [
        ("p", f, f"r{r}", rng.random(5).round(1).tolist())
        for f, n in (("a", 3), ("b", 1), ("c", 2))
        for r in range(n)
    ]
    runs, acs = _tables(spec)
    runs = runs.sort_values(["framework", "run_key"], ignore_index=True)
    prd = suite._prd_arrays(runs, acs, pd.Index(["a", "b", "c"]), 2.0)
    counts = np.array([[3, 0, 0, 1, 2, 0], [1, 1, 1, 1, 0, 2], [0, 2, 1, 1, 1, 1]])
    groups, wins = suite._slot_wins(prd, counts)
    assert list(groups) == [0, 1, 2]
    for k, m in enumerate(counts):
        v = m / prd.group_size
        onehot = np.eye(3)[prd.framework]
        direct = 2.0 * onehot.T @ (np.outer(v, v) * prd.scores) @ onehot
        np.testing.assert_allclose(wins[k], direct, atol=1e-12)
    full = suite._point_wins(prd, 3)
    np.testing.assert_allclose(suite._slot_wins(prd, np.ones((1, 6), dtype=int))[1][0], full)


def test_drawn_prd_wins_need_memory_linear_in_draws_with_ten_runs_per_framework():
    # Tables over the distinct draws of each framework grew as G²·draws²: with 10 runs per
    # framework almost every draw is distinct (7.2 GB for 20 frameworks × 50 PRDs).
    rng = np.random.default_rng(9)
    spec = [("p", f, f"r{r}", rng.random(8).round(1).tolist()) for f in "abc" for r in range(10)]
    runs, acs = _tables(spec)
    runs = runs.sort_values(["framework", "run_key"], ignore_index=True)
    prd = suite._prd_arrays(runs, acs, pd.Index(["a", "b", "c"]), 1.0)
    pick = prd.group_start + rng.integers(0, 10, size=(2000, 30))
    counts = np.stack([np.bincount(row, minlength=30) for row in pick])
    tracemalloc.start()
    try:
        _, wins = suite._slot_wins(prd, counts)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert wins.shape == (2000, 3, 3)
    assert peak < 8 * 2000 * 30 * 4  # a few K × R float arrays, not K² tables
