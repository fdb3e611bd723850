from __future__ import annotations

from evalflow.domain.side_metrics.distribution import compute_distribution
from evalflow.domain.side_metrics.exclusions import OutOfScope, out_of_scope
from evalflow.domain.side_metrics.robustness import compute_robustness, weigh_test
from evalflow.repo.test_inventory import classify_feature_tests, parse_test_file
from evalflow_tests.domain.side_metrics.fixtures import BASELINE, PRD, TEST_FILES, cases
from evalflow_tests.domain.side_metrics.test_distribution import EVIDENCE


def test_r_over_nice_to_have_tests() -> None:
    all_cases = cases()
    distribution = compute_distribution(PRD, BASELINE, all_cases, EVIDENCE)
    result = compute_robustness(distribution, all_cases, TEST_FILES)
    weights = {r.test_id.split("::")[-1]: (r.weight_class, r.weight) for r in result.rows}
    assert weights == {
        "test_bad_email[0]": ("high", 1.0),
        "test_bad_email[1]": ("high", 1.0),
        "test_helper_repr": ("low", 0.25),
        "test_runs_only": ("none", 0.0),
    }
    assert result.total == 2.25
    assert result.counts == {"high": 2, "med": 0, "low": 1, "none": 1}
    assert result.frame()["weight"].sum() == 2.25
    reasons = {r.name: r.reason for r in result.rows}
    assert reasons["test_bad_email"] == "error/negative path or boundary (pytest.raises)"
    assert reasons["test_helper_repr"] == "helper/internal check (helper)"
    assert reasons["test_runs_only"] == "asserts nothing: cannot fail on a wrong result"


def _one(source: str, name: str = "tests/test_x.py"):
    case = classify_feature_tests(parse_test_file(name, source), None, {name})[0]
    body = "\n".join(source.split("\n")[case.start_line - 1 : case.end_line])
    return case, body


def test_rule_order() -> None:
    skipped, body = _one(
        "import pytest\n\n@pytest.mark.skip\ndef test_x():\n    assert f() == 404\n"
    )
    assert weigh_test(skipped, body)[0] == "none"
    mocked, body = _one("def test_x(m):\n    run(m)\n    m.save.assert_called_once_with(1)\n")
    assert weigh_test(mocked, body) == (
        "low",
        "mock-only assertions: proves a call, not an outcome",
    )
    edge, body = _one("def test_unknown_status_maps():\n    assert mapping('x') == 'y'\n")
    assert weigh_test(edge, body) == ("med", "edge/state case (unknown)")
    oos, body = _one("def test_seat_count():\n    assert seats() == 3\n")
    assert weigh_test(oos, body, OutOfScope(keywords=("seat",))) == (
        "none",
        "exercises out-of-scope behaviour (seat)",
    )


def test_a_candidate_out_of_scope_hit_never_zeroes_a_test() -> None:
    """Issue 14: "private repositories" → keyword "repository" zeroed 25 tests in R. Only an
    exclusion S's adjudication confirmed zeroes a test, and then by its whole phrase."""
    prd = PRD.model_copy(
        update={
            "out_of_scope": (
                PRD.out_of_scope[0].model_copy(update={"text": "Private repositories."}),
            )
        }
    )
    case, body = _one(
        "def test_repository_rejects_bad_id():\n    assert Repository().get(0) is None\n"
    )
    assert weigh_test(case, body, out_of_scope(prd, None))[0] == "high"
    leak, body = _one(
        "def test_lists_private_repositories():\n    assert private_repositories() == []\n"
    )
    assert weigh_test(leak, body, out_of_scope(prd, None)) == (
        "none",
        "exercises out-of-scope behaviour (private repositories)",
    )
