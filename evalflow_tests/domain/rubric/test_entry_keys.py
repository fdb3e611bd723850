"""The `<kind>:<name>` convention of ledger descriptions."""

from __future__ import annotations

import pytest

from evalflow.domain.rubric.entry_keys import format_entry_key, parse_entry_key
from evalflow.errors import InputError


def test_framework_run_key_carries_the_run_key() -> None:
    parsed = parse_entry_key(format_entry_key("framework_run", "demo.spec-kit.r1"))
    assert (parsed.key, parsed.kind, parsed.name) == (
        "framework_run:demo.spec-kit.r1",
        "framework_run",
        "demo.spec-kit.r1",
    )
    assert parsed.run_key == "demo.spec-kit.r1"


@pytest.mark.parametrize("kind", ["judge_calibration", "plugin_score", "retrieval_eval"])
def test_other_kinds_have_no_run_key(kind: str) -> None:
    parsed = parse_entry_key(f"{kind}:x:y")
    assert (parsed.kind, parsed.name, parsed.run_key) == (kind, "x:y", None)


@pytest.mark.parametrize("description", [None, "", "nightly run", "unknown:thing", "review_eval:"])
def test_foreign_descriptions_group_by_text_without_kind(description: str | None) -> None:
    parsed = parse_entry_key(description)
    assert parsed.key == (description or "")
    assert parsed.kind is None


def test_format_rejects_unknown_kinds_and_bad_names() -> None:
    with pytest.raises(InputError, match="unknown evaluation kind"):
        format_entry_key("nightly", "x")
    with pytest.raises(InputError, match="one line"):
        format_entry_key("review_eval", "a\nb")
