"""Judge layer maths: F1 from predictions (fix 5), [0, 1] validation, kappa, aggregation."""

from __future__ import annotations

import json
import math

import pytest
from pydantic import ValidationError

from evalflow.domain.plugineval.judge_layer import (
    JudgeInput,
    JudgeOutputError,
    JudgeReport,
    PromptPrediction,
    aggregate_judges,
    cohen_kappa,
    pairwise_kappa,
    parse_judge_output,
    run_judges,
    triggering_f1,
)

PROMPTS = [f"prompt {i}" for i in range(10)]
SHOULD = [True] * 5 + [False] * 5


def report(would: list[bool], *, judge: str = "j", scores=(0.8, 0.7, 0.6)) -> JudgeReport:
    return JudgeReport(
        judge=judge,
        predictions=[
            PromptPrediction(prompt=p, should_trigger=s, would_trigger=w)
            for p, s, w in zip(PROMPTS, SHOULD, would, strict=True)
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


def test_f1_from_predictions() -> None:
    # TP = 4 (first four positives), FN = 1, FP = 2 (two negatives predicted positive)
    would = [True, True, True, True, False, True, True, False, False, False]
    # F1 = 2·4 / (2·4 + 2 + 1) = 8 / 11
    assert triggering_f1(report(would).predictions) == pytest.approx(8 / 11)


def test_f1_undefined_without_positives() -> None:
    preds = [PromptPrediction(prompt="p", should_trigger=False, would_trigger=False)]
    assert triggering_f1(preds) is None


def test_self_reported_f1_is_ignored() -> None:
    data = json.loads(report([True] * 5 + [False] * 5).model_dump_json())
    data["triggering_accuracy"] = 0.1
    data["triggering_f1"] = 0.1
    parsed = parse_judge_output(json.dumps(data), "claude")
    res = aggregate_judges([parsed])
    assert res.dimensions["triggering_accuracy"] == pytest.approx(1.0)


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
    res = aggregate_judges([r1, r2], seed=1)
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
    assert aggregate_judges([r1, r2], seed=1) == res  # seeded → identical


def test_single_judge_has_no_rubric_ci_and_no_kappa() -> None:
    res = aggregate_judges([report([True] * 5 + [False] * 5)])
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
    res = run_judges(judges, JudgeInput("s", "d", "text"))
    assert res.measured
    assert res.judges == 1
    assert res.requested == 3
    assert sorted(f.code for f in res.findings) == ["JUDGE_FAILED", "JUDGE_INVALID_OUTPUT"]


def test_all_judges_failing_is_unmeasured() -> None:
    res = run_judges([ScriptedJudge("boom", RuntimeError("x"))], JudgeInput("s", "d", "t"))
    assert not res.measured
    assert res.reason == "no judge returned valid output"
