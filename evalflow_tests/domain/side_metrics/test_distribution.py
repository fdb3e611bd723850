from __future__ import annotations

import pandas as pd
import pytest

from evalflow.domain.models import Baseline
from evalflow.domain.side_metrics.common import EvidenceLine, met_test_evidence
from evalflow.domain.side_metrics.distribution import compute_distribution, main_path_checks
from evalflow.errors import InputError
from evalflow.repo.test_inventory import classify_feature_tests, parse_test_file
from evalflow_tests.domain.side_metrics.fixtures import (
    BASELINE,
    PRD,
    TEST_FILES,
    TESTS_PATH,
    TESTS_TEXT,
    cases,
)

EVIDENCE = [
    EvidenceLine(check_id="S1-AC1-T1", path=TESTS_PATH, start_line=5, end_line=5),
    EvidenceLine(check_id="S1-AC2-T1", path=TESTS_PATH, start_line=9, end_line=9),
    EvidenceLine(check_id="S2-AC1-T1", path=TESTS_PATH, start_line=19, end_line=19),
    EvidenceLine(check_id="S1-AC1-I1", path="app/signup.py", start_line=3, end_line=3),
]


def _tiers(result) -> dict[str, str]:
    return {r.test_id.split("::")[-1]: r.tier for r in result.rows}


def test_tiers_counts_and_health() -> None:
    result = compute_distribution(PRD, BASELINE, cases(), EVIDENCE)
    assert _tiers(result) == {
        "test_signup_201": "necessary",
        "test_signup_twice": "secondary",
        "test_bad_email[0]": "nice_to_have",
        "test_bad_email[1]": "nice_to_have",
        "test_export": "secondary",
        "test_helper_repr": "nice_to_have",
        "test_runs_only": "nice_to_have",
        "test_old_router": "pre_existing",
    }
    assert result.counts == {"necessary": 1, "secondary": 2, "nice_to_have": 4}
    assert result.total == 7 and sum(result.counts.values()) == result.total
    assert result.pre_existing == ("tests/test_old.py::test_old_router",)
    assert result.healthy and result.failing_p0_acs == ()
    assert result.main_path_checks == {
        "S1-AC1": ("S1-AC1-T1", "S1-AC1-T2"),
        "S1-AC2": (),
        "S2-AC1": ("S2-AC1-T1",),
    }
    row = next(r for r in result.rows if r.name == "test_signup_twice")
    assert (row.ac_id, row.priority, row.check_ids) == ("S1-AC2", "P0", ("S1-AC2-T1",))
    assert row.reason == "proves S1-AC2-T1: negative/error path of P0 AC S1-AC2"
    assert result.reading.startswith("1 of 7 feature tests (14.3%) prove a P0 main path")


def test_frames() -> None:
    result = compute_distribution(PRD, BASELINE, cases(), EVIDENCE)
    dist = result.distribution_frame()
    assert dist["tier"].tolist() == ["necessary", "secondary", "nice_to_have"]
    assert dist["count"].tolist() == [1, 2, 4]
    assert dist["pct"].sum() == pytest.approx(100.0)
    tiers = result.test_tier_frame()
    assert len(tiers) == 8
    assert tiers.loc[tiers["tier"] == "necessary", "check_ids"].tolist() == [["S1-AC1-T1"]]


def test_unhealthy_when_a_p0_main_path_has_no_necessary_test() -> None:
    result = compute_distribution(PRD, BASELINE, cases(), EVIDENCE[1:])
    assert not result.healthy
    assert result.failing_p0_acs == ("S1-AC1",)
    assert "not healthy: no Necessary test for S1-AC1" in result.reading


def test_main_path_overrides_are_frozen_per_benchmark() -> None:
    overrides = {"S1-AC2-T1": True}
    assert main_path_checks(BASELINE, overrides)["S1-AC2"] == ("S1-AC2-T1",)
    result = compute_distribution(PRD, BASELINE, cases(), EVIDENCE, main_path_overrides=overrides)
    assert _tiers(result)["test_signup_twice"] == "necessary"


