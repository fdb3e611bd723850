from __future__ import annotations

import pandas as pd
import pytest

from evalflow.domain.prd import parse_prd
from evalflow.domain.side_metrics.common import NO_SPEC
from evalflow.domain.side_metrics.compute import elicitation_judges
from evalflow.domain.side_metrics.elicitation import (
    ElicitationLabels,
    ElicitationRubric,
    ScopeLabels,
    compute_elicitation,
)
from evalflow.domain.side_metrics.scope import ProductionChange, compute_scope
from evalflow.domain.side_metrics.spec_artifacts import parse_spec_artifacts
from evalflow.errors import InputError
from evalflow_tests.domain.side_metrics.fixtures import PRD, PRD_TEXT, SPEC_FILES

DONE_TASKS = SPEC_FILES["specs/mini/tasks.md"].replace("- [ ] T002", "- [x] T002")
SIGNUP = (
    '"""Sign-up (FR-001): no team seats here."""\n'
    "# seats are out of scope\n"
    "def sign_up(email):\n"
    '    raise ApiError(400, "invalid_email")\n'
    "UNIQUE_INDEX = 'CREATE UNIQUE INDEX one_account ON accounts(email)'\n"
)


def _scope(
    spec_files: dict[str, str],
    files: dict[str, str],
    changes: list[ProductionChange],
    *,
    scope: dict | None = None,
    prd=PRD,
    rubric: ElicitationRubric | None = None,
):
    """S with the fixture's additions adjudicated (FR-002, spec.md:19 valid; FR-003 invalid)
    and, when given, a `scope` labels section."""
    labels = ElicitationLabels.model_validate(
        {
            "framework": "mini",
            "additions": [
                {"item": "FR-002", "verdict": "valid-necessary", "rationale": "implied"},
                {"item": "FR-003", "verdict": "invalid", "rationale": "scope creep"},
                {"item": "spec.md:19", "verdict": "valid-defensive", "rationale": "races"},
            ],
        }
    )
    artifacts = parse_spec_artifacts(spec_files)
    e = compute_elicitation(prd, artifacts, elicitation_judges(labels), production_files=files)
    labelled = ScopeLabels.model_validate(scope) if scope is not None else None
    return compute_scope(prd, artifacts, e, changes, files, rubric=rubric, labels=labelled)


def _new(*paths: str) -> list[ProductionChange]:
    return [ProductionChange(path=p, new_file=True) for p in paths]


def test_without_adjudication_s_is_null_never_pass() -> None:
    spec = {**SPEC_FILES, "specs/mini/tasks.md": DONE_TASKS}
    result = _scope(spec, {"app/signup.py": SIGNUP}, _new("app/signup.py"))
    assert result.verdict is None and result.reason == "unadjudicated — 0 candidates"
    assert [(f.kind, f.status) for f in result.findings] == [("deferred", "note")]
    assert result.findings[0].ref == "specs/mini/spec.md:30"
    assert result.findings[0].description.endswith("— PRD S2 (P1)")
    row = result.summary_frame().iloc[0]
    assert pd.isna(row["verdict"]) and row["reason"] == "unadjudicated — 0 candidates"
    adjudicated = _scope(spec, {"app/signup.py": SIGNUP}, _new("app/signup.py"), scope={})
    assert adjudicated.verdict == "pass" and adjudicated.judge == "labels"


def test_out_of_scope_phrase_is_a_candidate_never_a_fail() -> None:
    files = {
        "app/signup.py": SIGNUP,
        "app/seats.py": (
            "import x\n\ndef add_seat(team):\n    team_billing_and_seat_management = 1\n"
        ),
    }
    result = _scope(SPEC_FILES, files, _new("app/signup.py", "app/seats.py"))
    assert result.verdict is None
    oos = [f for f in result.findings if f.kind == "out_of_scope"]
    # the whole phrase is needed: `add_seat(team)` on line 3 is no hit, line 4 is
    assert [(f.ref, f.status, f.effect) for f in oos] == [("app/seats.py:4", "candidate", "fail")]
    assert "Team billing and seat management." in oos[0].description
    assert result.reason == "unadjudicated — 1 candidate"
    confirmed = _scope(
        SPEC_FILES,
        files,
        _new("app/signup.py", "app/seats.py"),
        scope={
            "findings": [
                {
                    "ref": "seats.py:4",
                    "kind": "out_of_scope",
                    "status": "confirmed",
                    "rationale": "builds team billing",
                }
            ]
        },
    )
    assert confirmed.verdict == "fail"
    assert confirmed.confirmed_terms() == ("team billing and seat management",)
    with pytest.raises(InputError, match="milder"):
        _scope(
            SPEC_FILES,
            files,
            _new("app/signup.py", "app/seats.py"),
            scope={"verdict": "pass", "findings": confirmed_findings(confirmed)},
        )


def confirmed_findings(result) -> list[dict]:
    return [
        {"ref": f.ref, "kind": f.kind, "status": "confirmed", "rationale": "r"}
        for f in result.findings
        if f.status == "confirmed" and f.kind != "deferred"
    ]


