"""Pydantic models of River Review's two file formats: the rubric (`docs/eval/rubric.yaml`) and
one ledger entry (one line of the ledger JSONL).

Python attributes are snake_case; the files keep River Review's camelCase names (aliases), so
read with `model_validate(document)` and write with `to_document()`. Extra keys are forbidden
exactly where SPEC §3 says "no other keys" (a rubric dimension, a dimension score); elsewhere
unknown keys are kept, because River Review's own schemas allow them and its ledger lines
carry more top-level keys than the required ones.

An optional field that is `None` is absent from the written document; `score` is the one field
where `null` is a value (a manual dimension not yet reviewed), so it is always written.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)
from pydantic.alias_generators import to_camel

ScoringMethod = Literal["binary", "ratio", "manual"]
Direction = Literal["higher_is_better", "lower_is_better"]
Status = Literal["pass", "fail"]
FailureSeverity = Literal["info", "minor", "major", "critical"]
FailureCategory = Literal[
    "routing_miss",
    "phase_miss",
    "missing_context",
    "missing_evidence",
    "weak_explanation",
    "false_positive",
    "severity_mismatch",
    "verify_gap",
    "tool_gap",
]

SCORING_METHODS: tuple[str, ...] = get_args(ScoringMethod)
DIRECTIONS: tuple[str, ...] = get_args(Direction)
FAILURE_CATEGORIES: tuple[str, ...] = get_args(FailureCategory)
DEFAULT_DIRECTION: Direction = "higher_is_better"

_RFC3339 = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$",
)


def is_rfc3339_datetime(text: object) -> bool:
    """True for an RFC 3339 `date-time` (JSON Schema's format): date, time and an offset."""
    if not isinstance(text, str) or not _RFC3339.match(text):
        return False
    try:
        datetime.fromisoformat(text.upper())
    except ValueError:
        return False
    return True


class _FileModel(BaseModel):
    """Shared config: camelCase aliases, no NaN/inf (JSON cannot carry them), immutable."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=True,
        allow_inf_nan=False,
        frozen=True,
    )

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name, field in type(self).model_fields.items():
            if not field.is_required() and getattr(self, name) is None:
                data.pop(name, None)
                if field.alias:
                    data.pop(field.alias, None)
        return data

    def to_document(self) -> dict[str, Any]:
        """The JSON-ready document in the public (camelCase) format."""
        return self.model_dump(mode="json", by_alias=True)


class SeverityLevel(_FileModel):
    """One severity label of the rubric: what it means and what the pipeline does about it."""

    model_config = ConfigDict(extra="allow")

    description: str
    action: str | None = None


class PhaseDefinition(_FileModel):
    """One review phase of the rubric."""

    model_config = ConfigDict(extra="allow")

    description: str


class Dimension(_FileModel):
    """One scored dimension of the rubric."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    name: str
    weight: float = Field(ge=0, le=1)
    scoring_method: ScoringMethod
    description: str | None = None
    direction: Direction = DEFAULT_DIRECTION
    automatable: bool = False


class Rubric(_FileModel):
    """The rubric file: severity labels, review phases and weighted dimensions."""

    model_config = ConfigDict(extra="allow")

    severity: dict[str, SeverityLevel] | None = None
    phase: dict[str, PhaseDefinition] | None = None
    dimensions: list[Dimension] = Field(default_factory=list)

    def dimension(self, dimension_id: str) -> Dimension | None:
        """The dimension with this id, or None."""
        return next((d for d in self.dimensions if d.id == dimension_id), None)


class ResultItem(_FileModel):
    """One named check of an evaluation (for review fixtures: one case)."""

    model_config = ConfigDict(extra="allow")

    name: str
    passed: bool = Field(alias="pass")
    errors: list[str] | None = None


class Failure(_FileModel):
    """One categorised failure, River Review's `eval-failure` shape."""

    model_config = ConfigDict(extra="allow")

    category: FailureCategory
    case_ref: str
    description: str
    eval_type: str | None = None
    severity: FailureSeverity | None = None


class DimensionScore(_FileModel):
    """One dimension's score in a ledger entry; `score` is null while a manual one is pending."""

    model_config = ConfigDict(extra="forbid")

    dimension_id: str
    score: float | None
    scoring_method: ScoringMethod | None = None
    details: str | None = None


class LedgerEntry(_FileModel):
    """One evaluation, appended as one JSON line to the ledger."""

    model_config = ConfigDict(extra="allow")

    version: str
    timestamp: str = Field(json_schema_extra={"format": "date-time"})
    commit: str
    branch: str
    scores: dict[str, float]
    results: list[ResultItem]
    status: Status
    description: str | None = None
    failures: list[Failure] | None = None
    dimension_scores: list[DimensionScore] | None = None

    @field_validator("timestamp")
    @classmethod
    def _rfc3339(cls, value: str) -> str:
        if not is_rfc3339_datetime(value):
            raise ValueError("timestamp must be an RFC 3339 date-time, e.g. 2025-01-31T12:00:00Z")
        return value
