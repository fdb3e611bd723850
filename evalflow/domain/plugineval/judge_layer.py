"""Layer 2 — LLM judge: the data model and the maths, independent of any transport.

A judge (anything implementing `PluginJudge`) reads one skill and returns a `JudgeReport`:
per test prompt its `would_trigger` prediction (would an agent that sees only the skill's
name and description among other skills pick it?) plus anchored-rubric scores for
orchestration_fitness, output_quality and scope_calibration. The test prompts and their
`should_trigger` labels are evalflow's (`judge_prompts`: the seeded router generator —
positives from the skill's own description, name and headings, negatives from distractor,
corpus and plugin skills); the judge sees only the texts, so it never chooses the labels its
predictions are graded against. evalflow then

* computes triggering F1, precision and recall from (evalflow's label, the judge's
  `would_trigger`) itself — a number the model writes is never used (fix 5), a
  `should_trigger` the model adds is ignored, and rubric scores outside [0, 1] (or NaN) are
  rejected, not clamped; a prompt set without both labels leaves F1 unmeasured (a reason);
* averages valid judges, and reports Cohen's kappa on `would_trigger` over the prompts two
  judges share (the mean over pairs when there are more than two judges);
* gives CIs: triggering from a seeded bootstrap over prompts, rubric dimensions from a
  t-interval across judges when there are at least two (one judge → no rubric CI).

A judge that raises, returns invalid output or does not answer every test prompt exactly
once is reported as a finding and left out; with no valid judge the layer is unmeasured.
No judge implementation ships here: the Claude backend plugs in through `PluginJudge`, and
tests bring their own.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Annotated, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalflow.domain.plugineval.model import Finding
from evalflow.domain.plugineval.router import LabelledPrompt

RUBRIC_DIMENSIONS: tuple[str, ...] = (
    "orchestration_fitness",
    "output_quality",
    "scope_calibration",
)
BOOTSTRAP_SAMPLES = 500
JUDGE_PROMPTS = 10

UnitScore = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class PromptPrediction(BaseModel):
    """The judge's answer for one test prompt: would the skill trigger. A `should_trigger`
    the judge adds is dropped (extra="ignore"): that label is evalflow's, never the model's."""

    model_config = ConfigDict(frozen=True, strict=True, extra="ignore")

    prompt: str = Field(min_length=1)
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
    """What a judge gets: the skill text, its readable references and evalflow's labelled
    test prompts (a judge backend must send only their `text`). Empty `prompts`:
    `run_judges` fills in `judge_prompts` for the skill."""

    name: str
    description: str
    skill_md: str
    references: tuple[tuple[str, str], ...] = ()
    prompts: tuple[LabelledPrompt, ...] = ()

    def __post_init__(self) -> None:
        keys = [_prompt_key(p.text) for p in self.prompts]
        if len(set(keys)) != len(keys):
            # Answers are matched to labels by text: a repeated prompt would be ambiguous.
            raise ValueError("JudgeInput prompts must be distinct")


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


def judge_prompts(
    name: str,
    description: str,
    *,
    seed: int = 0,
    headings: Sequence[str] = (),
    others: Sequence[tuple[str, str, str]] = (),
    n: int = JUDGE_PROMPTS,
) -> tuple[LabelledPrompt, ...]:
    """evalflow's labelled test prompts for one skill: the router's seeded generator over the
    skill (description, name, task-like headings) against the fixed distractors plus
    `others` — (source id, name, description), e.g. ("corpus:<path>", …).

    Deterministic for (name, description, headings, others, seed). A repeated text keeps its
    first occurrence; a text drawn with both labels (another skill shares the phrase) is
    dropped, since evalflow cannot say which it is.
    """
    from evalflow.domain.plugineval.router import (
        DISTRACTORS,
        CatalogueEntry,
        body_topics,
        labelled_prompts,
    )

    target = CatalogueEntry("candidate", name, description)
    catalogue = [CatalogueEntry(f"distractor:{other}", other, d) for other, d in DISTRACTORS]
    catalogue += [CatalogueEntry(sid, other, d) for sid, other, d in others]
    drawn = labelled_prompts(target, catalogue, n, seed=seed, topics=body_topics(headings))
    labels: dict[str, set[bool]] = {}
    for p in drawn:
        labels.setdefault(_prompt_key(p.text), set()).add(p.should_trigger)
    out: dict[str, LabelledPrompt] = {}
    for p in drawn:
        key = _prompt_key(p.text)
        if len(labels[key]) == 1 and key not in out:
            out[key] = p
    return tuple(out.values())


@dataclass(frozen=True, slots=True)
class TriggeringScores:
    """Triggering against evalflow's labels; None where the ratio has no denominator."""

    f1: float | None
    precision: float | None
    recall: float | None


def triggering_scores(should: Sequence[bool], would: Sequence[bool]) -> TriggeringScores:
    """F1 / precision / recall of `would` (the judge) against `should` (evalflow's labels)."""
    if len(should) != len(would):
        raise ValueError("triggering scores need one prediction per label")
    tp = sum(1 for s, w in zip(should, would, strict=True) if s and w)
    fp = sum(1 for s, w in zip(should, would, strict=True) if not s and w)
    fn = sum(1 for s, w in zip(should, would, strict=True) if s and not w)
    denom = 2 * tp + fp + fn
    return TriggeringScores(
        f1=None if denom == 0 else 2 * tp / denom,
        precision=None if tp + fp == 0 else tp / (tp + fp),
        recall=None if tp + fn == 0 else tp / (tp + fn),
    )


