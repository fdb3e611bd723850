from __future__ import annotations

import pandas as pd

from evalflow.domain.side_metrics.common import NO_SPEC
from evalflow.domain.side_metrics.compute import elicitation_judges
from evalflow.domain.side_metrics.elicitation import compute_elicitation
from evalflow.domain.side_metrics.scope import ProductionChange, compute_scope
from evalflow.domain.side_metrics.spec_artifacts import parse_spec_artifacts
from evalflow_tests.domain.side_metrics.fixtures import PRD, SPEC_FILES

DONE_TASKS = SPEC_FILES["specs/mini/tasks.md"].replace("- [ ] T002", "- [x] T002")
SIGNUP = (
    '"""Sign-up (FR-001): no team seats here."""\n'
    "# seats are out of scope\n"
    "def sign_up(email):\n"
    '    raise ApiError(400, "invalid_email")\n'
    "UNIQUE_INDEX = 'CREATE UNIQUE INDEX one_account ON accounts(email)'\n"
)


def _scope(spec_files: dict[str, str], files: dict[str, str], changes: list[ProductionChange]):
    artifacts = parse_spec_artifacts(spec_files)
    e = compute_elicitation(PRD, artifacts, elicitation_judges(None), production_files=files)
    return compute_scope(PRD, artifacts, e, changes, files)


def _new(*paths: str) -> list[ProductionChange]:
    return [ProductionChange(path=p, new_file=True) for p in paths]


def test_pass_when_everything_traces_and_comments_are_skipped() -> None:
    spec = {**SPEC_FILES, "specs/mini/tasks.md": DONE_TASKS}
    result = _scope(spec, {"app/signup.py": SIGNUP}, _new("app/signup.py"))
    assert result.verdict == "pass"
    assert [(f.kind, f.effect) for f in result.findings] == [("deferred", "none")]
    assert result.findings[0].ref == "specs/mini/spec.md:30"
    assert result.findings[0].description.endswith("— PRD S2 (P1)")


def test_out_of_scope_build_fails_with_file_and_line() -> None:
    files = {"app/signup.py": SIGNUP, "app/seats.py": "import x\n\ndef add_seat(team):\n    pass\n"}
    result = _scope(SPEC_FILES, files, _new("app/signup.py", "app/seats.py"))
    assert result.verdict == "fail"
    oos = [f for f in result.findings if f.kind == "out_of_scope"]
    assert [f.ref for f in oos] == ["app/seats.py:3"]
    assert "(seat, team) on 1 added line(s)" in oos[0].description
    assert "Team billing and seat management." in oos[0].description


def test_rogue_module_and_route_fail() -> None:
    files = {
        "app/signup.py": SIGNUP,
        "app/gamification.py": "def award_badges():\n    return []\n",
        "app/routes.py": (
            'app = App()\n@app.route("POST", "/signups")\n@app.route("GET", "/leaderboard/{id}")\n'
        ),
    }
    changes = [
        *_new("app/signup.py", "app/gamification.py"),
        ProductionChange(path="app/routes.py", new_file=False, added_lines=frozenset({2, 3})),
    ]
    result = _scope(SPEC_FILES, files, changes)
    rogue = [(f.ref, f.description) for f in result.findings if f.kind == "rogue_build"]
    assert rogue == [
        (
            "app/gamification.py:1",
            "new module 'gamification' traces to no PRD AC or valid addition "
            "(definitions: award_badges)",
        ),
        (
            "app/routes.py:3",
            "route /leaderboard/{id} traces to no PRD AC or valid addition "
            "(unsanctioned: leaderboard)",
        ),
    ]
    assert result.verdict == "fail"


def test_plan_drift_is_partial() -> None:
    result = _scope(SPEC_FILES, {"app/signup.py": SIGNUP}, _new("app/signup.py"))
    assert result.verdict == "partial"
    drift = [f for f in result.findings if f.kind == "plan_drift"]
    assert [(f.ref, f.description) for f in drift] == [
        ("specs/mini/tasks.md:4", "task T002 is not done: T002 Validation (FR-002)")
    ]


def test_pending_valid_addition_is_drift() -> None:
    spec = {**SPEC_FILES, "specs/mini/tasks.md": DONE_TASKS}
    files = {"app/signup.py": "def sign_up(email):\n    return 201\n"}
    result = _scope(spec, files, _new("app/signup.py"))
    assert result.verdict == "partial"
    drift = [f.description for f in result.findings if f.kind == "plan_drift"]
    assert drift == ["sanctioned addition FR-002 has no code (searched: \\b400\\b, invalid_email)"]


def test_no_spec_is_na() -> None:
    result = _scope({}, {"app/seats.py": "seat = 1\n"}, _new("app/seats.py"))
    assert (result.status, result.verdict, result.findings) == (NO_SPEC, None, ())
    row = result.summary_frame().iloc[0]
    assert row["status"] == NO_SPEC and pd.isna(row["verdict"]) and pd.isna(row["n_plan_drift"])
