"""Layer 2 — LLM judge: the data model and the maths, independent of any transport.

A judge (anything implementing `PluginJudge`) reads one skill and returns a `JudgeReport`:
per-prompt triggering predictions for ~10 test prompts plus anchored-rubric scores for
orchestration_fitness, output_quality and scope_calibration. evalflow then

* computes triggering F1 from the predictions itself — a number the model writes is never
  used (fix 5), and rubric scores outside [0, 1] (or NaN) are rejected, not clamped;
* averages valid judges, and reports Cohen's kappa on `would_trigger` over the prompts two
  judges share (the mean over pairs when there are more than two judges);
* gives CIs: triggering from a seeded bootstrap over prompts, rubric dimensions from a
  t-interval across judges when there are at least two (one judge → no rubric CI).

A judge that raises or returns invalid output is reported as a finding and left out; with
no valid judge the layer is unmeasured. No judge implementation ships here: the Claude
backend plugs in through `PluginJudge`, and tests bring their own.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Annotated, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalflow.domain.plugineval.model import Finding

RUBRIC_DIMENSIONS: tuple[str, ...] = (
    "orchestration_fitness",
    "output_quality",
    "scope_calibration",
)
BOOTSTRAP_SAMPLES = 500

UnitScore = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class PromptPrediction(BaseModel):
    """One test prompt: should the skill trigger, and would it (the judge's prediction)."""

    model_config = ConfigDict(frozen=True, strict=True, extra="ignore")

    prompt: str = Field(min_length=1)
    should_trigger: bool
    would_trigger: bool


class JudgeReport(BaseModel):
    """A judge's answer for one skill; extra keys (e.g. a self-reported F1) are ignored."""

    model_config = ConfigDict(frozen=True, strict=True, extra="ignore")

    judge: str = "judge"
    predictions: list[PromptPrediction] = Field(min_length=1)
    orchestration_fitness: UnitScore
    output_quality: UnitScore
    scope_calibration: UnitScore
    rationale: str = ""


@dataclass(frozen=True, slots=True)
class JudgeInput:
    """What a judge gets: the skill text, its readable references, suggested test prompts."""

    name: str
    description: str
    skill_md: str
    references: tuple[tuple[str, str], ...] = ()
    prompts: tuple[str, ...] = ()


class PluginJudge(Protocol):
    """A judge backend (e.g. Claude). `judge` may raise; the layer records the failure."""

    name: str

    def judge(self, skill: JudgeInput) -> JudgeReport: ...


class JudgeOutputError(ValueError):
    """The judge's text is not one bare JSON object matching `JudgeReport`."""


def parse_judge_output(text: str, judge: str) -> JudgeReport:
    """Validate one bare JSON object (no Markdown fences) into a `JudgeReport`."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JudgeOutputError(f"{judge}: output is not a JSON object ({exc.msg})") from exc
    if not isinstance(data, dict):
        raise JudgeOutputError(f"{judge}: output is a JSON {type(data).__name__}, not an object")
    data.setdefault("judge", judge)
    try:
        return JudgeReport.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise JudgeOutputError(f"{judge}: {loc}: {first['msg']}") from exc


def triggering_f1(predictions: Sequence[PromptPrediction]) -> float | None:
    """F1 of would_trigger against should_trigger; None if neither side has a positive."""
    tp = sum(1 for p in predictions if p.should_trigger and p.would_trigger)
    fp = sum(1 for p in predictions if not p.should_trigger and p.would_trigger)
    fn = sum(1 for p in predictions if p.should_trigger and not p.would_trigger)
    denom = 2 * tp + fp + fn
    return None if denom == 0 else 2 * tp / denom


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's kappa for two binary raters; None when chance agreement is 1 (undefined)."""
    if len(a) != len(b):
        raise ValueError("kappa needs two ratings of the same items")
    n = len(a)
    if n == 0:
        return None
    p_o = sum(1 for x, y in zip(a, b, strict=True) if x == y) / n
    pa, pb = sum(a) / n, sum(b) / n
    p_e = pa * pb + (1 - pa) * (1 - pb)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1 - p_e)


def _prompt_key(prompt: str) -> str:
    return " ".join(prompt.casefold().split())


def pairwise_kappa(reports: Sequence[JudgeReport]) -> tuple[float | None, int]:
    """Mean Cohen's kappa over judge pairs with ≥ 2 shared prompts; (kappa, pairs used)."""
    values: list[float] = []
    for r1, r2 in combinations(reports, 2):
        m1 = {_prompt_key(p.prompt): p.would_trigger for p in r1.predictions}
        m2 = {_prompt_key(p.prompt): p.would_trigger for p in r2.predictions}
        shared = sorted(m1.keys() & m2.keys())
        if len(shared) < 2:
            continue
        k = cohen_kappa([m1[s] for s in shared], [m2[s] for s in shared])
        if k is not None:
            values.append(k)
    if not values:
        return None, 0
    return sum(values) / len(values), len(values)


