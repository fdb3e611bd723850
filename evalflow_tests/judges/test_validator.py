from __future__ import annotations

import pytest

from evalflow.domain.models import Evidence, Search, Verdict
from evalflow.errors import InputError
from evalflow.judges.validator import (
    FLAG_DEMOTED,
    FLAG_INVALID_EVIDENCE,
    FLAG_NO_SEARCHES,
    FLAG_OUTSIDE_DIFF,
    MAX_LINES_ENV,
    evidence_problem,
    max_evidence_lines,
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
    ev = Evidence(path="lib/util.py", start_line=1, end_line=1, quote="x = 1")
    out = validate_verdict(verdict("MET", [ev]), SNAP, {"app/api.py"})
    assert out.status == "MET" and FLAG_OUTSIDE_DIFF in out.flags


LONG = RepoSnapshot(
    commit="c0ffee",
    files={
        "app/big.py": SourceFile(
            "app/big.py",
            "def handler(event):\n"
            + "".join(f"    step_{i}(event)\n" for i in range(60))
            + "    return {\n    }\n",
        )
    },
)
SEARCHED = [Search(pattern="handler", scope="diff surface", hits=1)]


@pytest.mark.parametrize(
    ("quote", "why"),
    [
        (None, "no meaningful code line"),
        ("", "no meaningful code line"),
        ("e", "no meaningful code line"),
        ("    }", "no meaningful code line"),
        ("\n  {\n", "no meaningful code line"),
    ],
)
def test_met_needs_a_meaningful_quote(quote: str | None, why: str) -> None:
    ev = Evidence(path="app/big.py", start_line=62, end_line=63, quote=quote)
    out = validate_verdict(verdict("MET", [ev], SEARCHED), LONG, {"app/big.py"})
    assert out.status == "UNMET" and out.evidence == ()
    assert FLAG_DEMOTED in out.flags and why in out.rationale
    unsearched = validate_verdict(verdict("MET", [ev]), LONG, {"app/big.py"})
    assert unsearched.status == "UNSCORED" and why in unsearched.rationale


def test_one_character_quote_over_the_whole_file_is_rejected() -> None:
    ev = Evidence(path="app/big.py", start_line=1, end_line=63, quote="e")
    out = validate_verdict(verdict("MET", [ev]), LONG, {"app/big.py"})
    assert out.status == "UNSCORED" and "cites 63 lines (at most 40" in out.rationale


def test_cited_range_is_capped_and_the_cap_is_configurable(monkeypatch) -> None:
    quote = "def handler(event):\n    step_0(event)"
    wide = Evidence(path="app/big.py", start_line=1, end_line=41, quote=quote)
    assert validate_verdict(verdict("MET", [wide]), LONG, {"app/big.py"}).status == "UNSCORED"
    assert validate_verdict(verdict("MET", [wide]), LONG, set(), max_lines=41).status == "MET"
    monkeypatch.setenv(MAX_LINES_ENV, "41")
    assert max_evidence_lines() == 41
    assert validate_verdict(verdict("MET", [wide]), LONG, set()).status == "MET"
    narrow = wide.model_copy(update={"end_line": 40})
    monkeypatch.delenv(MAX_LINES_ENV)
    assert validate_verdict(verdict("MET", [narrow]), LONG, set()).status == "MET"
    monkeypatch.setenv(MAX_LINES_ENV, "forty")
    with pytest.raises(InputError, match=MAX_LINES_ENV):
        max_evidence_lines()


def test_quote_matches_after_whitespace_normalisation_and_each_item_is_checked() -> None:
    squashed = Evidence(
        path="app/big.py", start_line=1, end_line=2, quote="def handler(event):  step_0( event)"
    )
    assert evidence_problem(squashed, LONG) is not None  # inner spacing of code is not free
    spaced = squashed.model_copy(update={"quote": "def  handler(event):\n\tstep_0(event)"})
    good = validate_verdict(verdict("MET", [spaced]), LONG, set())
    assert good.status == "MET" and good.evidence == (spaced,)
    bad = Evidence(path="app/big.py", start_line=62, end_line=62, quote="return {")
    elsewhere = Evidence(path="app/big.py", start_line=5, end_line=5, quote="return {")
    mixed = validate_verdict(verdict("MET", [spaced, bad, elsewhere]), LONG, set())
    assert mixed.status == "MET" and mixed.evidence == (spaced, bad)
    assert FLAG_INVALID_EVIDENCE in mixed.flags and "app/big.py:5" in mixed.rationale


def test_claimed_search_hits_must_be_hits_evalflow_returned() -> None:
    from evalflow.judges.validator import claimed_search_problem

    ran = [
        Search(pattern=r"\bcreate\(", scope="grep **", hits=2),
        Search(pattern="read app/api.py:1-2", scope="app/api.py", hits=2),
        Search(pattern="app/**", scope="list_files", hits=1),
    ]
    honest = [
        Search(pattern=r"\bcreate\(", scope="**", hits=2),
        Search(pattern=r"\bcreate\(", scope="**", hits=1),  # fewer than returned: fine
        Search(pattern="app/api.py:1-2", scope="app/api.py", hits=2),  # a file read
        Search(pattern="never_run", scope="**", hits=0),  # claims no hit
        Search(pattern="app/**", scope="**", hits=1),
    ]
    assert claimed_search_problem(honest, ran) is None
    invented = claimed_search_problem([Search(pattern="Response", scope="**", hits=1)], ran)
    assert invented is not None and "'Response' claims 1 hits but was never run" in invented
    inflated = claimed_search_problem([Search(pattern=r"\bcreate\(", scope="**", hits=5)], ran)
    assert inflated is not None and "evalflow returned 2" in inflated
    assert claimed_search_problem([Search(pattern="x", scope="**", hits=1)], []) is not None
