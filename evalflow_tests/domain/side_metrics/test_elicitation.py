from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import pytest

from evalflow.domain.side_metrics.common import NO_SPEC
from evalflow.domain.side_metrics.compute import elicitation_judges
from evalflow.domain.side_metrics.elicitation import (
    AdditionJudgement,
    CategoryJudgement,
    ElicitationLabels,
    ElicitationRequest,
    ElicitationRubric,
    LedgerEntry,
    MasterList,
    compute_elicitation,
    out_of_scope_keywords,
    trace_items,
)
from evalflow.domain.side_metrics.harness import sanctioned_set, t_over_sanctioned
from evalflow.domain.side_metrics.spec_artifacts import parse_spec_artifacts
from evalflow.errors import InputError
from evalflow_tests.domain.side_metrics.fixtures import (
    BASELINE,
    PRD,
    SPEC_FILES,
    TEST_FILES,
    cases,
)

ARTIFACTS = parse_spec_artifacts(SPEC_FILES)
CODE = {"app/signup.py": 'def sign_up(email):\n    raise ApiError(400, "invalid_email")\n'}
MASTER = MasterList.model_validate(
    {
        "benchmark": "mini",
        "items": [
            {
                "id": "M1",
                "category": "input_validation",
                "description": "emails are validated",
                "keywords": ["invalid_email"],
            },
            {
                "id": "M2",
                "category": "concurrency",
                "description": "racing sign-ups",
                "keywords": ["concurrent"],
                "code_keywords": ["UNIQUE INDEX"],
            },
            {
                "id": "M3",
                "category": "limits",
                "description": "body limit",
                "keywords": ["64 KiB"],
            },
        ],
    }
)


def _heuristic(**kwargs):
    return compute_elicitation(PRD, ARTIFACTS, elicitation_judges(None), **kwargs)


def test_trace_rules() -> None:
    traces = {t.item.item_id: t for t in trace_items(PRD, ARTIFACTS, ElicitationRubric())}
    assert (traces["FR-001"].trace, traces["FR-001"].target) == ("prd-ref", "S1-AC1")
    assert traces["FR-002"].trace == "declared-addition"
    assert traces["FR-003"].trace == "addition"
    assert traces["spec.md:19"].trace == "addition"
    assert (traces["spec.md:20"].trace, traces["spec.md:20"].target) == ("restates", "FR-002")
    assert (traces["spec.md:26"].trace, traces["spec.md:26"].target) == ("restates", "FR-002")
    assert (traces["T001"].trace, traces["T002"].trace) == ("restates", "restates")
    assert traces["T003"].trace == "tooling"


def test_out_of_scope_keywords_are_derived_from_the_prd() -> None:
    assert out_of_scope_keywords(PRD, ElicitationRubric()) == (
        "bill",
        "management",
        "seat",
        "team",
    )
    frozen = ElicitationRubric(out_of_scope_keywords=("Seat",))
    assert out_of_scope_keywords(PRD, frozen) == ("seat",)


def test_heuristic_ledger_categories_and_metrics() -> None:
    result = _heuristic(production_files=CODE)
    ledger = {e.item.item_id: e for e in result.ledger}
    assert {k: v.verdict for k, v in ledger.items()} == {
        "FR-002": "valid-necessary",
        "FR-003": "invalid",
        "spec.md:19": "valid-defensive",
    }
    assert ledger["FR-003"].rationale == "scope creep: out-of-scope keyword(s) seat, team"
    assert ledger["FR-002"].justified and not ledger["spec.md:19"].justified
    assert ledger["FR-002"].restated_by == ("spec.md:20", "spec.md:26", "T002")
    assert ledger["FR-002"].implementation == "implemented"
    assert ledger["FR-002"].implementation_ref == "app/signup.py:2"
    assert ledger["spec.md:19"].implementation == "unsearched"
    assert {e.judge for e in result.ledger} == {"heuristic-lexicon"}
    status = {c.category_id: (c.status, c.ref) for c in result.categories}
    assert status["input_validation"] == ("addressed", "specs/mini/spec.md:14")
    assert status["concurrency"] == ("addressed", "specs/mini/spec.md:19")
    assert status["observability"] == ("missed", None)
    assert (result.n_addressed, result.n_missed) == (3, 7)
    assert result.e_recall == pytest.approx(0.3)
    assert result.e_precision == pytest.approx(2 / 3)
    assert result.e_justified == pytest.approx(1 / 3)
    assert result.pooled_recall is None
    summary = result.summary_frame().iloc[0]
    assert summary["judge"] == "heuristic-lexicon" and bool(summary["heuristic"])


def test_not_applicable_comes_from_the_rubric_and_leaves_recall() -> None:
    rubric = ElicitationRubric(not_applicable={"observability": "batch tool, no service"})
    result = _heuristic(rubric=rubric)
    row = next(c for c in result.categories if c.category_id == "observability")
    assert (row.status, row.judge, row.rationale) == ("n/a", "rubric", "batch tool, no service")
    assert result.e_recall == pytest.approx(3 / 9)


def test_rubric_is_validated() -> None:
    with pytest.raises(ValueError, match="unknown categories: vibes"):
        ElicitationRubric(not_applicable={"vibes": "x"})
    with pytest.raises(ValueError, match="repeat: limits"):
        ElicitationRubric(extra_categories=({"id": "limits", "name": "l", "pattern": "x"},))
    extended = ElicitationRubric(
        extra_categories=({"id": "i18n", "name": "localisation", "pattern": r"locale"},)
    )
    assert [c.id for c in extended.all_categories()][-1] == "i18n"


