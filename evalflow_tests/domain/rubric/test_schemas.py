"""The checked-in schemas are the generated ones and keep River Review's contract."""

from __future__ import annotations

from pathlib import Path

from evalflow.domain.rubric.schemas import (
    LEDGER_ENTRY_SCHEMA_FILE,
    RUBRIC_SCHEMA_FILE,
    SCHEMA_DIALECT,
    render_schema,
    schema_documents,
)
from evalflow.io.ledger import SCHEMAS_DIR


def test_checked_in_schemas_are_current() -> None:
    for name, document in schema_documents().items():
        checked_in = (SCHEMAS_DIR / name).read_text(encoding="utf-8")
        assert checked_in == render_schema(document), (
            f"schemas/{name} is stale: run `evalflow schemas write`"
        )


def test_schemas_are_draft_2020_12() -> None:
    assert all(d["$schema"] == SCHEMA_DIALECT for d in schema_documents().values())


def test_rubric_schema_contract() -> None:
    schema = schema_documents()[RUBRIC_SCHEMA_FILE]
    assert set(schema["properties"]) == {"severity", "phase", "dimensions"}
    assert "required" not in schema
    dimension = schema["$defs"]["Dimension"]
    assert dimension["additionalProperties"] is False
    assert dimension["required"] == ["id", "name", "weight", "scoringMethod"]
    assert dimension["properties"]["scoringMethod"]["enum"] == ["binary", "ratio", "manual"]
    assert dimension["properties"]["direction"]["default"] == "higher_is_better"
    assert dimension["properties"]["automatable"]["default"] is False
    assert dimension["properties"]["description"] == {"type": "string"}


def test_ledger_entry_schema_contract() -> None:
    schema = schema_documents()[LEDGER_ENTRY_SCHEMA_FILE]
    assert schema["required"] == [
        "version",
        "timestamp",
        "commit",
        "branch",
        "scores",
        "results",
        "status",
    ]
    assert schema["properties"]["timestamp"]["format"] == "date-time"
    assert schema["properties"]["scores"]["additionalProperties"] == {"type": "number"}
    assert schema["properties"]["description"] == {"type": "string"}
    score_item = schema["$defs"]["DimensionScore"]
    assert score_item["additionalProperties"] is False
    assert score_item["required"] == ["dimensionId", "score"]
    assert score_item["properties"]["score"] == {"type": ["number", "null"]}
    assert set(score_item["properties"]) == {"dimensionId", "score", "scoringMethod", "details"}
    assert len(schema["$defs"]["Failure"]["properties"]["category"]["enum"]) == 9


def test_render_is_two_space_json_with_trailing_newline() -> None:
    text = render_schema({"b": 1, "a": [1]})
    assert text == '{\n  "b": 1,\n  "a": [\n    1\n  ]\n}\n'
    assert Path(SCHEMAS_DIR).name == "schemas"
