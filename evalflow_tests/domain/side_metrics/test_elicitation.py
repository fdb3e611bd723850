from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import pytest

from evalflow.domain.models import Baseline
from evalflow.domain.prd import parse_prd
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
    out_of_scope_of,
    trace_items,
)
from evalflow.domain.side_metrics.harness import sanctioned_set, t_over_sanctioned
from evalflow.domain.side_metrics.spec_artifacts import parse_spec_artifacts
from evalflow.errors import InputError
from evalflow_tests.domain.side_metrics.fixtures import (
    BASELINE,
    PRD,
    PRD_TEXT,
    SPEC_FILES,
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


def test_out_of_scope_items_are_whole_phrases_never_derived_keywords() -> None:
    oos = out_of_scope_of(PRD, ElicitationRubric())
    assert [e.phrase for e in oos.prd] == [("team", "billing", "and", "seat", "management")]
    assert oos.keywords == ()
    frozen = ElicitationRubric(out_of_scope_keywords=("Seat",))
    assert out_of_scope_of(PRD, frozen).keywords == ("seat",)


def _labels(**extra) -> ElicitationLabels:
    """A human adjudication of the fixture's three candidate additions."""
    return ElicitationLabels.model_validate(
        {
            "framework": "mini",
            "additions": [
                {"item": "FR-002", "verdict": "valid-necessary", "rationale": "implied"},
                {"item": "FR-003", "verdict": "invalid", "rationale": "team seats: scope creep"},
                {"item": "spec.md:19", "verdict": "valid-defensive", "rationale": "races"},
            ],
            **extra,
        }
    )


def test_heuristic_only_proposes_candidates_and_every_ratio_is_null() -> None:
    result = _heuristic(production_files=CODE)
    ledger = {e.item.item_id: e for e in result.ledger}
    assert {k: v.verdict for k, v in ledger.items()} == dict.fromkeys(
        ["FR-002", "FR-003", "spec.md:19"], "candidate"
    )
    assert ledger["FR-002"].rationale.startswith("unadjudicated; lexicon proposes valid-necessary")
    assert not result.valid_additions() and ledger["FR-002"].implementation is None
    assert ledger["FR-002"].restated_by == ("spec.md:20", "spec.md:26", "T002")
    status = {c.category_id: (c.status, c.ref) for c in result.categories}
    assert status["input_validation"] == ("candidate", "specs/mini/spec.md:14")
    assert {s for s, _ in status.values()} == {"candidate"}
    assert (result.e_recall, result.e_precision, result.e_justified) == (None, None, None)
    summary = result.summary_frame().iloc[0]
    assert summary["reason"] == "unadjudicated — 13 candidates"
    assert pd.isna(summary["e_recall"]) and pd.isna(summary["n_additions"])
    assert pd.isna(summary["n_missed"]) and summary["n_candidates"] == 13
    assert summary["judge"] == "heuristic-lexicon" and bool(summary["heuristic"])


def test_labelled_additions_decide_precision_and_frozen_keywords_decide_implementation() -> None:
    labels = _labels()
    result = compute_elicitation(PRD, ARTIFACTS, elicitation_judges(labels), production_files=CODE)
    ledger = {e.item.item_id: e for e in result.ledger}
    assert ledger["FR-003"].verdict == "invalid"
    assert result.e_precision == pytest.approx(2 / 3)
    assert result.e_justified == pytest.approx(1 / 3)
    # categories are still candidates: recall stays NULL while precision is adjudicated
    assert result.e_recall is None and result.reason == "unadjudicated — 10 candidates"
    # `invalid_email` comes from the item's own text: it proposes, it does not prove
    assert ledger["FR-002"].implementation == "unadjudicated"
    assert ledger["FR-002"].implementation_ref == "app/signup.py:2"
    assert ledger["spec.md:19"].implementation == "unsearched"
    pinned = _labels(
        additions=[
            {
                "item": "FR-002",
                "verdict": "valid-necessary",
                "rationale": "implied",
                "keywords": ["invalid_email"],
            },
            {"item": "FR-003", "verdict": "invalid", "rationale": "scope creep"},
            {"item": "spec.md:19", "verdict": "valid-defensive", "rationale": "races"},
        ]
    )
    again = compute_elicitation(PRD, ARTIFACTS, elicitation_judges(pinned), production_files=CODE)
    fr2 = next(e for e in again.ledger if e.item.item_id == "FR-002")
    assert (fr2.implementation, fr2.implementation_ref) == ("implemented", "app/signup.py:2")


def test_a_package_name_keyword_never_makes_a_task_implemented() -> None:
    """Issue 14: 16 tasks 'implemented' by `__main__.py:1` — a literal spec string or package
    name found in code is a candidate line, never the verdict."""
    spec = {"specs/x/spec.md": "## Requirements\n\n- FR-009: `evalflow` exposes `--max-issues`.\n"}
    artifacts = parse_spec_artifacts(spec)
    labels = ElicitationLabels.model_validate(
        {
            "framework": "x",
            "additions": [{"item": "FR-009", "verdict": "valid-defensive", "rationale": "r"}],
        }
    )
    code = {"evalflow/__main__.py": "from evalflow import cli\n"}
    result = compute_elicitation(PRD, artifacts, elicitation_judges(labels), production_files=code)
    entry = result.ledger[0]
    assert entry.implementation == "unadjudicated"
    assert entry.implementation_ref == "evalflow/__main__.py:1"


def test_heuristic_proposes_na_for_a_category_the_prd_excludes_and_addressed_for_restated() -> None:
    prd = parse_prd(
        PRD_TEXT.replace("- Team billing and seat management.", "- Authentication of callers."),
        "prd.md",
    )
    spec = {
        "specs/mini/spec.md": "## Requirements\n\n- FR-001: S1-AC2 holds: sign-up is idempotent.\n"
    }
    result = compute_elicitation(prd, parse_spec_artifacts(spec), elicitation_judges(None))
    rows = {c.category_id: c for c in result.categories}
    assert rows["authn_authz"].rationale.startswith("unadjudicated; lexicon proposes n/a")
    assert rows["idempotency"].rationale.endswith("addressed: FR-001 concerns it")
    assert rows["idempotency"].ref == "specs/mini/spec.md:3"


def test_not_applicable_comes_from_the_rubric_and_leaves_recall() -> None:
    rubric = ElicitationRubric(not_applicable={"observability": "batch tool, no service"})
    result = _heuristic(rubric=rubric)
    row = next(c for c in result.categories if c.category_id == "observability")
    assert (row.status, row.judge, row.rationale) == ("n/a", "rubric", "batch tool, no service")
    assert result.n_category_candidates == 9 and result.e_recall is None


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
    assert (ledger["FR-002"].judge, ledger["FR-002"].verdict) == ("heuristic-lexicon", "candidate")
    assert ledger["FR-003"].verdict == "valid-defensive"
    obs = next(c for c in result.categories if c.category_id == "observability")
    assert (obs.status, obs.ref, obs.judge) == ("addressed", "specs/mini/spec.md:5", "labels")
    # M1 would come from FR-002, which is still a candidate
    assert result.master_matched == {"M2": "spec.md:19", "M3": "specs/mini/spec.md:15"}
    # FR-002 is still a candidate, so pooled recall is not a number yet
    assert result.pooled_recall is None
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
    result = compute_elicitation(PRD, ARTIFACTS, elicitation_judges(_labels()), master=MASTER)
    assert result.master_matched == {
        "M1": "specs/mini/spec.md:14",
        "M2": "specs/mini/spec.md:19",
    }
    assert result.pooled_recall == pytest.approx(2 / 3)
    ledger = {e.item.item_id: e for e in result.ledger}
    assert ledger["spec.md:19"].master_id == "M2"
    assert ledger["spec.md:19"].keywords == ("UNIQUE INDEX",)
    assert ledger["spec.md:19"].implementation == "pending"


def _addition_baseline() -> Baseline:
    """The fixture's baseline plus an AC for master item M2 (racing sign-ups) with its own
    T-check: how a benchmark freezes the test of a valid addition."""
    acs = [ac.model_dump() for ac in BASELINE.acs]
    acs.append(
        {
            "id": "M2",
            "text": "Racing sign-ups create one account.",
            "checks": [
                {
                    "id": "M2-T1",
                    "kind": "T",
                    "level": "unit",
                    "proposition": "A test races two sign-ups and asserts one account.",
                }
            ],
        }
    )
    return Baseline.model_validate({**BASELINE.model_dump(), "acs": acs})


def test_t_over_the_sanctioned_set_excludes_p2_and_never_covers_by_keyword() -> None:
    prd = parse_prd(PRD_TEXT.replace("## Story S2: Export (P1)", "## Story S2: Export (P2)"))
    result = compute_elicitation(prd, ARTIFACTS, elicitation_judges(_labels()), master=MASTER)
    baseline = _addition_baseline()
    sanctioned = sanctioned_set(prd, baseline, result.valid_additions())
    # S2-AC1 is P2 (weight 0 in Final): not in the sanctioned set
    assert [s.req_id for s in sanctioned] == ["S1-AC1", "S1-AC2", "E:FR-002", "E:spec.md:19"]
    votes = pd.DataFrame(
        {
            "check_id": ["S1-AC1-T1", "S1-AC1-T2", "S1-AC2-T1", "S2-AC1-T1", "M2-T1"],
            "majority": ["MET", "UNMET", "MET", "MET", "MET"],
        }
    )
    harness = t_over_sanctioned(baseline, votes, sanctioned)
    rows = {r.requirement.req_id: r for r in harness.rows}
    # FR-002's text names `invalid_email`, which a test asserts — no T-check, so not covered
    assert (rows["E:FR-002"].covered, rows["E:FR-002"].reason) == (None, "no T-check")
    assert (rows["E:spec.md:19"].covered, rows["E:spec.md:19"].n_t_checks) == (True, 1)
    assert rows["S1-AC1"].reason == "1 of 2 T-checks not MET"
    assert harness.t_sanctioned is None
    assert harness.reason == "no T-check for 1 valid addition(s)"
    # The frozen T is Final's: the weighted PRD ACs' T-checks (not P2's S2-AC1-T1, not M2's).
    assert (harness.met_t_checks, harness.t_checks) == (2, 3)
    frame = harness.frame()
    assert frame.loc[frame["req_id"] == "S1-AC1", "covered"].tolist() == [False]
    assert pd.isna(frame.loc[frame["req_id"] == "E:FR-002", "covered"].item())
    checked = sanctioned_set(prd, baseline, result.valid_additions()[1:])
    whole = t_over_sanctioned(baseline, votes, checked)
    assert whole.t_sanctioned == pytest.approx(3 / 4)


def test_t_over_unscored_checks_is_null_with_the_reason_not_a_share() -> None:
    """Issue 27: an all-UNSCORED run printed Harness T "0.00 (0/10)"."""
    prd = parse_prd(PRD_TEXT)
    baseline = _addition_baseline()
    sanctioned = sanctioned_set(prd, baseline, [])
    ids = ["S1-AC1-T1", "S1-AC1-T2", "S1-AC2-T1", "S2-AC1-T1"]
    unscored = pd.DataFrame({"check_id": ids, "majority": ["UNSCORED"] * 4})
    harness = t_over_sanctioned(baseline, unscored, sanctioned)
    assert harness.t_frozen is None and harness.frozen_reason == "4 of 4 T-checks UNSCORED"
    assert harness.t_sanctioned is None and harness.reason == "4 of 4 T-checks UNSCORED"
    rows = {r.requirement.req_id: r for r in harness.rows}
    assert (rows["S1-AC1"].covered, rows["S1-AC1"].reason) == (None, "2 of 2 T-checks UNSCORED")
    # One UNSCORED among MET: still undetermined; a decided UNMET decides the row.
    mixed = pd.DataFrame({"check_id": ids, "majority": ["MET", "UNSCORED", "UNMET", "MET"]})
    harness = t_over_sanctioned(baseline, mixed, sanctioned)
    assert harness.t_frozen is None and harness.frozen_reason == "1 of 4 T-checks UNSCORED"
    rows = {r.requirement.req_id: r for r in harness.rows}
    assert rows["S1-AC1"].covered is None and rows["S1-AC2"].covered is False
    decided = pd.DataFrame({"check_id": ids, "majority": ["MET", "MET", "UNMET", "MET"]})
    assert t_over_sanctioned(baseline, decided, sanctioned).t_frozen == pytest.approx(3 / 4)


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
    assert ledger["FR-002"] == ("candidate", "heuristic-lexicon")
    limits = next(c for c in result.categories if c.category_id == "limits")
    assert (limits.status, limits.judge) == ("addressed", "model:test")
    assert result.judges == ("model:test", "heuristic-lexicon")
