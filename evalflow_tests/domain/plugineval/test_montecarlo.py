"""Monte Carlo statistics against references, with a scripted backend."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from evalflow.domain.plugineval.montecarlo import (
    Invocation,
    McPrompt,
    clopper_pearson_ci,
    coefficient_of_variation,
    mc_score,
    run_monte_carlo,
    token_summary,
    wilson_ci,
)


class ScriptedBackend:
    """Returns the scripted invocations in order (a test double, never shipped)."""

    name = "scripted"
    simulated = False

    def __init__(self, script: list[Invocation]) -> None:
        self.script = script

    def invoke(self, prompt: McPrompt, run_index: int) -> Invocation:
        return self.script[run_index]


def wilson_by_hand(k: int, n: int) -> tuple[float, float]:
    z = 1.959963984540054
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (25, 50), (49, 50), (50, 50), (1, 1)])
def test_wilson_matches_hand_formula(k: int, n: int) -> None:
    lo, hi = wilson_ci(k, n)
    elo, ehi = wilson_by_hand(k, n)
    assert lo == pytest.approx(max(0.0, elo), abs=1e-12)
    assert hi == pytest.approx(min(1.0, ehi), abs=1e-12)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (1, 10), (5, 50), (25, 50), (49, 50), (50, 50)])
def test_clopper_pearson_is_exact(k: int, n: int) -> None:
    ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert clopper_pearson_ci(k, n) == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_token_summary_and_outliers() -> None:
    tokens = [100, 110, 120, 130, 140, 150, 160, 170, 1000]
    s = token_summary(tokens)
    q1, med, q3 = np.percentile(tokens, [25, 50, 75])
    assert (s["q1"], s["median"], s["q3"]) == (q1, med, q3)
    assert s["iqr"] == q3 - q1
    # upper fence = 160 + 1.5 × 40 = 220 → only 1000 is an outlier
    assert s["outliers"] == 1


def test_cv() -> None:
    assert coefficient_of_variation([0.5, 0.5]) == 0.0
    assert coefficient_of_variation([0.2, 0.6]) == pytest.approx(0.2 / 0.4)
    assert coefficient_of_variation([0.0, 0.0]) == 0.0


def test_mc_score_formula_by_hand() -> None:
    # .40×.9 + .30×(1 − .2) + .20×(1 − .1) + .10×(1 − 2000/8000)
    # = .36 + .24 + .18 + .075 = 0.855
    score, missing = mc_score(0.9, 0.2, 0.1, 0.75)
    assert score == pytest.approx(0.855)
    assert missing == ()
    # CV above 1 is capped
    assert mc_score(1.0, 3.0, 0.0, 1.0)[0] == pytest.approx(0.40 + 0.0 + 0.20 + 0.10)
    # no quality data → the consistency term drops out and the rest renormalise
    score, missing = mc_score(0.5, None, 0.0, 1.0)
    assert missing == ("consistency",)
    assert score == pytest.approx((0.40 * 0.5 + 0.20 + 0.10) / 0.70)


def test_scripted_backend_statistics() -> None:
    script = (
        [Invocation(True, 0.8, False, 1000)] * 6
        + [Invocation(True, 0.4, True, 3000)] * 2
        + [Invocation(False, None, False, None)] * 2
        + [Invocation(False, None, False, None, errored=True)] * 2
    )
    prompts = [McPrompt(f"p{i}") for i in range(12)]
    res = run_monte_carlo(ScriptedBackend(script), prompts, runs=12, seed=3)
    assert res.measured
    assert res.errored == 2
    st = res.stats
    # 10 valid runs, 8 activated
    assert st["activation_rate"] == pytest.approx(0.8)
    assert (st["activation_ci_low"], st["activation_ci_high"]) == pytest.approx(wilson_ci(8, 10))
    assert st["failure_rate"] == pytest.approx(0.2)
    q = [0.8] * 6 + [0.4] * 2
    assert st["quality_cv"] == pytest.approx(np.std(q) / np.mean(q))
    assert st["token_median"] == 1000.0
    assert res.dimensions["robustness"] == pytest.approx(0.8)
    assert res.dimensions["output_quality"] == pytest.approx(np.mean(q))
    # all prompts should trigger → F1 = 2·8/(16 + 0 + 2) = 16/18
    assert res.dimensions["triggering_accuracy"] == pytest.approx(16 / 18)
    eff = 1 - 1000 / 8000
    cv = np.std(q) / np.mean(q)
    assert res.mc_score == pytest.approx(0.40 * 0.8 + 0.30 * (1 - cv) + 0.20 * 0.8 + 0.10 * eff)
    lo, hi = res.cis["robustness"]
    cp = clopper_pearson_ci(2, 10)
    assert (lo, hi) == pytest.approx((1 - cp[1], 1 - cp[0]))
    assert run_monte_carlo(ScriptedBackend(script), prompts, runs=12, seed=3) == res


def test_negative_prompts_measure_false_activation() -> None:
    script = [Invocation(True, 0.9, False, 500)] * 4 + [Invocation(True, None, False, 500)] * 2
    prompts = [McPrompt("p", True)] * 4 + [McPrompt("n", False)] * 2
    res = run_monte_carlo(ScriptedBackend(script), prompts, runs=6)
    assert res.stats["activation_rate"] == 1.0
    assert res.stats["false_activation_rate"] == 1.0
    # TP 4, FP 2 → F1 = 8 / 10
    assert res.dimensions["triggering_accuracy"] == pytest.approx(0.8)


def test_all_runs_errored_is_unmeasured() -> None:
    script = [Invocation(False, None, False, None, errored=True)] * 5
    res = run_monte_carlo(ScriptedBackend(script), [McPrompt("p")], runs=5)
    assert not res.measured
    assert res.reason == "all 5 runs errored"
    assert res.dimensions == {}
    assert res.mc_score is None


def test_invalid_backend_output_counts_as_errored() -> None:
    script = [Invocation(True, 1.5, False, 10), Invocation(True, 0.5, False, -1)]
    res = run_monte_carlo(ScriptedBackend(script), [McPrompt("p")], runs=2)
    assert not res.measured
    assert [f.code for f in res.findings] == ["MC_INVALID_RUN", "MC_INVALID_RUN"]


def test_no_activation_leaves_quality_unmeasured() -> None:
    script = [Invocation(False, None, False, None)] * 4
    res = run_monte_carlo(ScriptedBackend(script), [McPrompt("p")], runs=4)
    assert res.measured
    assert "output_quality" not in res.dimensions
    assert "token_efficiency" not in res.dimensions
    assert res.dimensions["triggering_accuracy"] == 0.0
    assert set(res.mc_score_missing) == {"consistency", "efficiency"}
