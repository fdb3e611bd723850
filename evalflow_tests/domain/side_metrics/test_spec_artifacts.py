from __future__ import annotations

from evalflow.domain.side_metrics.spec_artifacts import normalise_key, parse_spec_artifacts
from evalflow_tests.domain.side_metrics.fixtures import SPEC_FILES


def _by_id(files: dict[str, str]) -> dict:
    return {i.item_id: i for i in parse_spec_artifacts(files).items}


def test_table_rows_list_items_and_tasks_with_ids_and_lines() -> None:
    items = _by_id(SPEC_FILES)
    assert list(items) == [
        "FR-001",
        "FR-002",
        "FR-003",
        "spec.md:19",
        "spec.md:20",
        "spec.md:26",
        "T001",
        "T002",
        "T003",
    ]
    assert items["FR-002"].line == 14
    assert items["FR-002"].ref == "specs/mini/spec.md:14"
    assert items["FR-002"].keys == ("FR2",)
    assert items["FR-003"].text == "FR-003 | Accounts MUST support team seats."
    assert items["spec.md:26"].heading_refs == ("FR2",)
    assert items["T002"].checked is False and items["T001"].checked is True
    assert items["T001"].spec_refs == ("FR1",)


def test_excluded_sections_hold_no_items() -> None:
    items = parse_spec_artifacts(SPEC_FILES).items
    assert not any("Clarifications" in i.section or "Deferred" in i.section for i in items)


def test_story_numbered_items_kiro_refs_and_bmad_acs() -> None:
    spec = """# Requirements

### Requirement 2: Webhooks

#### Acceptance Criteria

1. WHEN a webhook arrives THEN the system SHALL verify it.
2. IF the type is unknown THEN the system SHALL ignore it.
"""
    tasks = """# Plan

- [ ] 4. Webhooks
  - [x] 4.1 Verify signatures
    - _Requirements: 2.1_
  - [ ] 4.2 Ignore unknown types
    - _Requirements: 2.2_

## Story 1.1 Sign-up

- [x] Task 1: Route (AC: 1, 2)
"""
    items = _by_id({"k/spec.md": spec, "k/tasks.md": tasks})
    assert items["R2.2"].keys == ("R2.2", "2.2")
    assert items["T4.1"].parent_id == "T4"
    assert items["T4.1"].spec_refs == ("2.1",)
    assert items["T4.2"].text == "4.2 Ignore unknown types _Requirements: 2.2_"
    assert items["S1.1/T1"].spec_refs == ("S1.1.1", "S1.1.2")


def test_ranges_expand_and_keys_normalise() -> None:
    items = _by_id({"tasks.md": "- [x] T008 Start (FR-001..FR-003, US1)\n"})
    assert items["T008"].spec_refs == ("FR1", "FR2", "FR3", "US1")
    assert normalise_key("FR-002") == normalise_key("FR2") == "FR2"
    assert normalise_key("s1.1/t1") == "S1.1/T1"


def test_no_files_means_no_artifacts() -> None:
    artifacts = parse_spec_artifacts({})
    assert not artifacts.present and artifacts.items == ()
