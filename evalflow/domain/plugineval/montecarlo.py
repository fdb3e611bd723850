"""Layer 3 — Monte Carlo: N invocations through a backend, and the statistics over them.

A backend (`McBackend`) answers one prompt per run with an `Invocation`; evalflow owns the
maths (SPEC §2):

* activation rate over should-trigger prompts, with a Wilson 95 % interval;
* output consistency: CV = population std / mean of the quality scores of activated runs;
* failure rate (`failed` over non-errored runs) with an exact Clopper–Pearson interval
  from beta quantiles (fix 6);
* tokens of activated runs: median, IQR, outliers by the 1.5 × IQR rule;
* `mc_score = .40·activation + .30·(1 − min(1, CV)) + .20·(1 − failure) + .10·eff_norm`,
  `eff_norm = max(0, 1 − median_tokens / 8000)`; a component with no data drops out and
  the remaining weights are renormalised (listed in `mc_score_missing`).

`errored` runs carry no data and are excluded everywhere; if every run errored the layer
is unmeasured (fix 4). Per-dimension scores: triggering_accuracy = F1 of activation
against should_trigger, output_quality = mean quality, robustness = 1 − failure rate,
token_efficiency = eff_norm. Monte Carlo measures behaviour, not structure, so it gives
orchestration_fitness and scope_calibration nothing; their MC blend weights renormalise away.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Protocol

import numpy as np

from evalflow.domain.plugineval.model import Finding

DEFAULT_RUNS = 50
TOKEN_CAP = 8000.0
BOOTSTRAP_SAMPLES = 500
MC_WEIGHTS: dict[str, float] = {
    "activation": 0.40,
    "consistency": 0.30,
    "reliability": 0.20,
    "efficiency": 0.10,
}


@dataclass(frozen=True, slots=True)
class McPrompt:
    """One prompt sent to the backend; negatives (should_trigger False) test false activation."""

    text: str
    should_trigger: bool = True


@dataclass(frozen=True, slots=True)
class Invocation:
    """What one simulated or real invocation produced."""

    activated: bool
    quality: float | None
    failed: bool
    tokens: int | None
    errored: bool = False


class McBackend(Protocol):
    """Runs one prompt through the skill. `simulated` must be True for anything not a real agent."""

    name: str
    simulated: bool

    def invoke(self, prompt: McPrompt, run_index: int) -> Invocation: ...


@dataclass(frozen=True, slots=True)
class McResult:
    """Layer-3 output; `measured` is False when no run produced data."""

    backend: str
    simulated: bool
    runs: int
    measured: bool
    reason: str | None = None
    errored: int = 0
    stats: dict[str, float | int | None] = field(default_factory=dict)
    mc_score: float | None = None
    mc_score_missing: tuple[str, ...] = ()
    dimensions: dict[str, float] = field(default_factory=dict)
    cis: dict[str, tuple[float, float]] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()


_Z95 = NormalDist().inv_cdf(0.975)


def wilson_ci(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion."""
    if n <= 0:
        raise ValueError("wilson_ci needs n > 0")
    z = _Z95 if confidence == 0.95 else NormalDist().inv_cdf(0.5 + confidence / 2.0)
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def clopper_pearson_ci(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact Clopper–Pearson interval from beta quantiles (PLUGINEVAL fix 6)."""
    if n <= 0:
        raise ValueError("clopper_pearson_ci needs n > 0")
    # Deferred: scipy.stats costs ~0.8 s to import and only the deep path needs it.
    from scipy.stats import beta

    alpha = 1.0 - confidence
    lo = 0.0 if successes == 0 else float(beta.ppf(alpha / 2, successes, n - successes + 1))
    hi = 1.0 if successes == n else float(beta.ppf(1 - alpha / 2, successes + 1, n - successes))
    return lo, hi


def coefficient_of_variation(values: Sequence[float]) -> float:
    """Population std / mean; 0 when the values are all equal, 1 (worst) for a zero mean."""
    arr = np.asarray(values, dtype=float)
    std = float(arr.std())
    if std == 0.0:
        return 0.0
    mean = float(arr.mean())
    return std / mean if mean > 0 else 1.0


def token_summary(tokens: Sequence[int]) -> dict[str, float | int]:
    """Median, quartiles (linear interpolation), IQR and outliers beyond 1.5 × IQR."""
    arr = np.asarray(tokens, dtype=float)
    q1, median, q3 = (float(x) for x in np.percentile(arr, [25, 50, 75]))
    iqr = q3 - q1
    outliers = int(np.count_nonzero((arr < q1 - 1.5 * iqr) | (arr > q3 + 1.5 * iqr)))
    return {"median": median, "q1": q1, "q3": q3, "iqr": iqr, "outliers": outliers}


def f1_from_labels(should: Sequence[bool], did: Sequence[bool]) -> float | None:
    """F1 with should as truth; None when there is nothing positive on either side."""
    tp = sum(1 for s, d in zip(should, did, strict=True) if s and d)
    fp = sum(1 for s, d in zip(should, did, strict=True) if not s and d)
    fn = sum(1 for s, d in zip(should, did, strict=True) if s and not d)
    denom = 2 * tp + fp + fn
    return None if denom == 0 else 2 * tp / denom


def mc_score(
    activation_rate: float | None,
    cv: float | None,
    failure_rate: float | None,
    efficiency_norm: float | None,
) -> tuple[float | None, tuple[str, ...]]:
    """SPEC's mc_score, renormalised over the components that have data."""
    parts = {
        "activation": activation_rate,
        "consistency": None if cv is None else 1.0 - min(1.0, cv),
        "reliability": None if failure_rate is None else 1.0 - failure_rate,
        "efficiency": efficiency_norm,
    }
    present = {k: v for k, v in parts.items() if v is not None}
    missing = tuple(k for k, v in parts.items() if v is None)
    weight = sum(MC_WEIGHTS[k] for k in present)
    if weight <= 0:
        return None, missing
    return sum(MC_WEIGHTS[k] * v for k, v in present.items()) / weight, missing


def _validate(inv: Invocation, run: int, findings: list[Finding]) -> Invocation:
    """Out-of-range backend output is treated as an errored run and reported."""
    bad = None
    if inv.quality is not None and not (0.0 <= inv.quality <= 1.0):
        bad = f"quality {inv.quality!r} outside [0, 1]"
    elif inv.tokens is not None and inv.tokens < 0:
        bad = f"negative token count {inv.tokens}"
    if bad is None:
        return inv
    findings.append(
        Finding("MC_INVALID_RUN", "warning", f"run {run}: {bad}; counted as errored", None)
    )
    return Invocation(False, None, False, None, errored=True)


def _percentile_ci(samples: np.ndarray) -> tuple[float, float]:
    lo, hi = np.percentile(samples, [2.5, 97.5])
    return float(lo), float(hi)


def run_monte_carlo(
    backend: McBackend,
    prompts: Sequence[McPrompt],
    *,
    runs: int = DEFAULT_RUNS,
    seed: int = 0,
) -> McResult:
    """Invoke the backend `runs` times cycling through `prompts`, then summarise."""
    if runs <= 0 or not prompts:
        return McResult(backend.name, backend.simulated, 0, False, "no runs or no prompts")
    findings: list[Finding] = []
    shown: list[McPrompt] = [prompts[i % len(prompts)] for i in range(runs)]
    results = [_validate(backend.invoke(p, i), i, findings) for i, p in enumerate(shown)]
    valid = [(p, r) for p, r in zip(shown, results, strict=True) if not r.errored]
    n_err = runs - len(valid)
    if not valid:
        return McResult(
            backend.name,
            backend.simulated,
            runs,
            False,
            f"all {runs} runs errored",
            errored=n_err,
            findings=tuple(findings),
        )

    rng = np.random.default_rng(seed)
    stats: dict[str, float | int | None] = {"valid_runs": len(valid)}
    dims: dict[str, float] = {}
    cis: dict[str, tuple[float, float]] = {}

    positives = [r for p, r in valid if p.should_trigger]
    negatives = [r for p, r in valid if not p.should_trigger]
    activation = None
    if positives:
        k = sum(r.activated for r in positives)
        activation = k / len(positives)
        lo, hi = wilson_ci(k, len(positives))
        stats |= {"activation_rate": activation, "activation_ci_low": lo, "activation_ci_high": hi}
    stats["should_trigger_runs"] = len(positives)
    stats["false_activation_rate"] = (
        sum(r.activated for r in negatives) / len(negatives) if negatives else None
    )
    should = np.array([p.should_trigger for p, _ in valid], dtype=bool)
    did = np.array([r.activated for _, r in valid], dtype=bool)
    f1 = f1_from_labels(should.tolist(), did.tolist())
    if f1 is not None:
        dims["triggering_accuracy"] = f1
        idx = rng.integers(0, len(valid), size=(BOOTSTRAP_SAMPLES, len(valid)))
        s, d = should[idx], did[idx]
        tp = (s & d).sum(axis=1)
        denom = 2 * tp + (~s & d).sum(axis=1) + (s & ~d).sum(axis=1)
        boot = (2 * tp / np.maximum(denom, 1))[denom > 0]
        if boot.size:
            cis["triggering_accuracy"] = _percentile_ci(boot)
        stats["triggering_f1"] = f1

    qualities = np.array(
        [r.quality for _, r in valid if r.activated and r.quality is not None], dtype=float
    )
    cv = None
    if qualities.size:
        cv = coefficient_of_variation(qualities)
        mean_q = float(qualities.mean())
        dims["output_quality"] = mean_q
        boot_q = qualities[rng.integers(0, qualities.size, (BOOTSTRAP_SAMPLES, qualities.size))]
        cis["output_quality"] = _percentile_ci(boot_q.mean(axis=1))
        stats |= {"mean_quality": mean_q, "quality_cv": cv, "quality_runs": int(qualities.size)}

    failed = sum(r.failed for _, r in valid)
    failure_rate = failed / len(valid)
    f_lo, f_hi = clopper_pearson_ci(failed, len(valid))
    dims["robustness"] = 1.0 - failure_rate
    cis["robustness"] = (1.0 - f_hi, 1.0 - f_lo)
    stats |= {"failure_rate": failure_rate, "failure_ci_low": f_lo, "failure_ci_high": f_hi}

    tokens = np.array(
        [r.tokens for _, r in valid if r.activated and r.tokens is not None], dtype=float
    )
    eff = None
    if tokens.size:
        summary = token_summary(tokens.tolist())
        eff = max(0.0, 1.0 - float(summary["median"]) / TOKEN_CAP)
        dims["token_efficiency"] = eff
        boot_t = np.median(
            tokens[rng.integers(0, tokens.size, (BOOTSTRAP_SAMPLES, tokens.size))], axis=1
        )
        e_lo, e_hi = _percentile_ci(np.maximum(0.0, 1.0 - boot_t / TOKEN_CAP))
        cis["token_efficiency"] = (e_lo, e_hi)
        stats |= {
            "token_median": summary["median"],
            "token_iqr": summary["iqr"],
            "token_outliers": summary["outliers"],
            "efficiency_norm": eff,
        }

    score, missing = mc_score(activation, cv, failure_rate, eff)
    return McResult(
        backend=backend.name,
        simulated=backend.simulated,
        runs=runs,
        measured=True,
        errored=n_err,
        stats=stats,
        mc_score=score,
        mc_score_missing=missing,
        dimensions=dims,
        cis=cis,
        findings=tuple(findings),
    )