def test_in_scope_parentheticals_and_camel_case_never_propose_scope_creep() -> None:
    """Issue 14: keywords from parentheticals describing what IS in scope ("local storage
    only", "single-user"), prefix-matched after camelCase splitting (readFileSync ⇒ sync,
    new Date() ⇒ date) failed a clean repo with 8 findings."""
    prd = parse_prd(
        PRD_TEXT.replace(
            "- Team billing and seat management.",
            "- Cloud sync (local storage only).\n- Multi-device use (single-user, up to date).",
        ),
        "prd.md",
    )
    code = (
        "const raw = fs.readFileSync(storePath, 'utf8');\n"
        "const created = new Date();\n"
        "const localStorage = openLocalStorage(); // single user\n"
    )
    files = {"app/signup.py": SIGNUP, "src/store.ts": code}
    result = _scope(SPEC_FILES, files, _new("app/signup.py", "src/store.ts"), prd=prd)
    assert [f for f in result.findings if f.kind == "out_of_scope"] == []


def test_private_repositories_do_not_flag_a_repository_class() -> None:
    """Issue 14: "private repositories" became the keyword "repository" and flagged a
    `Repository` DB class in 13 production files."""
    prd = parse_prd(
        PRD_TEXT.replace("- Team billing and seat management.", "- Private repositories."),
        "prd.md",
    )
    code = "class Repository:\n    def repositories(self):\n        return self.db.repos\n"
    files = {"app/signup.py": SIGNUP, "app/db.py": code}
    result = _scope(SPEC_FILES, files, _new("app/signup.py", "app/db.py"), prd=prd)
    assert [f for f in result.findings if f.kind == "out_of_scope"] == []
    leak = {**files, "app/gh.py": "def list_private_repositories(token):\n    return []\n"}
    flagged = _scope(SPEC_FILES, leak, _new("app/signup.py", "app/db.py", "app/gh.py"), prd=prd)
    assert [(f.ref, f.status) for f in flagged.findings if f.kind == "out_of_scope"] == [
        ("app/gh.py:1", "candidate")
    ]


def test_frozen_keywords_match_word_starts_without_camel_case_splitting() -> None:
    rubric = ElicitationRubric(out_of_scope_keywords=("sync", "seat"))
    files = {
        "app/signup.py": SIGNUP,
        "src/a.ts": "const raw = fs.readFileSync(p);\n",
        "src/b.ts": "export function syncNow() {}\n",
    }
    result = _scope(SPEC_FILES, files, _new("app/signup.py", "src/a.ts", "src/b.ts"), rubric=rubric)
    assert [f.ref for f in result.findings if f.kind == "out_of_scope"] == ["src/b.ts:1"]


def test_rogue_module_and_route_are_candidates() -> None:
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
    rogue = [(f.ref, f.status, f.description) for f in result.findings if f.kind == "rogue_build"]
    assert rogue == [
        (
            "app/gamification.py:1",
            "candidate",
            "new module 'gamification' traces to no PRD AC or valid addition "
            "(definitions: award_badges)",
        ),
        (
            "app/routes.py:3",
            "candidate",
            "route /leaderboard/{id} traces to no PRD AC or valid addition "
            "(unsanctioned: leaderboard)",
        ),
    ]
    assert result.verdict is None
    rejected = _scope(
        SPEC_FILES,
        files,
        changes,
        scope={
            "findings": [
                {"ref": r, "kind": "rogue_build", "status": "rejected", "rationale": "PRD S9"}
                for r, _, _ in rogue
            ]
        },
    )
    # both rejected; the unchecked task T002 is confirmed drift
    assert rejected.verdict == "partial"


def test_unchecked_task_is_confirmed_drift() -> None:
    result = _scope(SPEC_FILES, {"app/signup.py": SIGNUP}, _new("app/signup.py"))
    drift = [f for f in result.findings if f.kind == "plan_drift"]
    assert [(f.ref, f.status, f.description) for f in drift] == [
        (
            "specs/mini/tasks.md:4",
            "confirmed",
            "task T002 is not done: T002 Validation (FR-002)",
        )
    ]
    assert result.verdict is None
    assert _scope(
        SPEC_FILES, {"app/signup.py": SIGNUP}, _new("app/signup.py"), scope={}
    ).verdict == ("partial")


def test_literal_spec_strings_found_nowhere_are_drift_candidates_not_drift() -> None:
    """Issue 14: 5 of 6 "plan drift: has no code" findings were implemented — literal spec
    strings were searched. Derived keywords only propose."""
    spec = {**SPEC_FILES, "specs/mini/tasks.md": DONE_TASKS}
    files = {"app/signup.py": "def sign_up(email):\n    return 201\n"}
    result = _scope(spec, files, _new("app/signup.py"))
    drift = [(f.status, f.description) for f in result.findings if f.kind == "plan_drift"]
    assert drift == [
        (
            "candidate",
            "sanctioned addition FR-002 may have no code (words of its text found nowhere: "
            "\\b400\\b, invalid_email)",
        )
    ]
    assert result.count("plan_drift") == 0 and result.n_candidates == 1
    assert _scope(spec, files, _new("app/signup.py"), scope={}).verdict is None


def test_a_rejection_must_name_a_finding() -> None:
    with pytest.raises(InputError, match="no finding"):
        _scope(
            SPEC_FILES,
            {"app/signup.py": SIGNUP},
            _new("app/signup.py"),
            scope={
                "findings": [
                    {"ref": "x.py:1", "kind": "rogue_build", "status": "rejected", "rationale": "r"}
                ]
            },
        )


def test_no_spec_is_na() -> None:
    result = _scope({}, {"app/seats.py": "seat = 1\n"}, _new("app/seats.py"))
    assert (result.status, result.verdict, result.findings) == (NO_SPEC, None, ())
    row = result.summary_frame().iloc[0]
    assert row["status"] == NO_SPEC and pd.isna(row["verdict"]) and pd.isna(row["n_plan_drift"])
    assert pd.isna(row["reason"])
