"""One skill end to end at each depth, with a test-only judge and no file system."""

from __future__ import annotations

from dataclasses import replace

import pytest

from evalflow.domain.plugineval.composite import badge
from evalflow.domain.plugineval.corpus import build_index, make_entry
from evalflow.domain.plugineval.elo import EloResult
from evalflow.domain.plugineval.evaluate import EvalOptions, evaluate_skill
from evalflow.domain.plugineval.judge_layer import JudgeInput, JudgeReport, PromptPrediction
from evalflow.domain.plugineval.montecarlo import Invocation, McPrompt
from evalflow.domain.plugineval.report import render_markdown, report_dict
from evalflow_tests.domain.plugineval.skillfactory import files, skill_text

TEXT = skill_text(
    "## Input\nA feature request.\n\n## Output format\nReturns spec.md.\n\n"
    "## Write requirements\nNumber them.\n\n```markdown\n- FR-1\n```\n",
    name="spec-writer",
    description="Use when writing a feature specification, when drafting acceptance criteria.",
)


def no_links(_parsed) -> frozenset[str]:
    return frozenset()


def tick():
    t = iter(range(1000))
    return lambda: float(next(t))


class FixedJudge:
    name = "fixed"

    def __init__(self) -> None:
        self.seen: list[JudgeInput] = []

    def judge(self, skill: JudgeInput) -> JudgeReport:
        self.seen.append(skill)
        return JudgeReport(
            judge=self.name,
            # predicts evalflow's labels exactly: triggering F1 = 1
            predictions=[
                PromptPrediction(prompt=p.text, would_trigger=p.should_trigger)
                for p in skill.prompts
            ],
            orchestration_fitness=0.5,
            output_quality=0.6,
            scope_calibration=0.7,
        )


def run(depth: str, **kw):
    return evaluate_skill(files(TEXT), no_links, EvalOptions(depth=depth, **kw), clock=tick())


def test_quick_is_static_only() -> None:
    ev = run("quick")
    assert ev.judge is None
    assert ev.monte_carlo is None
    assert ev.elo is None
    assert ev.confidence == "estimated"
    assert ev.composite.measured_weight == pytest.approx(0.66)
    assert ev.durations_ms == {"static": 1000.0}  # injected clock: one tick = 1 s


def test_standard_without_judge_reports_it_unmeasured_and_keeps_the_quick_score() -> None:
    quick, standard = run("quick"), run("standard")
    assert standard.judge is not None
    assert not standard.judge.measured
    assert standard.judge.reason == "no LLM judge configured"
    assert standard.composite == quick.composite
    assert standard.confidence == "estimated"


def test_standard_with_a_judge_blends_and_is_assessed() -> None:
    judge = FixedJudge()
    ev = run("standard", judges=[judge])
    assert ev.judge.measured
    assert ev.confidence == "assessed"
    assert len(judge.seen[0].prompts) == 10
    assert ev.dimensions["scope_calibration"].score == pytest.approx(0.7)
    assert ev.dimensions["output_quality"].score == pytest.approx(0.6)
    assert ev.composite.measured_weight == pytest.approx(0.93)
    # a judge that triggers perfectly: F1 = 1 → blended with static (.15) and judge (.25)
    static_t = ev.static.dimensions["triggering_accuracy"]
    assert ev.dimensions["triggering_accuracy"].score == pytest.approx(
        (0.15 * static_t + 0.25 * 1.0) / 0.40
    )


def test_deep_simulated_router_is_reported_apart_and_never_scored() -> None:
    ev = run("deep", runs=20)
    quick = run("quick")
    assert ev.monte_carlo.simulated
    assert ev.monte_carlo.backend == "offline-tfidf-router"
    assert ev.monte_carlo.runs == 20
    assert ev.confidence == "estimated"
    assert ev.measured_layers == ("static",)
    assert not ev.elo.computed
    assert "no corpus" in ev.elo.reason
    # the composite, dimensions and badge are the measured (static) layer's
    assert ev.composite == quick.composite
    assert ev.dimensions == quick.dimensions
    assert ev.badge == quick.badge
    # the simulation is blended only into its own view
    assert ev.simulated is not None
    assert ev.simulated.backend == "offline-tfidf-router"
    assert ev.simulated.dimensions["robustness"].score is not None
    assert ev.simulated.dimensions["robustness"].ci_low is not None
    assert ev.simulated.composite != ev.composite
    assert run("deep", runs=20).simulated == ev.simulated  # deterministic


def corpus_of(depth: str = "quick"):
    index = build_index(
        [
            make_entry(
                name=f"c{i}",
                path=f"c{i}",
                description="Use when deploying containers.",
                sha256=f"{i}" * 64,
                dimensions={"triggering_accuracy": 0.1 * i, "token_efficiency": 0.5},
                anti_patterns=[],
                composite_quick=50.0,
            )
            for i in range(1, 4)
        ]
    )
    return index.model_copy(update={"depth": depth})