def unmeasured_triggering(prompts: Sequence[LabelledPrompt]) -> str | None:
    """Why F1 cannot be measured on this prompt set (None: it can). Without a negative every
    judge that always says yes scores 1; without a positive F1 is 0 or undefined."""
    if not prompts:
        return "triggering F1 unmeasured: no test prompts"
    if not any(p.should_trigger for p in prompts):
        return "triggering F1 unmeasured: the prompt set has no should-trigger prompt"
    if all(p.should_trigger for p in prompts):
        return "triggering F1 unmeasured: the prompt set has no should-not-trigger prompt"
    return None


def answers_for(report: JudgeReport, prompts: Sequence[LabelledPrompt]) -> tuple[bool, ...]:
    """The report's `would_trigger` per labelled prompt, in `prompts` order; raises
    `JudgeOutputError` unless every prompt is answered exactly once and nothing else is."""
    wanted = [_prompt_key(p.text) for p in prompts]
    got: dict[str, bool] = {}
    for p in report.predictions:
        key = _prompt_key(p.prompt)
        if key in got:
            raise JudgeOutputError(f"{report.judge}: predictions: {p.prompt!r} answered twice")
        got[key] = p.would_trigger
    extra = sorted(got.keys() - set(wanted))
    if extra:
        raise JudgeOutputError(f"{report.judge}: predictions: {extra[0]!r} is not a test prompt")
    missing = [k for k in wanted if k not in got]
    if missing:
        raise JudgeOutputError(f"{report.judge}: predictions: no answer for {missing[0]!r}")
    return tuple(got[k] for k in wanted)


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
    # The labelled prompt set (audit trail) and each valid judge's answers, in per_judge order.
    prompts: tuple[LabelledPrompt, ...] = ()
    answers: tuple[tuple[bool, ...], ...] = ()
    triggering: TriggeringScores | None = None
    triggering_reason: str | None = None


def _f1_bootstrap(
    should: np.ndarray, answers: Sequence[tuple[bool, ...]], rng: np.random.Generator
) -> np.ndarray:
    """Mean-over-judges F1 per bootstrap sample over the shared prompts; samples that drew
    no should-trigger prompt have no F1 and are dropped."""
    idx = rng.integers(0, should.size, size=(BOOTSTRAP_SAMPLES, should.size))
    s = should[idx]
    keep = s.any(axis=1)
    f1s = []
    for a in answers:
        w = np.asarray(a, dtype=bool)[idx]
        tp = (s & w).sum(axis=1)
        denom = 2 * tp + (~s & w).sum(axis=1) + (s & ~w).sum(axis=1)
        f1s.append(2 * tp / np.maximum(denom, 1))
    return np.mean(np.vstack(f1s), axis=0)[keep]


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def aggregate_judges(
    reports: Sequence[JudgeReport],
    prompts: Sequence[LabelledPrompt] = (),
    *,
    requested: int | None = None,
    findings: Sequence[Finding] = (),
    seed: int = 0,
) -> JudgeLayerResult:
    """Average valid judge reports into per-dimension scores, CIs and kappa; triggering is
    graded against `prompts`' labels (every report must answer exactly those prompts)."""
    requested = len(reports) if requested is None else requested
    prompts = tuple(prompts)
    if not reports:
        reason = "no LLM judge configured" if requested == 0 else "no judge returned valid output"
        return JudgeLayerResult(
            False, reason, requested, 0, findings=tuple(findings), prompts=prompts
        )
    rng = np.random.default_rng(seed)
    answers = tuple(answers_for(r, prompts) for r in reports)
    should = [p.should_trigger for p in prompts]
    no_f1 = unmeasured_triggering(prompts)
    per_scores = [
        TriggeringScores(None, None, None) if no_f1 else triggering_scores(should, a)
        for a in answers
    ]
    dims: dict[str, float] = {}
    cis: dict[str, tuple[float, float]] = {}
    triggering = None
    if no_f1 is None:
        triggering = TriggeringScores(
            f1=_mean([t.f1 for t in per_scores]),
            precision=_mean([t.precision for t in per_scores]),
            recall=_mean([t.recall for t in per_scores]),
        )
        assert triggering.f1 is not None  # both labels present ⇒ every F1 is defined
        dims["triggering_accuracy"] = triggering.f1
        boot = _f1_bootstrap(np.asarray(should, dtype=bool), answers, rng)
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
            "triggering_f1": t.f1,
            "triggering_precision": t.precision,
            "triggering_recall": t.recall,
            **{d: float(getattr(r, d)) for d in RUBRIC_DIMENSIONS},
        }
        for r, t in zip(reports, per_scores, strict=True)
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
        prompts=prompts,
        answers=answers,
        triggering=triggering,
        triggering_reason=no_f1,
    )


def run_judges(
    judges: Sequence[PluginJudge], skill: JudgeInput, *, seed: int = 0
) -> JudgeLayerResult:
    """Ask every judge; failures become findings, valid reports are aggregated against the
    input's labelled prompts (`judge_prompts` for the skill when it brings none)."""
    if not skill.prompts:
        skill = replace(skill, prompts=judge_prompts(skill.name, skill.description, seed=seed))
    reports: list[JudgeReport] = []
    findings: list[Finding] = []
    for judge in judges:
        try:
            report = judge.judge(skill)
            if not isinstance(report, JudgeReport):
                report = JudgeReport.model_validate(report)
            answers_for(report, skill.prompts)
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
    return aggregate_judges(
        reports, skill.prompts, requested=len(judges), findings=findings, seed=seed
    )
