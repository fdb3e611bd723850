"""Small inline PRD, baseline, tests and spec artifacts shared by the side-metric tests."""

from __future__ import annotations

from evalflow.domain.models import Baseline
from evalflow.domain.prd import parse_prd
from evalflow.repo.test_inventory import TestCase, classify_feature_tests, parse_test_file

PRD_TEXT = """# PRD: Mini

## Story S1: Sign up (P0)

Acceptance criteria:
- S1-AC1: Given a valid email, when a visitor signs up, then an account is created (201).
- S1-AC2: Signing up twice with the same email is rejected with 409.

## Story S2: Export (P1)

Acceptance criteria:
- S2-AC1: Users can export their data as CSV.

## Out of scope

- Team billing and seat management.
"""

PRD = parse_prd(PRD_TEXT, "prd.md")


def _t(check_id: str, proposition: str, level: str = "unit") -> dict:
    return {"id": check_id, "kind": "T", "level": level, "proposition": proposition}


BASELINE = Baseline.model_validate(
    {
        "benchmark": "mini",
        "prd": "prd.md",
        "acs": [
            {
                "id": "S1-AC1",
                "text": PRD.stories[0].acs[0].text,
                "checks": [
                    {"id": "S1-AC1-I1", "kind": "I", "proposition": "Creates the account."},
                    _t("S1-AC1-T1", "A test asserts the 201 and the stored account."),
                    _t("S1-AC1-T2", "A unit test asserts the `created` payload."),
                ],
            },
            {
                "id": "S1-AC2",
                "text": PRD.stories[0].acs[1].text,
                "checks": [_t("S1-AC2-T1", "A test asserts the 409 for a second sign-up.")],
            },
            {
                "id": "S2-AC1",
                "text": PRD.stories[1].acs[0].text,
                "checks": [_t("S2-AC1-T1", "A test asserts the CSV export.")],
            },
        ],
    }
)

TESTS_PATH = "tests/test_signup.py"
TESTS_TEXT = """import pytest


def test_signup_201():
    assert resp.status == 201


def test_signup_twice():
    assert resp.status == 409


@pytest.mark.parametrize("email", ["", "x"])
def test_bad_email(email):
    with pytest.raises(ValueError):
        signup(email)


def test_export():
    assert export() == "a,b"


def test_helper_repr():
    assert repr(account) == "Account"


def test_runs_only():
    signup("a@b.c")
"""
OLD_PATH = "tests/test_old.py"
OLD_TEXT = """def test_old_router():
    assert route("/") == 200
"""
TEST_FILES = {TESTS_PATH: TESTS_TEXT, OLD_PATH: OLD_TEXT}


def cases() -> list[TestCase]:
    """The fixture's test cases: test_signup.py is new (feature), test_old.py pre-existing."""
    raw = parse_test_file(TESTS_PATH, TESTS_TEXT) + parse_test_file(OLD_PATH, OLD_TEXT)
    return classify_feature_tests(raw, None, {TESTS_PATH})


SPEC_TEXT = """# Spec: Mini

## Clarifications

- Q: Is a trailing dot allowed? → A: The email MUST be rejected with 400.

## Requirements

### Functional Requirements

| ID | Requirement | Source |
|----|-------------|--------|
| FR-001 | Sign-up MUST create an account and answer 201. | S1-AC1 |
| FR-002 | The email MUST be validated; invalid → 400 `invalid_email`. | implied: validation |
| FR-003 | Accounts MUST support team seats. | |

### Edge Cases

- Two concurrent requests for one address create exactly one account.
- Emails are validated and invalid ones get 400.

### Error taxonomy (FR-002)

| Status | Code |
|--------|------|
| 400 | `invalid_email` |

## Deferred

- Story S2 (export) comes in a later release.
"""

TASKS_TEXT = """# Tasks

- [x] T001 Build sign-up (FR-001)
- [ ] T002 Validation (FR-002)
- [x] T003 Polish: ruff clean
"""

SPEC_FILES = {"specs/mini/spec.md": SPEC_TEXT, "specs/mini/tasks.md": TASKS_TEXT}
