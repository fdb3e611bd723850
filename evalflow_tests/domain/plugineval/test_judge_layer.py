"""Judge layer maths: F1 from (evalflow's label, judge's prediction) (fix 5), [0, 1]
validation, kappa, aggregation, and the labelled prompt set."""

from __future__ import annotations

import json
import math

import pytest
from pydantic import ValidationError

from evalflow.domain.plugineval.judge_layer import (
    JudgeInput,
    JudgeOutputError,
    JudgeReport,
    LabelledPrompt,
    PromptPrediction,
    aggregate_judges,
    cohen_kappa,
    judge_prompts,
    pairwise_kappa,
    parse_judge_output,
    run_judges,
    triggering_scores,
)

PROMPTS = [f"prompt {i}" for i in range(10)]
SHOULD = [True] * 5 + [False] * 5
LABELLED = tuple(
    LabelledPrompt(p, s, "description" if s else "distractor:x")
    for p, s in zip(PROMPTS, SHOULD, strict=True)
)
SKILL = JudgeInput("s", "d", "text", prompts=LABELLED)


def report(would: list[bool], *, judge: str = "j", scores=(0.8, 0.7, 0.6)) -> JudgeReport:
    return JudgeReport(
        judge=judge,
        predictions=[
            PromptPrediction(prompt=p, would_trigger=w) for p, w in zip(PROMPTS, would, strict=True)
        ],
        orchestration_fitness=scores[0],
        output_quality=scores[1],
        scope_calibration=scores[2],
    )


class ScriptedJudge:
    """A test double: returns a fixed report, or raises."""

    def __init__(self, name: str, result: JudgeReport | Exception | dict) -> None:
        self.name = name
        self.result = result

    def judge(self, skill: JudgeInput) -> JudgeReport:
        if isinstance(self.result, Exception):
            raise self.result
        return self.result  # type: ignore[return-value]


def test_f1_precision_recall_against_labels() -> None:
    # TP = 4 (first four positives), FN = 1, FP = 2 (two negatives predicted positive)
    would = [True, True, True, True, False, True, True, False, False, False]
    t = triggering_scores(SHOULD, would)
    # F1 = 2·4 / (2·4 + 2 + 1) = 8 / 11; precision 4 / 6; recall 4 / 5
    assert (t.f1, t.precision, t.recall) == (
        pytest.approx(8 / 11),
        pytest.approx(4 / 6),
        pytest.approx(4 / 5),
    )
    assert triggering_scores([True], [False]).precision is None  # nothing predicted


def test_always_yes_judge_loses_precision_on_evalflows_negatives() -> None:
    res = aggregate_judges([report([True] * 10)], LABELLED)
    assert res.triggering is not None
    assert res.triggering.precision == pytest.approx(0.5) and res.triggering.recall == 1.0
    assert res.dimensions["triggering_accuracy"] == pytest.approx(2 * 5 / (2 * 5 + 5))


def test_a_should_trigger_from_the_model_cannot_override_the_label() -> None:
    # The model claims every prompt it triggers on should trigger: the F1 would be 1.0 if
    # its labels were used; against evalflow's it is 2·5 / (10 + 5).
    data = json.loads(report([True] * 10).model_dump_json())
    for pred in data["predictions"]:
        pred["should_trigger"] = True
    data["triggering_accuracy"] = 0.1
    data["triggering_f1"] = 0.1
    parsed = parse_judge_output(json.dumps(data), "claude")
    assert "should_trigger" not in parsed.predictions[0].model_dump()
    res = aggregate_judges([parsed], LABELLED)
    assert res.dimensions["triggering_accuracy"] == pytest.approx(10 / 15)