@dataclass(frozen=True, slots=True)
class JudgeLayerResult:
    """Layer-2 output; unmeasured (with a reason) when no judge produced valid data."""

    measured: bool
    reason: str | None
    requested: int
    judges: int
    kappa: float | None = None
    kappa_pairs: int = 0
    dimensions: dict[str, float] = field(default_factory=dict)
    cis: dict[str, tuple[float, float]] = field(default_factory=dict)
    per_judge: tuple[dict[str, float | str | None], ...] = ()
    findings: tuple[Finding, ...] = ()


def _f1_bootstrap(reports: Sequence[JudgeReport], rng: np.random.Generator) -> np.ndarray:
    """Mean-over-judges F1 per bootstrap sample, resampling each judge's prompts."""
    per_judge: list[np.ndarray] = []
    for r in reports:
        should = np.array([p.should_trigger for p in r.predictions], dtype=bool)
        would = np.array([p.would_trigger for p in r.predictions], dtype=bool)
        idx = rng.integers(0, should.size, size=(BOOTSTRAP_SAMPLES, should.size))
        s, w = should[idx], would[idx]
        tp = (s & w).sum(axis=1)
        denom = 2 * tp + (~s & w).sum(axis=1) + (s & ~w).sum(axis=1)
        per_judge.append(np.where(denom > 0, 2 * tp / np.maximum(denom, 1), np.nan))
    stacked = np.vstack(per_judge)
    valid = ~np.isnan(stacked)
    counts = valid.sum(axis=0)
    sums = np.where(valid, stacked, 0.0).sum(axis=0)
    return (sums / np.maximum(counts, 1))[counts > 0]


def aggregate_judges(
    reports: Sequence[JudgeReport],
    *,
    requested: int | None = None,
    findings: Sequence[Finding] = (),
    seed: int = 0,
) -> JudgeLayerResult:
    """Average valid judge reports into per-dimension scores, CIs and kappa."""
    requested = len(reports) if requested is None else requested
    if not reports:
        reason = "no LLM judge configured" if requested == 0 else "no judge returned valid output"
        return JudgeLayerResult(False, reason, requested, 0, findings=tuple(findings))
    rng = np.random.default_rng(seed)
    f1s = [triggering_f1(r.predictions) for r in reports]
    dims: dict[str, float] = {}
    cis: dict[str, tuple[float, float]] = {}
    valid_f1 = [f for f in f1s if f is not None]
    if valid_f1:
        dims["triggering_accuracy"] = sum(valid_f1) / len(valid_f1)
        boot = _f1_bootstrap([r for r, f in zip(reports, f1s, strict=True) if f is not None], rng)
        if boot.size:
            lo, hi = np.percentile(boot, [2.5, 97.5])
            cis["triggering_accuracy"] = (float(lo), float(hi))
    k = len(reports)
    t_crit = None
    if k >= 2:
        # Deferred: scipy is only needed with several judges and is slow to import.
        from scipy.special import stdtrit

        t_crit = float(stdtrit(k - 1, 0.975))
    for dim in RUBRIC_DIMENSIONS:
        values = [float(getattr(r, dim)) for r in reports]
        mean = sum(values) / k
        dims[dim] = mean
        if t_crit is not None:
            sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (k - 1))
            half = t_crit * sd / math.sqrt(k)
            cis[dim] = (max(0.0, mean - half), min(1.0, mean + half))
    kappa, pairs = pairwise_kappa(reports) if k >= 2 else (None, 0)
    per_judge = tuple(
        {
            "judge": r.judge,
            "triggering_f1": f,
            **{d: float(getattr(r, d)) for d in RUBRIC_DIMENSIONS},
        }
        for r, f in zip(reports, f1s, strict=True)
    )
    return JudgeLayerResult(
        measured=True,
        reason=None,
        requested=requested,
        judges=k,
        kappa=kappa,
        kappa_pairs=pairs,
        dimensions=dims,
        cis=cis,
        per_judge=per_judge,
        findings=tuple(findings),
    )


def run_judges(
    judges: Sequence[PluginJudge], skill: JudgeInput, *, seed: int = 0
) -> JudgeLayerResult:
    """Ask every judge; failures become findings, valid reports are aggregated."""
    reports: list[JudgeReport] = []
    findings: list[Finding] = []
    for judge in judges:
        try:
            report = judge.judge(skill)
            if not isinstance(report, JudgeReport):
                report = JudgeReport.model_validate(report)
        except (ValidationError, JudgeOutputError) as exc:
            findings.append(
                Finding("JUDGE_INVALID_OUTPUT", "warning", f"{judge.name}: {exc}", None)
            )
            continue
        except Exception as exc:
            findings.append(
                Finding(
                    "JUDGE_FAILED",
                    "warning",
                    f"{judge.name}: {type(exc).__name__}: {exc}",
                    None,
                )
            )
            continue
        reports.append(report)
    return aggregate_judges(reports, requested=len(judges), findings=findings, seed=seed)
