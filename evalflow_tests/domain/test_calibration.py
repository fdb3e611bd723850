"""Judge-calibration metrics on hand-made cases: agreement, MET recall, false-MET rate,
valid-evidence share, the > 20 % flag, the rubric mapping and the ledger entry."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evalflow.domain.calibration import (
    CalibrationRow,
    GoldLabel,
    JudgedCheck,
    calibration_ledger_entry,
    compare_case,
    dimension_scores,
    evidence_overlaps,
    evidence_query,
    evidence_retrieval_cases,
    summarize,
)
from evalflow.domain.models import Evidence, Status
from evalflow.domain.retrieval.evidence import EvidenceRetriever
from evalflow.domain.rubric.models import Rubric
from evalflow.domain.rubric.scoring import weighted_total
from evalflow.errors import InputError
from evalflow.io.ledger import load_rubric, validate_entry_document


@pytest.fixture(scope="module")
def rubric() -> Rubric:
    return load_rubric()


def ev(path: str, start: int, end: int | None = None) -> Evidence:
    return Evidence(path=path, start_line=start, end_line=end or start)


def gold(verdict: str, kind: str = "clear", *evidence: Evidence) -> GoldLabel:
    if verdict == "MET" and not evidence:
        evidence = (ev("app.py", 10, 12),)
    return GoldLabel(verdict=verdict, kind=kind, evidence=evidence, note="n")  # type: ignore[arg-type]


def judged(check_id: str, majority: Status, *evidence: Evidence, valid: bool = True) -> JudgedCheck:
    return JudgedCheck(
        check_id=check_id, majority=majority, evidence=evidence, evidence_valid=valid
    )


def rows_for(pairs: dict[str, tuple[GoldLabel, JudgedCheck]]) -> list[CalibrationRow]:
    golds = {cid: g for cid, (g, _) in pairs.items()}
    verdicts = {cid: j for cid, (_, j) in pairs.items()}
    return compare_case("judge-x", "fam/r1", golds, verdicts)


def agreeing(n: int) -> dict[str, tuple[GoldLabel, JudgedCheck]]:
    return {f"A{i}": (gold("UNMET"), judged(f"A{i}", "UNMET")) for i in range(n)}


def test_unscored_does_not_agree_but_is_no_disagreement_and_is_listed_apart() -> None:
    rows = rows_for(
        {
            "C1": (gold("MET"), judged("C1", "MET", ev("app.py", 11))),
            "C2": (gold("UNMET"), judged("C2", "UNMET")),
            "C3": (gold("MET"), judged("C3", "UNSCORED")),
            "C4": (gold("UNMET"), judged("C4", "UNSCORED")),
        }
    )
    summary = summarize("judge-x", rows)
    assert summary.n_checks == 4
    assert summary.n_agree == 2
    assert summary.agreement == 0.5
    assert summary.n_unscored == 2
    assert summary.unscored == ["fam/r1/C3", "fam/r1/C4"]
    assert summary.disagreeing == []  # no verdict is no disagreement (SPEC §5)
    assert summary.disagreement_rate == 0.0 and not summary.disagreement_flag
    assert [r.agree for r in rows] == [True, True, False, False]


def test_a_judge_that_decides_nothing_fails_calibration() -> None:
    rows = rows_for({"C1": (gold("MET"), judged("C1", "UNSCORED"))})
    summary = summarize("judge-x", rows)
    assert summary.disagreement_rate is None
    assert summary.status == "fail"
    assert summary.fail_reasons == ["no check decided: every majority is UNSCORED"]


def test_met_recall_is_gold_met_judged_met_over_gold_met() -> None:
    rows = rows_for(
        {
            "M1": (gold("MET"), judged("M1", "MET", ev("app.py", 10))),
            "M2": (gold("MET"), judged("M2", "UNMET")),
            "M3": (gold("MET", "borderline"), judged("M3", "MET", ev("app.py", 12))),
            "M4": (gold("MET"), judged("M4", "UNSCORED")),
            "U1": (gold("UNMET"), judged("U1", "MET", ev("app.py", 1))),
        }
    )
    summary = summarize("judge-x", rows)
    assert summary.n_gold_met == 4
    assert summary.n_gold_met_judged_met == 2
    assert summary.met_recall == 0.5


def test_false_met_rate_counts_planted_checks_only() -> None:
    rows = rows_for(
        {
            "P1": (gold("UNMET", "planted"), judged("P1", "MET", ev("app.py", 3))),
            "P2": (gold("UNMET", "planted"), judged("P2", "UNMET")),
            "P3": (gold("UNMET", "planted"), judged("P3", "UNSCORED")),
            "P4": (gold("UNMET", "planted"), judged("P4", "UNMET")),
            "C1": (gold("UNMET"), judged("C1", "MET", ev("app.py", 3))),
            **agreeing(15),
        }
    )
    summary = summarize("judge-x", rows)
    assert summary.n_planted == 4
    assert summary.n_planted_judged_met == 1
    assert summary.false_met_rate == 0.25
    planted = next(k for k in summary.per_kind if k.kind == "planted")
    clear = next(k for k in summary.per_kind if k.kind == "clear")
    assert (planted.n_false_met, planted.n_gold_unmet, planted.n_unscored) == (1, 4, 1)
    assert (clear.n_false_met, clear.n_gold_unmet, clear.false_met_rate) == (1, 16, 1 / 16)
    assert not summary.disagreement_flag  # 3 of 20 disagree
    assert summary.status == "fail"
    assert summary.fail_reasons == ["false MET on 1/4 planted defects"]


def test_valid_evidence_share_needs_validator_and_gold_overlap_on_gold_met() -> None:
    rows = rows_for(
        {
            "V1": (gold("MET"), judged("V1", "MET", ev("app.py", 12, 20))),
            "V2": (gold("MET"), judged("V2", "MET", ev("app.py", 13, 20))),
            "V3": (gold("MET"), judged("V3", "MET", ev("app.py", 11), valid=False)),
            "V4": (gold("MET"), judged("V4", "MET", ev("other.py", 11))),
            "V5": (
                gold("UNMET", "planted", ev("app.py", 1, 5)),
                judged("V5", "MET", ev("app.py", 2)),
            ),
            "V6": (gold("MET"), judged("V6", "UNMET")),
        }
    )
    summary = summarize("judge-x", rows)
    flags = {r.check_id: (r.evidence_valid, r.evidence_overlaps_gold) for r in rows}
    assert flags == {
        "V1": (True, True),
        "V2": (True, False),
        "V3": (False, True),
        "V4": (True, False),
        "V5": (True, True),
        "V6": (False, False),
    }
    assert summary.n_judged_met == 5
    assert summary.n_valid_evidence == 1
    assert summary.valid_evidence_share == 0.2


def test_rates_without_a_denominator_are_none() -> None:
    summary = summarize("judge-x", rows_for(agreeing(3)))
    assert summary.met_recall is None
    assert summary.false_met_rate is None
    assert summary.valid_evidence_share is None
    assert summary.status == "pass"
    borderline = next(k for k in summary.per_kind if k.kind == "borderline")
    assert borderline.n_checks == 0
    assert borderline.agreement is None


def test_exactly_twenty_percent_disagreement_does_not_raise_the_flag() -> None:
    pairs = agreeing(4)
    pairs["D1"] = (gold("MET"), judged("D1", "UNMET"))
    summary = summarize("judge-x", rows_for(pairs))
    assert summary.disagreement_rate == pytest.approx(0.2)
    assert not summary.disagreement_flag
    assert summary.status == "pass"


def test_above_twenty_percent_disagreement_raises_the_flag_and_fails() -> None:
    pairs = agreeing(7)
    pairs["D1"] = (gold("MET"), judged("D1", "UNMET"))
    pairs["D2"] = (gold("UNMET"), judged("D2", "MET"))
    pairs["U1"] = (gold("MET"), judged("U1", "UNSCORED"))  # no verdict: outside the rate
    summary = summarize("judge-x", rows_for(pairs))
    assert summary.disagreement_rate == pytest.approx(2 / 9)
    assert summary.disagreement_flag
    assert summary.status == "fail"
    assert [d.check_id for d in summary.disagreeing] == ["D1", "D2"]
    assert summary.fail_reasons[0].startswith("disagreement 2/9 decided checks > 20 %")


def _mixed_rows() -> list[CalibrationRow]:
    return rows_for(
        {
            "M1": (gold("MET"), judged("M1", "MET", ev("app.py", 10))),
            "M2": (gold("MET"), judged("M2", "MET", ev("app.py", 30))),
            "M3": (gold("MET"), judged("M3", "MET", ev("app.py", 11))),
            "M4": (gold("MET"), judged("M4", "UNMET")),
            "P1": (gold("UNMET", "planted"), judged("P1", "MET", ev("app.py", 10))),
            "P2": (gold("UNMET", "planted"), judged("P2", "UNMET")),
            "P3": (gold("UNMET", "planted"), judged("P3", "UNMET")),
            "P4": (gold("UNMET", "planted"), judged("P4", "UNMET")),
            **agreeing(8),
        }
    )


def test_dimension_mapping_and_weighted_total_with_nulls(rubric: Rubric) -> None:
    summary = summarize("judge-x", _mixed_rows())
    assert summary.met_recall == 0.75
    assert summary.false_met_rate == 0.25
    assert summary.valid_evidence_share == 0.5  # M1, M3 of M1, M2, M3, P1
    scores = dimension_scores(summary, rubric)
    by_id = {d.dimension_id: d for d in scores}
    assert [d.dimension_id for d in scores] == [d.id for d in rubric.dimensions]
    assert {k: v.score for k, v in by_id.items()} == {
        "detection_accuracy": 0.75,
        "false_positive_rate": 0.25,
        "evidence_quality": 0.5,
        "severity_alignment": None,
        "phase_consistency": None,
        "actionability": None,
        "token_efficiency": None,
    }
    assert by_id["actionability"].scoring_method == "manual"
    assert by_id["token_efficiency"].details == "the judge reports no token counts"
    total = weighted_total(rubric, scores)
    assert total.coverage == pytest.approx(0.60)
    # false_positive_rate is lower-is-better: it contributes 1 − 0.25.
    expected = (0.25 * 0.75 + 0.20 * 0.75 + 0.15 * 0.5) / 0.60
    assert total.total == pytest.approx(expected)


def test_ledger_entry_is_schema_valid_keyed_and_lists_failures(rubric: Rubric) -> None:
    rows = _mixed_rows()
    summary = summarize("anthropic:model-x", rows)
    entry = calibration_ledger_entry(
        summary, rows, rubric, version="0.1.0", timestamp="2026-01-01T00:00:00Z", commit="c",
        branch="main",
    )  # fmt: skip
    validate_entry_document(entry.to_document(), rubric)
    assert entry.description == "judge_calibration:anthropic:model-x"
    assert entry.status == "fail"
    assert entry.scores["agreement"] == pytest.approx(14 / 16)
    assert entry.scores["falseMetRate"] == 0.25
    assert entry.scores["coverage"] == pytest.approx(0.60)
    assert len(entry.results) == 16
    failures = {(f.case_ref, f.category, f.severity) for f in entry.failures or ()}
    assert failures == {
        ("fam/r1/M4", "missing_evidence", "major"),
        ("fam/r1/P1", "false_positive", "critical"),
    }


def test_ledger_entry_omits_rates_without_denominator(rubric: Rubric) -> None:
    rows = rows_for(agreeing(2))
    entry = calibration_ledger_entry(
        summarize("j", rows), rows, rubric, version="0.1.0", timestamp="2026-01-01T00:00:00Z",
        commit="c", branch="main",
    )  # fmt: skip
    assert "metRecall" not in entry.scores
    assert "weightedTotal" not in entry.scores
    assert entry.scores["coverage"] == 0.0
    assert entry.status == "pass"
    assert entry.failures is None


def test_compare_case_needs_the_same_checks_on_both_sides() -> None:
    with pytest.raises(InputError, match=r"no verdict for B.*no gold label for C"):
        compare_case(
            "j", "fam/r1", {"A": gold("UNMET"), "B": gold("UNMET")},
            {"A": judged("A", "UNMET"), "C": judged("C", "UNMET")},
        )  # fmt: skip


def test_summarize_refuses_an_empty_set() -> None:
    with pytest.raises(InputError, match="no calibration checks"):
        summarize("j", [])


def test_gold_label_rules() -> None:
    with pytest.raises(ValidationError, match="needs evidence"):
        GoldLabel(verdict="MET", kind="clear", note="n")
    with pytest.raises(ValidationError, match="planted defect is UNMET"):
        GoldLabel(verdict="MET", kind="planted", evidence=(ev("a.py", 1),), note="n")
    with pytest.raises(ValidationError):
        GoldLabel.model_validate({"verdict": "UNMET", "kind": "odd", "note": "n"})


@pytest.mark.parametrize(
    ("cited", "expected"),
    [
        (ev("a.py", 5), True),
        (ev("a.py", 1, 4), False),
        (ev("a.py", 1, 5), True),
        (ev("a.py", 9, 12), True),
        (ev("a.py", 10, 12), False),
        (ev("b.py", 5), False),
    ],
)
def test_evidence_overlaps(cited: Evidence, expected: bool) -> None:
    assert evidence_overlaps([cited], [ev("a.py", 5, 9)]) is expected


def test_evidence_retrieval_cases_map_gold_lines_to_overlapping_chunks() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 41))
    retriever = EvidenceRetriever([("app.py", text), ("tests/test_app.py", "assert x\n")])
    assert [c.id for c in retriever.chunks] == [
        "app.py:1-20", "app.py:16-35", "app.py:31-40", "tests/test_app.py:1-1",
    ]  # fmt: skip
    labels = {
        "A": gold("MET", "clear", ev("app.py", 17, 18), ev("tests/test_app.py", 1)),
        "B": gold("UNMET"),
        "C": gold("UNMET", "planted", ev("app.py", 36)),
    }
    queries = {
        "A": evidence_query("prop A", "ac A"),
        "B": evidence_query("prop B", "ac B"),
        "C": "query C",
    }
    cases = evidence_retrieval_cases("fam/r1", queries, labels, retriever)
    assert [(c.id, c.query, c.relevant) for c in cases] == [
        ("fam/r1/A", "prop A\nac A", ["app.py:1-20", "app.py:16-35", "tests/test_app.py:1-1"]),
        ("fam/r1/C", "query C", ["app.py:31-40"]),
    ]
    with pytest.raises(InputError, match="no query for gold check C"):
        evidence_retrieval_cases("fam/r1", {"A": "q"}, labels, retriever)