@pytest.mark.parametrize(
    ("labels", "missing"), [([True] * 10, "should-not-trigger"), ([False] * 10, "should-trigger")]
)
def test_one_sided_prompt_set_leaves_f1_unmeasured(labels: list[bool], missing: str) -> None:
    prompts = tuple(LabelledPrompt(p, s, "x") for p, s in zip(PROMPTS, labels, strict=True))
    res = aggregate_judges([report([True] * 10)], prompts)
    assert res.measured  # the rubric scores still count
    assert "triggering_accuracy" not in res.dimensions
    assert "triggering_accuracy" not in res.cis
    assert res.triggering is None and res.per_judge[0]["triggering_f1"] is None
    assert (
        res.triggering_reason == f"triggering F1 unmeasured: the prompt set has no {missing} prompt"
    )


def test_answers_must_cover_the_labelled_prompts_exactly() -> None:
    short = JudgeReport(
        judge="j",
        predictions=[PromptPrediction(prompt=p, would_trigger=True) for p in PROMPTS[:9]],
        orchestration_fitness=0.5,
        output_quality=0.5,
        scope_calibration=0.5,
    )
    res = run_judges([ScriptedJudge("short", short)], SKILL)
    assert not res.measured
    assert res.findings[0].code == "JUDGE_INVALID_OUTPUT"
    assert "no answer for 'prompt 9'" in res.findings[0].message
    stranger = short.model_copy(
        update={
            "predictions": [*short.predictions, PromptPrediction(prompt="x", would_trigger=True)]
        }
    )
    res = run_judges([ScriptedJudge("stranger", stranger)], SKILL)
    assert "'x' is not a test prompt" in res.findings[0].message


def test_judge_prompts_are_labelled_sourced_and_seeded() -> None:
    args = ("spec-writer", "Use when writing a feature specification from a PRD.")
    kwargs = {
        "headings": ["Writing user stories", "Examples"],
        "others": [("corpus:b/story", "story-writer", "Use when drafting agile user stories.")],
    }
    first = judge_prompts(*args, seed=3, **kwargs)
    assert first == judge_prompts(*args, seed=3, **kwargs)  # deterministic
    assert first != judge_prompts(*args, seed=4, **kwargs)
    assert len({p.text.casefold() for p in first}) == len(first)  # distinct texts
    for p in first:
        if p.should_trigger:
            assert p.source in {"description", "name", "heading"}
        else:
            assert p.source.startswith(("distractor:", "corpus:"))
    assert any(p.should_trigger for p in first) and not all(p.should_trigger for p in first)


def test_missing_prompts_are_filled_with_evalflows_labelled_set() -> None:
    seen: list[JudgeInput] = []

    class Echo:
        name = "echo"

        def judge(self, skill: JudgeInput) -> JudgeReport:
            seen.append(skill)
            return JudgeReport(
                predictions=[
                    PromptPrediction(prompt=p.text, would_trigger=True) for p in skill.prompts
                ],
                orchestration_fitness=0.5,
                output_quality=0.5,
                scope_calibration=0.5,
            )

    res = run_judges([Echo()], JudgeInput("regex-builder", "Build regular expressions.", "t"))
    assert seen[0].prompts == judge_prompts("regex-builder", "Build regular expressions.")
    assert res.prompts == seen[0].prompts and res.answers == ((True,) * len(res.prompts),)


def test_repeated_prompts_are_refused() -> None:
    with pytest.raises(ValueError, match="distinct"):
        JudgeInput("s", "d", "t", prompts=(LABELLED[0], LabelledPrompt("PROMPT 0", False, "x")))


@pytest.mark.parametrize("bad", [1.2, -0.1, math.nan, math.inf, "0.5"])
def test_scores_are_validated_to_unit_interval(bad: object) -> None:
    data = json.loads(report([True] * 10).model_dump_json())
    data["output_quality"] = bad
    with pytest.raises(ValidationError):
        JudgeReport.model_validate(data)