def test_every_parametrised_row_maps_like_its_function() -> None:
    line = EvidenceLine(check_id="S2-AC1-T1", path=TESTS_PATH, start_line=15, end_line=15)
    result = compute_distribution(PRD, BASELINE, cases(), [line])
    tiers = _tiers(result)
    assert tiers["test_bad_email[0]"] == tiers["test_bad_email[1]"] == "secondary"


def test_unclassified_inventory_is_an_input_error() -> None:
    raw = parse_test_file(TESTS_PATH, "def test_x():\n    assert 1\n")
    with pytest.raises(InputError, match="not classified"):
        compute_distribution(PRD, BASELINE, raw, [])


def test_met_test_evidence_takes_every_agreeing_run() -> None:
    run = {"kind": "run", "command": "app start", "expectation": "exit 0", "output": ""}
    ev = [run, {"path": TESTS_PATH, "start_line": 5, "end_line": 5}]
    other = [{"path": TESTS_PATH, "start_line": 9, "end_line": 9}]
    verdicts = pd.DataFrame(
        [
            {"check_id": "S1-AC1-T1", "run": 1, "status": "MET", "evidence": ev},
            {"check_id": "S1-AC1-T1", "run": 2, "status": "MET", "evidence": other},
            {"check_id": "S1-AC1-T1", "run": 3, "status": "UNMET", "evidence": []},
            {"check_id": "S2-AC1-T1", "run": 1, "status": "MET", "evidence": ev},
        ]
    )
    votes = pd.DataFrame({"check_id": ["S1-AC1-T1", "S2-AC1-T1"], "majority": ["MET", "UNMET"]})
    lines = met_test_evidence(votes, verdicts)
    assert [(e.check_id, e.start_line) for e in lines] == [("S1-AC1-T1", 5), ("S1-AC1-T1", 9)]
    assert met_test_evidence(votes.iloc[0:0], verdicts) == []


def _probed_baseline() -> Baseline:
    """S1-AC1-T1 (a main-path P0 check) with a test-assert probe on the 201."""
    acs = [ac.model_dump() for ac in BASELINE.acs]
    acs[0]["checks"][1]["probes"] = [
        {"kind": "test-assert", "pattern": r"status == 201", "path_globs": ["tests/**"]}
    ]
    return Baseline.model_validate({**BASELINE.model_dump(), "acs": acs})


E2E_PATH = "tests/e2e/test_flow.py"
E2E_TEXT = "def test_flow():\n    r = client.post('/signup')\n    assert r.status == 201\n"


def _with_e2e() -> tuple[list, dict[str, str]]:
    raw = parse_test_file(TESTS_PATH, TESTS_TEXT) + parse_test_file(E2E_PATH, E2E_TEXT)
    return classify_feature_tests(raw, None, {TESTS_PATH, E2E_PATH}), {
        TESTS_PATH: TESTS_TEXT,
        E2E_PATH: E2E_TEXT,
    }


def test_tier_does_not_depend_on_the_line_a_judge_cited() -> None:
    """Issue 14: a unit test literally asserting a T-check's proposition became Nice-to-have
    because the judge cited an e2e line instead."""
    all_cases, files = _with_e2e()
    baseline = _probed_baseline()
    cited_unit = [EvidenceLine(check_id="S1-AC1-T1", path=TESTS_PATH, start_line=5, end_line=5)]
    cited_def = [EvidenceLine(check_id="S1-AC1-T1", path=TESTS_PATH, start_line=4, end_line=4)]
    cited_e2e = [EvidenceLine(check_id="S1-AC1-T1", path=E2E_PATH, start_line=3, end_line=3)]
    tiers = [
        _tiers(
            compute_distribution(
                PRD, baseline, all_cases, ev, met_checks={"S1-AC1-T1"}, test_files=files
            )
        )
        for ev in (cited_unit, cited_def, cited_e2e)
    ]
    assert tiers[0] == tiers[1] == tiers[2]
    assert tiers[0]["test_signup_201"] == "necessary" and tiers[0]["test_flow"] == "necessary"
    # without the probe, citing only the e2e line leaves the unit test unmapped (the old bug)
    bare = compute_distribution(PRD, BASELINE, all_cases, cited_e2e, test_files=files)
    assert _tiers(bare)["test_signup_201"] == "nice_to_have"