@pytest.mark.parametrize("seed", range(5))
def test_certified_numbers_are_identical_across_seeds(seed: int) -> None:
    ref = run("deep", runs=20, seed=0, corpus=corpus_of())
    ev = run("deep", runs=20, seed=seed, corpus=corpus_of())
    assert ev.composite == ref.composite == run("quick").composite
    assert ev.dimensions == ref.dimensions
    assert ev.badge == ref.badge
    assert ev.confidence == ref.confidence == "estimated"
    assert ev.elo.computed
    assert ev.elo.rating == ref.elo.rating
    assert (ev.elo.ci_low, ev.elo.ci_high) == (ref.elo.ci_low, ref.elo.ci_high)


def test_elo_plays_the_candidate_at_the_corpus_depth() -> None:
    judged = run("standard", judges=[FixedJudge()], corpus=corpus_of())
    deep = run("deep", runs=10, judges=[FixedJudge()], corpus=corpus_of())
    static_only = run("deep", runs=10, corpus=corpus_of())
    # the judge changes the candidate's blended scores, not the scores Elo plays with
    assert deep.dimensions != static_only.dimensions
    assert deep.elo.rating == static_only.elo.rating
    assert deep.elo.basis == "quick depth (static)"
    assert deep.elo.kind == "static-score"
    assert judged.elo is None


def test_elo_is_refused_when_the_corpus_has_a_layer_the_candidate_lacks() -> None:
    ev = run("deep", runs=10, corpus=corpus_of("standard"))
    assert not ev.elo.computed
    assert "depth standard" in ev.elo.reason
    assert "never mixes depths" in ev.elo.reason
    assert ev.badge == badge(ev.composite.score, None)


def test_deep_with_all_errored_backend_is_unmeasured() -> None:
    class Broken:
        name = "broken"
        simulated = False

        def invoke(self, prompt: McPrompt, run_index: int) -> Invocation:
            return Invocation(False, None, False, None, errored=True)

    def factory(parsed, static, negatives, runs, seed):
        return Broken(), [McPrompt("p")]

    ev = run("deep", runs=5, mc_factory=factory)
    assert not ev.monte_carlo.measured
    assert ev.dimensions["robustness"].score is None
    assert ev.composite == run("quick").composite


def test_deep_with_corpus_computes_elo_and_badge_uses_it() -> None:
    ev = run("deep", runs=10, corpus=corpus_of())
    assert ev.elo.computed
    assert ev.elo.opponents == 3
    assert ev.elo.disagreements == 0
    assert ev.badge == badge(ev.composite.score, ev.elo.rating)


def test_a_real_monte_carlo_backend_enters_the_composite() -> None:
    class Real:
        name = "real"
        simulated = False

        def invoke(self, prompt: McPrompt, run_index: int) -> Invocation:
            return Invocation(prompt.should_trigger, 0.9, False, 400)

    def factory(parsed, static, negatives, runs, seed):
        return Real(), [McPrompt("p"), McPrompt("n", should_trigger=False)]

    ev = run("deep", runs=10, mc_factory=factory, judges=[FixedJudge()])
    assert ev.simulated is None
    assert ev.measured_layers == ("static", "judge", "monte_carlo")
    assert ev.confidence == "certified"
    assert ev.dimensions["robustness"].score is not None
    assert ev.composite != run("standard", judges=[FixedJudge()]).composite
    # Every layer measured but no Elo (no corpus): seed 004's certify is every layer + Elo,
    # so nothing is certified and the badge is withheld, saying why.
    r = report_dict(ev, certify=True)
    cert = r["certification"]
    assert cert["complete"] is False
    assert cert["badge_withheld"].startswith("no Elo: no corpus: pass --corpus-dir")
    assert cert["statement"].startswith("not certified: no Elo: no corpus")
    assert "badge withheld" in cert["statement"]
    assert r["composite"]["badge"] == "no_badge"
    assert r["composite"]["badge_basis"].startswith("withheld: certify needs composite AND Elo")
    assert report_dict(ev)["composite"]["badge"] == ev.badge  # score keeps its composite badge
    assert "Certification: not certified: no Elo" in render_markdown(r)
    with_elo = run("deep", runs=10, mc_factory=factory, judges=[FixedJudge()], corpus=corpus_of())
    cert = report_dict(with_elo, certify=True)["certification"]
    assert (cert["complete"], cert["badge_withheld"]) == (True, None)
    assert cert["statement"] == (
        "certified on measured static, judge and Monte Carlo layers and an Elo"
    )


def test_certify_withholds_the_badge_when_every_pairwise_match_failed() -> None:
    ev = run("deep", runs=10, corpus=corpus_of())
    assert ev.elo.computed
    failed = replace(
        ev, elo=EloResult(False, reason="no corpus skill could be judged (a: not judged: 500)")
    )
    r = report_dict(failed, certify=True)
    assert r["composite"]["badge"] == "no_badge"
    assert r["certification"]["badge_withheld"] == (
        "no Elo: no corpus skill could be judged (a: not judged: 500)"
    )
    assert "badge withheld" in r["certification"]["statement"]
    assert report_dict(ev, certify=True)["certification"]["badge_withheld"] is None