def test_parse_judge_output_errors_are_one_line() -> None:
    with pytest.raises(JudgeOutputError, match="not a JSON object"):
        parse_judge_output("```json\n{}\n```", "claude")
    with pytest.raises(JudgeOutputError, match="JSON list"):
        parse_judge_output("[1]", "claude")
    with pytest.raises(JudgeOutputError, match="predictions"):
        parse_judge_output('{"orchestration_fitness": 1}', "claude")


def test_kappa_hand_case() -> None:
    a = [True, True, True, False, False, False, True, False, True, True]
    b = [True, True, False, False, False, True, True, False, True, False]
    # agreement: positions 0,1,3,4,6,7,8 → p_o = 7/10
    # p_a(yes) = 6/10, p_b(yes) = 5/10 → p_e = .6×.5 + .4×.5 = 0.5
    # kappa = (0.7 − 0.5) / (1 − 0.5) = 0.4
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(a, a) == pytest.approx(1.0)
    assert cohen_kappa([True, True], [True, True]) is None  # chance agreement 1: undefined


def test_pairwise_kappa_aligns_prompts_by_text() -> None:
    r1 = report([True] * 5 + [False] * 5, judge="a")
    shuffled = JudgeReport(
        judge="b",
        predictions=list(reversed([p.model_copy() for p in r1.predictions])),
        orchestration_fitness=0.5,
        output_quality=0.5,
        scope_calibration=0.5,
    )
    kappa, pairs = pairwise_kappa([r1, shuffled])
    assert (kappa, pairs) == (pytest.approx(1.0), 1)


def test_aggregate_two_judges() -> None:
    r1 = report([True] * 5 + [False] * 5, judge="a", scores=(0.8, 0.6, 0.4))
    r2 = report([True] * 4 + [False] * 6, judge="b", scores=(0.6, 0.8, 0.6))
    res = aggregate_judges([r1, r2], LABELLED, seed=1)
    assert res.measured
    assert res.judges == 2
    # F1: judge a = 1.0; judge b = 2·4/(8+0+1) = 8/9 → mean = (1 + 8/9)/2
    assert res.dimensions["triggering_accuracy"] == pytest.approx((1 + 8 / 9) / 2)
    assert res.dimensions["orchestration_fitness"] == pytest.approx(0.7)
    # kappa: b differs from a on one of ten prompts
    # p_o = .9, p_a = .5, p_b = .4 → p_e = .2 + .3 = .5 → kappa = .8
    assert res.kappa == pytest.approx(0.8)
    lo, hi = res.cis["orchestration_fitness"]
    assert lo < 0.7 < hi
    assert aggregate_judges([r1, r2], LABELLED, seed=1) == res  # seeded → identical


def test_single_judge_has_no_rubric_ci_and_no_kappa() -> None:
    res = aggregate_judges([report([True] * 5 + [False] * 5)], LABELLED)
    assert res.kappa is None
    assert "orchestration_fitness" not in res.cis
    assert "triggering_accuracy" in res.cis


def test_no_judge_is_unmeasured() -> None:
    res = aggregate_judges([], requested=0)
    assert not res.measured
    assert res.reason == "no LLM judge configured"
    assert res.dimensions == {}


def test_failing_and_invalid_judges_become_findings() -> None:
    good = report([True] * 5 + [False] * 5, judge="good")
    judges = [
        ScriptedJudge("good", good),
        ScriptedJudge("boom", RuntimeError("timeout")),
        ScriptedJudge("bad", {"predictions": [], "orchestration_fitness": 2}),
    ]
    res = run_judges(judges, SKILL)
    assert res.measured
    assert res.judges == 1
    assert res.requested == 3
    assert sorted(f.code for f in res.findings) == ["JUDGE_FAILED", "JUDGE_INVALID_OUTPUT"]


def test_all_judges_failing_is_unmeasured() -> None:
    res = run_judges([ScriptedJudge("boom", RuntimeError("x"))], SKILL)
    assert not res.measured
    assert res.reason == "no judge returned valid output"
