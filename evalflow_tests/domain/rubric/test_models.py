"""The rubric and ledger-entry models read and write River Review's camelCase documents."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evalflow.domain.rubric.models import (
    Dimension,
    DimensionScore,
    LedgerEntry,
    is_rfc3339_datetime,
)
from evalflow_tests.domain.rubric.helpers import entry_document


def test_entry_round_trips_in_camel_case_and_keeps_unknown_top_level_keys() -> None:
    document = entry_document(snapshots={"severity": {"midstream": {"major": 1}}})
    assert LedgerEntry.model_validate(document).to_document() == document


def test_null_score_is_written_but_absent_optionals_are_not() -> None:
    item = DimensionScore(dimension_id="actionability", score=None)
    assert item.to_document() == {"dimensionId": "actionability", "score": None}


def test_dimension_score_rejects_the_legacy_method_key() -> None:
    with pytest.raises(ValidationError, match="method"):
        DimensionScore.model_validate({"dimensionId": "a", "score": 1, "method": "ratio"})


def test_dimension_score_requires_the_score_key() -> None:
    with pytest.raises(ValidationError, match="score"):
        DimensionScore.model_validate({"dimensionId": "a"})


def test_dimension_rejects_unknown_keys_and_methods() -> None:
    base = {"id": "a", "name": "A", "weight": 1.0, "scoringMethod": "ratio"}
    assert Dimension.model_validate(base).automatable is False
    with pytest.raises(ValidationError):
        Dimension.model_validate({**base, "threshold": 0.5})
    with pytest.raises(ValidationError):
        Dimension.model_validate({**base, "scoringMethod": "likert"})
    with pytest.raises(ValidationError):
        Dimension.model_validate({**base, "weight": 1.5})


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("2025-01-31T12:00:00Z", True),
        ("2025-01-31T12:00:00.123+09:00", True),
        ("2025-01-31t12:00:00z", True),
        ("2025-01-31T12:00:00", False),
        ("2025-01-31", False),
        ("2025-13-31T12:00:00Z", False),
        (1700000000, False),
    ],
)
def test_rfc3339_date_time(text: object, valid: bool) -> None:
    assert is_rfc3339_datetime(text) is valid


def test_entry_rejects_a_timestamp_without_offset() -> None:
    with pytest.raises(ValidationError, match="RFC 3339"):
        LedgerEntry.model_validate(entry_document(timestamp="2025-01-31 12:00:00"))
