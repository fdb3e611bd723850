from __future__ import annotations

import pandas as pd

from evalflow.domain.side_metrics.common import NO_SPEC, met_test_evidence
from evalflow.domain.side_metrics.compute import SideMetricsInputs, compute_side_metrics
from evalflow.domain.side_metrics.markdown import side_metrics_markdown
from evalflow.domain.side_metrics.scope import ProductionChange
from evalflow_tests.domain.side_metrics.fixtures import (
    BASELINE,
    PRD,
    SPEC_FILES,
    TEST_FILES,
    TESTS_PATH,
    cases,
)

CODE = {"app/signup.py": 'def sign_up(email):\n    raise ApiError(400, "invalid_email")\n'}
VERDICTS = pd.DataFrame(
    [
        {
            "check_id": "S1-AC1-T1",
            "run": 1,
            "status": "MET",
            "evidence": [{"path": TESTS_PATH, "start_line": 5, "end_line": 5}],
        }
    ]
)
# Every T-check decided (an UNSCORED or missing one makes R and T NULL).
VOTES = pd.DataFrame(
    {
        "check_id": ["S1-AC1-T1", "S1-AC1-T2", "S1-AC2-T1", "S2-AC1-T1"],
        "majority": ["MET", "UNMET", "UNMET", "UNMET"],
    }
)


def _inputs(spec_files: dict[str, str]) -> SideMetricsInputs:
    return SideMetricsInputs(
        prd=PRD,
        baseline=BASELINE,
        cases=cases(),
        evidence=met_test_evidence(VOTES, VERDICTS),
        votes=VOTES,
        test_files=TEST_FILES,
        spec_files=spec_files,
        production_files=CODE,
        changes=[ProductionChange(path="app/signup.py", new_file=True)],
    )


def test_sections_and_figures() -> None:
    metrics = compute_side_metrics(_inputs(SPEC_FILES))
    text = side_metrics_markdown(metrics)
    titles = [line for line in text.splitlines() if line.startswith("## ")]
    assert [t.split(" (")[0] for t in titles] == [
        "## Elicitation E",
        "## Harness over the sanctioned set",
        "## Scope S",
        "## Robustness R",
        "## Test distribution D",
    ]
    assert (
        "E_recall unadjudicated — 10 candidates · E_precision unadjudicated — 3 candidates · "
        "E_justified unadjudicated — 3 candidates · pooled recall n/a (no master list)"
    ) in text
    assert "S = **unadjudicated — 0 candidates** (confirmed: 0 out of scope" in text
    assert "0.2" not in text.split("E_justified")[1].split("\n")[0]
    assert "R = **3.50** over 6 extra test(s)" in text
    assert "| Necessary | 1 | 14.3% |" in text
    assert "| FR-003 | specs/mini/spec.md:15 | candidate |" in text
    assert text == side_metrics_markdown(compute_side_metrics(_inputs(SPEC_FILES)))


def test_no_spec_renders_na_blocks() -> None:
    metrics = compute_side_metrics(_inputs({}))
    text = side_metrics_markdown(metrics, heading_level=3)
    assert f"E: {NO_SPEC}." in text and f"S: {NO_SPEC}." in text
    assert "### Test distribution D" in text
    frames = metrics.frames()
    assert set(frames) == {
        "test_tier",
        "distribution",
        "robustness",
        "elicitation_category",
        "elicitation_addition",
        "elicitation_item",
        "elicitation_summary",
        "scope_finding",
        "scope_summary",
        "sanctioned_requirement",
    }
    assert frames["elicitation_summary"].iloc[0]["status"] == NO_SPEC
    assert frames["scope_summary"].iloc[0]["status"] == NO_SPEC
