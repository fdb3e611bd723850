"""The checked-in JSON Schemas (`schemas/eval-*.schema.json`), generated from the models.

`model_json_schema()` is post-processed into River Review's shape, so a document valid for one
is valid for the other:
- `$schema` is draft 2020-12 and the root titles are River Review's;
- pydantic's per-property titles are dropped;
- an optional property accepts only its type, never `null` (absent is written as absent), while
  a required nullable one (`score`) keeps River Review's `"type": ["number", "null"]`;
- `additionalProperties: false` comes from the models' `extra="forbid"` exactly where SPEC §3
  says "no other keys"; `timestamp` carries `"format": "date-time"`.

Canonical serialisation (what the files hold, byte for byte): `render_schema(document)` =
`json.dumps(document, indent=2, sort_keys=False) + "\\n"` with the key order generated here.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from evalflow.domain.rubric.models import LedgerEntry, Rubric

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
RUBRIC_SCHEMA_FILE = "eval-rubric.schema.json"
LEDGER_ENTRY_SCHEMA_FILE = "eval-ledger-entry.schema.json"

_SUBSCHEMA_MAPS = ("properties", "$defs")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_SINGLE = ("items", "additionalProperties")
_NULL = {"type": "null"}


def _not_nullable(schema: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in schema.items() if not (k == "default" and v is None)}
    types = out.get("type")
    if isinstance(types, list) and "null" in types:
        rest_types = [t for t in types if t != "null"]
        out["type"] = rest_types[0] if len(rest_types) == 1 else rest_types
    branches = out.pop("anyOf", None)
    if branches is not None:
        rest = [b for b in branches if b != _NULL]
        if len(rest) == 1:
            return {**rest[0], **out}
        out["anyOf"] = rest
    return out


def _compact_nullable(schema: dict[str, Any]) -> dict[str, Any]:
    branches = schema.get("anyOf")
    if (
        branches
        and len(branches) == 2
        and branches[1] == _NULL
        and set(branches[0]) == {"type"}
        and isinstance(branches[0]["type"], str)
    ):
        out = {k: v for k, v in schema.items() if k != "anyOf"}
        return {"type": [branches[0]["type"], "null"], **out}
    return schema


def _tidy(schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if key in _SUBSCHEMA_MAPS:
            out[key] = {name: _tidy(sub) for name, sub in value.items()}
        elif key in _SUBSCHEMA_LISTS:
            out[key] = [_tidy(sub) for sub in value]
        elif key in _SUBSCHEMA_SINGLE and isinstance(value, dict):
            out[key] = _tidy(value)
        else:
            out[key] = value
    if "properties" in out:
        required = set(out.get("required", ()))
        out["properties"] = {
            name: sub if name in required else _not_nullable(sub)
            for name, sub in out["properties"].items()
        }
    return _compact_nullable(out)


def _document(model: type[BaseModel], title: str) -> dict[str, Any]:
    generated = _tidy(model.model_json_schema(by_alias=True, mode="validation"))
    return {"$schema": SCHEMA_DIALECT, "title": title, **generated}


def schema_documents() -> dict[str, dict[str, Any]]:
    """File name (under `schemas/`) → JSON Schema document."""
    return {
        RUBRIC_SCHEMA_FILE: _document(Rubric, "Evaluation Rubric Schema"),
        LEDGER_ENTRY_SCHEMA_FILE: _document(LedgerEntry, "Evaluation Ledger Entry"),
    }


def render_schema(document: dict[str, Any]) -> str:
    """The canonical text of a schema file."""
    return json.dumps(document, indent=2, sort_keys=False) + "\n"
