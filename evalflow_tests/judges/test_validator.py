from __future__ import annotations

from evalflow.domain.models import Evidence, Search, Verdict
from evalflow.judges.validator import (
    FLAG_DEMOTED,
    FLAG_INVALID_EVIDENCE,
    FLAG_NO_SEARCHES,
    FLAG_OUTSIDE_DIFF,
    evidence_problem,
    validate_verdict,
)
from evalflow.repo.snapshot import RepoSnapshot, SourceFile

SNAP = RepoSnapshot(
    commit="c0ffee",
    files={
        "app/api.py": SourceFile("app/api.py", "def create():\n    return Response(201, body)\n"),
        "lib/util.py": SourceFile("lib/util.py", "x = 1\n"),
    },
)


def verdict(status: str, evidence=(), searches=()) -> Verdict:
    return Verdict(
        check_id="C1",
        run=1,
        status=status,
        evidence=tuple(evidence),
        searches=tuple(searches),
        judge_id="test",
    )


def test_valid_evidence_passes() -> None:
    ev = Evidence(path="app/api.py", start_line=2, end_line=2, quote="return Response(201, body)")
    out = validate_verdict(verdict("MET", [ev]), SNAP, {"app/api.py"})
    assert out.status == "MET" and out.evidence == (ev,) and out.flags == ()


def test_hallucinated_path_makes_met_unmet_then_unscored_without_searches() -> None:
    ev = Evidence(path="app/ghost.py", start_line=1, end_line=1)
    out = validate_verdict(verdict("MET", [ev]), SNAP, set())
    assert out.status == "UNSCORED"
    assert {FLAG_INVALID_EVIDENCE, FLAG_DEMOTED, FLAG_NO_SEARCHES} <= set(out.flags)
    with_search = verdict("MET", [ev], [Search(pattern="Response", scope="diff surface")])
    assert validate_verdict(with_search, SNAP, set()).status == "UNMET"


def test_each_evidence_problem() -> None:
    assert "not a plain path" in evidence_problem(
        Evidence(path="../etc/passwd", start_line=1, end_line=1), SNAP
    )
    assert "not a plain path" in evidence_problem(
        Evidence(path="/etc/passwd", start_line=1, end_line=1), SNAP
    )
    assert "beyond the end" in evidence_problem(
        Evidence(path="lib/util.py", start_line=1, end_line=9), SNAP
    )
    assert "quoted text" in evidence_problem(
        Evidence(path="app/api.py", start_line=1, end_line=1, quote="Response(201"), SNAP
    )
    assert evidence_problem(Evidence(path="./lib/util.py", start_line=1, end_line=1), SNAP) is None


def test_unmet_without_searches_is_unscored() -> None:
    assert validate_verdict(verdict("UNMET"), SNAP, set()).status == "UNSCORED"
    searched = verdict("UNMET", searches=[Search(pattern="x", scope="diff surface")])
    assert validate_verdict(searched, SNAP, set()).status == "UNMET"


def test_evidence_outside_diff_surface_is_flagged_not_rejected() -> None:
    ev = Evidence(path="lib/util.py", start_line=1, end_line=1)
    out = validate_verdict(verdict("MET", [ev]), SNAP, {"app/api.py"})
    assert out.status == "MET" and FLAG_OUTSIDE_DIFF in out.flags