def test_probes_count_only_for_met_checks_and_asserting_tests() -> None:
    all_cases, files = _with_e2e()
    baseline = _probed_baseline()
    unmet = compute_distribution(PRD, baseline, all_cases, [], met_checks=set(), test_files=files)
    assert _tiers(unmet)["test_signup_201"] == "nice_to_have"
    runs_only = [EvidenceLine(check_id="S1-AC1-T1", path=TESTS_PATH, start_line=28, end_line=28)]
    result = compute_distribution(PRD, BASELINE, all_cases, runs_only, test_files=files)
    assert _tiers(result)["test_runs_only"] == "nice_to_have"


def _with_check(check_id: str, **changes) -> Baseline:
    acs = [ac.model_dump() for ac in BASELINE.acs]
    for ac in acs:
        for check in ac["checks"]:
            if check["id"] == check_id:
                check.update(changes)
    return Baseline.model_validate({**BASELINE.model_dump(), "acs": acs})


def test_a_unit_test_never_proves_an_e2e_check() -> None:
    """Issue 27: a unit test "proved" an e2e check (by the judge's citation or a probe)."""
    probe = {"kind": "test-assert", "pattern": r"status == 201", "path_globs": ["tests/**"]}
    baseline = _with_check("S1-AC1-T1", level="e2e", probes=[probe])
    result = compute_distribution(PRD, baseline, cases(), EVIDENCE, test_files=TEST_FILES)
    assert _tiers(result)["test_signup_201"] == "nice_to_have"


def test_a_test_matching_one_of_several_probes_proves_nothing() -> None:
    probes = [
        {"kind": "test-assert", "pattern": r"status == 201", "path_globs": ["tests/**"]},
        {"kind": "test-assert", "pattern": r"stored_account", "path_globs": ["tests/**"]},
    ]
    baseline = _with_check("S1-AC1-T1", probes=probes)
    result = compute_distribution(PRD, baseline, cases(), [], test_files=TEST_FILES,
                                  met_checks={"S1-AC1-T1"})  # fmt: skip
    assert _tiers(result)["test_signup_201"] == "nice_to_have"
    one = _with_check("S1-AC1-T1", probes=probes[:1])
    result = compute_distribution(PRD, one, cases(), [], test_files=TEST_FILES,
                                  met_checks={"S1-AC1-T1"})  # fmt: skip
    assert _tiers(result)["test_signup_201"] == "necessary"


def test_health_rests_on_unscored_checks_is_undetermined_not_failing() -> None:
    """Issue 27: D said "not healthy: no Necessary test for S1-AC1" over unjudged checks."""
    unscored = {"S1-AC1-T1", "S1-AC1-T2"}
    result = compute_distribution(PRD, BASELINE, cases(), EVIDENCE[1:], unscored_checks=unscored)
    assert result.healthy is None and result.failing_p0_acs == ()
    assert result.undetermined_p0_acs == ("S1-AC1",)
    assert "health undetermined: the main-path T-checks of S1-AC1 are UNSCORED" in result.reading
    assert pd.isna(result.distribution_frame()["healthy"].iloc[0])


def test_r_over_unscored_t_checks_is_null_with_the_reason() -> None:
    from evalflow.domain.side_metrics.robustness import compute_robustness

    result = compute_distribution(PRD, BASELINE, cases(), EVIDENCE[1:],
                                  unscored_checks={"S1-AC1-T1"})  # fmt: skip
    assert result.unscored_t_checks == ("S1-AC1-T1",)
    robustness = compute_robustness(result, cases(), TEST_FILES)
    assert robustness.total is None and robustness.rows
    assert robustness.reason == "1 T-check(s) UNSCORED: a test proving one would be no extra"
