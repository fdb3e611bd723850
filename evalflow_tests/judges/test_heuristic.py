"""The heuristic judge on small fixture repositories with known answers."""

from __future__ import annotations

from pathlib import Path

from evalflow.domain.models import BaselineAC, Check, Probe, Verdict
from evalflow.judges.base import JudgeRequest
from evalflow.judges.heuristic import HeuristicJudge
from evalflow.judges.validator import validate_verdict
from evalflow.repo.diff_surface import diff_surface
from evalflow.repo.git import resolve_commit
from evalflow.repo.snapshot import load_snapshot

APP = """\
from datetime import timedelta


def start_trial(conn, email):
    ends_at = now() + timedelta(days=14)
    save(conn, email, ends_at)
    return ends_at
"""
UNIT = """\
from app.trials import start_trial


def test_end_date():
    ends = start_trial(conn, "a@x")
    assert ends == NOW + timedelta(days=14)


def test_runs_without_asserting():
    start_trial(conn, "b@x")
    saved_status(conn) == "active"


def test_mock_only(mocker):
    save = mocker.patch("app.trials.save")
    start_trial(conn, "c@x")
    save.assert_called_once_with(conn, "c@x", ANY)
"""
E2E = """\
import sqlite3


def test_signup_persists(client, db):
    resp = client.post("/trials", json={"email": "a@x"})
    assert resp.status == 201
    assert db_row(db)["ends_at"] == "2026-01-15"
"""


def probe(kind: str, pattern: str, globs=("**",)) -> Probe:
    return Probe(kind=kind, pattern=pattern, path_globs=tuple(globs))


def score(repo: Path, *checks: Check, run: int = 1) -> dict[str, Verdict]:
    head = resolve_commit(repo, "head")
    snap = load_snapshot(repo, head)
    diff = tuple(f.path for f in diff_surface(repo, resolve_commit(repo, "base"), head))
    ac = BaselineAC(id="AC1", text="x", checks=checks)
    request = JudgeRequest(
        run_key="b.f.r",
        run=run,
        checks=tuple((ac, c) for c in checks),
        snapshot=snap,
        diff_paths=diff,
    )
    return {
        v.check_id: validate_verdict(v, snap, set(diff)) for v in HeuristicJudge().score(request)
    }


def fixture(make_repo) -> Path:
    return make_repo(
        {"lib/legacy.py": "LEGACY_DAYS = 14\n"},
        {"app/trials.py": APP, "tests/unit/test_trials.py": UNIT, "tests/e2e/test_api.py": E2E},
    )


def test_met_cites_the_right_file_and_line(make_repo) -> None:
    repo = fixture(make_repo)
    check = Check(
        id="I1",
        kind="I",
        proposition="ends 14 days later",
        probes=(probe("impl", r"timedelta\(days=14\)"),),
    )
    v = score(repo, check)["I1"]
    assert v.status == "MET"
    assert [e.ref() for e in v.evidence] == ["app/trials.py:5"]
    assert v.evidence[0].quote == "ends_at = now() + timedelta(days=14)"
    assert v.searches[0].scope.startswith("diff surface")


def test_unmet_records_its_searches(make_repo) -> None:
    repo = fixture(make_repo)
    check = Check(
        id="I2", kind="I", proposition="refunds", probes=(probe("impl", r"def refund\("),)
    )
    v = score(repo, check)["I2"]
    assert v.status == "UNMET"
    assert [s.scope.split(":")[0] for s in v.searches] == ["diff surface", "repository"]
    assert all(s.pattern == r"def refund\(" and s.hits == 0 for s in v.searches)


def test_code_outside_the_diff_is_found_and_flagged(make_repo) -> None:
    repo = fixture(make_repo)
    check = Check(id="I3", kind="I", proposition="legacy", probes=(probe("impl", "LEGACY_DAYS"),))
    v = score(repo, check)["I3"]
    assert v.status == "MET" and "evidence-outside-diff-surface" in v.flags


def test_every_probe_must_match(make_repo) -> None:
    repo = fixture(make_repo)
    check = Check(
        id="I4",
        kind="I",
        proposition="both",
        probes=(probe("impl", "timedelta"), probe("impl", "missing_thing")),
    )
    assert score(repo, check)["I4"].status == "UNMET"


def test_t_check_needs_an_assertion_line(make_repo) -> None:
    repo = fixture(make_repo)
    executed_only = Check(
        id="T1",
        kind="T",
        level="unit",
        proposition="status active",
        probes=(probe("test-assert", r'saved_status\(conn\) == "active"'),),
    )
    v = score(repo, executed_only)["T1"]
    assert v.status == "UNMET" and "without asserting" in v.rationale


def test_mock_only_does_not_prove_an_outcome(make_repo) -> None:
    repo = fixture(make_repo)
    outcome = Check(
        id="T2",
        kind="T",
        level="unit",
        outcome=True,
        proposition="saved",
        probes=(probe("test-assert", r"save\.assert_called_once_with"),),
    )
    v = score(repo, outcome)["T2"]
    assert v.status == "UNMET" and "mock-only" in v.rationale
    external = outcome.model_copy(update={"id": "T3", "external_call": True})
    assert score(repo, external)["T3"].status == "MET"


def test_higher_level_test_satisfies_a_unit_check(make_repo) -> None:
    repo = fixture(make_repo)
    unit = Check(
        id="T4",
        kind="T",
        level="unit",
        proposition="201",
        probes=(probe("test-assert", r"resp\.status == 201"),),
    )
    v = score(repo, unit)["T4"]
    assert v.status == "MET" and v.evidence[0].ref() == "tests/e2e/test_api.py:6"


def test_e2e_check_rejects_unit_only_evidence(make_repo) -> None:
    repo = fixture(make_repo)
    e2e = Check(
        id="T5",
        kind="T",
        level="e2e",
        proposition="14 days",
        probes=(probe("test-assert", r"timedelta\(days=14\)"),),
    )
    v = score(repo, e2e)["T5"]
    assert v.status == "UNMET" and "e2e test is required" in v.rationale


def test_both_levels_need_two_distinct_tests(make_repo) -> None:
    repo = fixture(make_repo)
    both = Check(
        id="T6",
        kind="T",
        level="both",
        proposition="201",
        probes=(probe("test-assert", r"resp\.status == 201"),),
    )
    assert score(repo, both)["T6"].status == "UNMET"
    both_ok = Check(
        id="T7",
        kind="T",
        level="both",
        proposition="dates",
        probes=(probe("test-assert", r"timedelta\(days=14\)|ends_at"),),
    )
    v = score(repo, both_ok)["T7"]
    assert v.status == "MET" and len(v.evidence) == 2


def test_without_probes_the_answer_is_unscored_not_a_guess(make_repo) -> None:
    repo = fixture(make_repo)
    check = Check(id="I9", kind="I", proposition="`start_trial` saves the trial")
    v = score(repo, check)["I9"]
    assert v.status == "UNSCORED"
    assert "start_trial at app/trials.py:4" in v.rationale
    assert v.searches


def test_runs_are_identical_by_construction(make_repo) -> None:
    repo = fixture(make_repo)
    check = Check(id="I1", kind="I", proposition="14", probes=(probe("impl", "days=14"),))
    one, two = score(repo, check, run=1)["I1"], score(repo, check, run=2)["I1"]
    assert one.model_copy(update={"run": 2}) == two