def test_labels_win_promote_and_demote() -> None:
    labels = ElicitationLabels.model_validate(
        {
            "framework": "mini",
            "categories": {
                "observability": {"status": "addressed", "ref": "spec.md:5", "rationale": "r"}
            },
            "additions": [
                {
                    "item": "FR-003",
                    "verdict": "valid-defensive",
                    "rationale": "ok",
                    "master_id": "M3",
                },
                {"item": "spec.md:19", "verdict": "traced", "rationale": "restates S1-AC2"},
                {"item": "spec.md:13", "verdict": "valid-necessary", "rationale": "pulled in"},
            ],
            "pooled": {"M2": "spec.md:19"},
        }
    )
    judges = elicitation_judges(labels)
    result = compute_elicitation(PRD, ARTIFACTS, judges, master=MASTER, pooled_labels=labels.pooled)
    ledger = {e.item.item_id: e for e in result.ledger}
    assert list(ledger) == ["FR-001", "FR-002", "FR-003"]
    assert ledger["FR-001"].judge == ledger["FR-003"].judge == "labels"
    assert ledger["FR-002"].judge == "heuristic-lexicon"
    assert ledger["FR-003"].verdict == "valid-defensive"
    obs = next(c for c in result.categories if c.category_id == "observability")
    assert (obs.status, obs.ref, obs.judge) == ("addressed", "specs/mini/spec.md:5", "labels")
    assert result.master_matched == {
        "M1": "specs/mini/spec.md:14",
        "M2": "spec.md:19",
        "M3": "specs/mini/spec.md:15",
    }
    assert result.pooled_recall == 1.0
    assert result.judges == ("labels", "heuristic-lexicon")


def test_labels_naming_unknown_items_or_categories_fail_clearly() -> None:
    bad_item = ElicitationLabels.model_validate(
        {
            "framework": "x",
            "additions": [{"item": "FR-999", "verdict": "invalid", "rationale": "r"}],
        }
    )
    with pytest.raises(InputError, match="FR-999"):
        compute_elicitation(PRD, ARTIFACTS, elicitation_judges(bad_item))
    bad_category = ElicitationLabels.model_validate(
        {"framework": "x", "categories": {"vibes": {"status": "missed", "rationale": "r"}}}
    )
    with pytest.raises(InputError, match="vibes"):
        compute_elicitation(PRD, ARTIFACTS, elicitation_judges(bad_category))


def test_no_spec_means_na_status_not_zeros() -> None:
    result = compute_elicitation(PRD, parse_spec_artifacts({}), elicitation_judges(None))
    assert result.status == NO_SPEC
    summary = result.summary_frame().iloc[0]
    assert summary["status"] == NO_SPEC
    assert pd.isna(summary["e_recall"]) and pd.isna(summary["n_additions"])
    assert result.category_frame().empty and result.addition_frame().empty


def test_master_keywords_match_the_ledger_and_restatements() -> None:
    result = _heuristic(master=MASTER)
    assert result.master_matched == {
        "M1": "specs/mini/spec.md:14",
        "M2": "specs/mini/spec.md:19",
    }
    assert result.pooled_recall == pytest.approx(2 / 3)
    ledger = {e.item.item_id: e for e in result.ledger}
    assert ledger["spec.md:19"].master_id == "M2"
    assert ledger["spec.md:19"].keywords == ("UNIQUE INDEX",)


def test_sanctioned_set_and_t_over_it() -> None:
    result = _heuristic(production_files=CODE)
    sanctioned = sanctioned_set(PRD, result.valid_additions())
    assert [s.req_id for s in sanctioned] == [
        "S1-AC1",
        "S1-AC2",
        "S2-AC1",
        "E:FR-002",
        "E:spec.md:19",
    ]
    votes = pd.DataFrame(
        {
            "check_id": ["S1-AC1-T1", "S1-AC1-T2", "S1-AC2-T1", "S2-AC1-T1"],
            "majority": ["MET", "UNMET", "MET", "MET"],
        }
    )
    harness = t_over_sanctioned(BASELINE, votes, sanctioned, cases(), TEST_FILES)
    assert (harness.met_t_checks, harness.t_checks) == (3, 4)
    assert (harness.covered_additions, harness.additions) == (0, 2)
    assert harness.t_frozen == 0.75
    assert harness.t_sanctioned == 0.5
    frame = harness.frame()
    assert frame.loc[frame["req_id"] == "S1-AC1", "covered"].item() is False


class _ModelJudge:
    """A stand-in for a model-based E judge: answers for one item and one category."""

    @property
    def judge_id(self) -> str:
        return "model:test"

    def judge_additions(self, request: ElicitationRequest) -> dict[str, AdditionJudgement]:
        return {
            "FR-003": AdditionJudgement(
                verdict="valid-defensive", rationale="model says ok", judge=self.judge_id
            )
        }

    def judge_categories(
        self, request: ElicitationRequest, ledger: Sequence[LedgerEntry]
    ) -> dict[str, CategoryJudgement]:
        assert {e.item.item_id for e in ledger} == {"FR-002", "FR-003", "spec.md:19"}
        return {
            "limits": CategoryJudgement(
                status="addressed", ref="specs/mini/spec.md:15", rationale="r", judge=self.judge_id
            )
        }


def test_a_model_judge_sits_between_labels_and_the_heuristic() -> None:
    result = compute_elicitation(PRD, ARTIFACTS, elicitation_judges(None, [_ModelJudge()]))
    ledger = {e.item.item_id: (e.verdict, e.judge) for e in result.ledger}
    assert ledger["FR-003"] == ("valid-defensive", "model:test")
    assert ledger["FR-002"] == ("valid-necessary", "heuristic-lexicon")
    limits = next(c for c in result.categories if c.category_id == "limits")
    assert (limits.status, limits.judge) == ("addressed", "model:test")
    assert result.judges == ("model:test", "heuristic-lexicon")
