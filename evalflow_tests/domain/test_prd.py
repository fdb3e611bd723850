from __future__ import annotations

import pytest

from evalflow.domain.prd import parse_prd
from evalflow.errors import InputError

PRD = """\
# PRD: Shop

Context paragraph with a list that is not a story:
- not an AC

## Story S1: Checkout (P0)

As a buyer...

Acceptance criteria:
- S1-AC1: Given a cart, when I pay, then an order is created
  and a receipt is emailed.
- **S1-AC2** Payment failures show an error.

## Story S2: Wishlist [P1]
- Items can be saved.
- Items can be removed.

## Story S3: Gift cards
- Gift cards can be redeemed.

## Non-goals
- Loyalty points
- Marketplace sellers

```
## Story S9: inside a fence (P0)
- ignored
```
"""


def test_stories_priorities_acs_and_exclusions() -> None:
    prd = parse_prd(PRD, "prd.md")
    assert prd.title == "PRD: Shop"
    assert [(s.id, s.priority, s.assumed) for s in prd.stories] == [
        ("S1", "P0", False),
        ("S2", "P1", False),
        ("S3", "P1", True),
    ]
    s1 = prd.stories[0]
    assert [a.id for a in s1.acs] == ["S1-AC1", "S1-AC2"]
    assert s1.acs[0].text == (
        "Given a cart, when I pay, then an order is created and a receipt is emailed."
    )
    assert s1.acs[0].line == 11
    assert [a.id for a in prd.stories[1].acs] == ["S2-AC1", "S2-AC2"]
    assert [o.text for o in prd.out_of_scope] == ["Loyalty points", "Marketplace sellers"]


def test_assumed_priority_is_configurable() -> None:
    prd = parse_prd(PRD, "prd.md", assumed_priority="P2")
    assert prd.stories[2].priority == "P2" and prd.stories[2].assumed


SPEC_KIT = """\
# Feature Specification: Catalogue

### User Story 1 - Browse catalogue (Priority: P1)

**Acceptance Scenarios**:

1. **Given** products exist, **When** I open the catalogue, **Then** I see them.
2. **Given** no products, **When** I open it, **Then** I see an empty state.

### User Story 2 - Search (Priority: P3)

**Acceptance Scenarios**:

1. **Given** a query, **When** I search, **Then** matching products show.
"""


def test_spec_kit_convention_maps_priorities() -> None:
    prd = parse_prd(SPEC_KIT, "spec.md")
    assert [(s.id, s.priority) for s in prd.stories] == [("US1", "P0"), ("US2", "P2")]
    assert [a.id for a in prd.stories[0].acs] == ["US1-AC1", "US1-AC2"]
    custom = parse_prd(SPEC_KIT, "spec.md", priority_mapping={"P1": "P1", "P3": "P2"})
    assert custom.stories[0].priority == "P1"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no user stories found"),
        ("# Title\n\nJust prose.\n", "no user stories found"),
        ("## Story S1: A (P0)\n\nNo list here.\n", "has no acceptance criteria"),
        ("## Story S1: A (P0)\n- S1-AC1: x\n## Story S1: B (P1)\n- y\n", "duplicate story id"),
        ("## Story S1: A (P0)\n- AC-1: x\n## Story S2: B (P1)\n- AC-1: y\n", "duplicate AC id"),
    ],
)
def test_malformed_prd_is_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        parse_prd(text, "bad.md")
    assert message in str(info.value)
    assert "bad.md" in str(info.value)


def test_error_names_the_line() -> None:
    with pytest.raises(InputError, match=r"bad\.md:3"):
        parse_prd("# T\n\n## Story S1: A (P0)\nprose only\n", "bad.md")


def test_demo_prd_parses() -> None:
    from evalflow_tests.conftest import DEMO

    prd = parse_prd((DEMO / "prd.md").read_text(), "prd.md")
    assert len(prd.ac_ids()) == 10
    assert {s.priority for s in prd.stories} == {"P0", "P1", "P2"}
    assert len(prd.out_of_scope) == 3


def test_unknown_or_p4_p5_priorities_never_fail() -> None:
    text = SPEC_KIT.replace("(Priority: P3)", "(Priority: P4)") + (
        "\n### User Story 3 - Export (Priority: P5)\n\n1. **Given** x, **When** y, **Then** z.\n"
        "\n### User Story 4 - Later (Priority: P9)\n\n1. **Given** x, **When** y, **Then** z.\n"
    )
    prd = parse_prd(text, "spec.md")
    got = [(s.id, s.priority, s.assumed) for s in prd.stories]
    assert got == [("US1", "P0", False), ("US2", "P2", False), ("US3", "P2", False),
                   ("US4", "P1", True)]  # fmt: skip
    unknown = parse_prd("## Story S1: A (P7)\n- x\n", "prd.md")
    assert (unknown.stories[0].priority, unknown.stories[0].assumed) == ("P1", True)


def test_out_of_scope_under_assumptions_and_non_goals_kept_whole() -> None:
    text = SPEC_KIT + (
        "\n## Assumptions\n\n- Users already have accounts.\n- **Out of scope**:\n"
        "  - Refunds (handled by support)\n  - CSV export\n"
        "- Mobile apps are out of scope (web only, v1).\n"
        "\n## Non-Goals\n\n1. Single sign-on (SSO):\n   - SAML\n   - OIDC\n"
    )
    prd = parse_prd(text, "spec.md")
    assert [o.text for o in prd.out_of_scope] == [
        "Refunds (handled by support)",
        "CSV export",
        "Mobile apps are out of scope (web only, v1).",
        "Single sign-on (SSO): SAML; OIDC",
    ]
    assert len(prd.ac_ids()) == 3  # no assumption became an AC


def test_nested_bullet_belongs_to_its_ac() -> None:
    prd = parse_prd("## Story S1: A (P0)\n- S1-AC1: Given x\n  - then y\n- S1-AC2: z\n", "p.md")
    assert [a.text for a in prd.stories[0].acs] == ["Given x; then y", "z"]


def test_priority_mapping_lays_over_the_dialect_table_and_unknown_labels_stay_assumed() -> None:
    from evalflow_tests.cli.test_init import SPEC_MD

    text = SPEC_MD
    plain = parse_prd(text, "spec.md")
    assert [(s.id, s.priority, s.assumed) for s in plain.stories] == [
        ("US1", "P0", False), ("US2", "P2", False), ("US3", "P2", False), ("US4", "P1", True),
    ]  # fmt: skip
    mapped = parse_prd(text, "spec.md", priority_mapping={"p4": "P1", "P7": "P0"})
    assert [(s.id, s.priority, s.assumed) for s in mapped.stories] == [
        ("US1", "P0", False), ("US2", "P1", False), ("US3", "P2", False), ("US4", "P0", False),
    ]  # fmt: skip
    # The prd dialect reads P0-P2 as themselves; a mapping can add P3 without touching them.
    prd = "## Story S1: A (P3)\n- S1-AC1: x\n## Story S2: B (P0)\n- S2-AC1: y\n"
    assert [(s.priority, s.assumed) for s in parse_prd(prd).stories] == [
        ("P1", True),
        ("P0", False),
    ]
    got = parse_prd(prd, priority_mapping={"P3": "P2"}).stories
    assert [(s.priority, s.assumed) for s in got] == [("P2", False), ("P0", False)]
