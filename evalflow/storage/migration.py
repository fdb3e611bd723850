"""Parts written under an older table contract, read as the current one.

A warehouse outlives evalflow versions, so a part may predate a contract change (docs/tables.md,
"Migration"). `upgrade` turns such a part, as Arrow, into its table's current schema:

- a column the part lacks: `benchmark` and `framework` from its `run_key`
  (`<benchmark>.<framework>.<run>`), `judge_name` from its `judge_id` (`judge_name_of`), any
  other as NULL (unmeasured then, never 0);
- a column once stored as text that is now typed: the JSON lists of `evidence`, `searches`,
  `usage`, the JSON objects `read_blobs` and `scores` (name → score), the comma-separated
  `flags`, `isolation_missing`, `anti_patterns`, `confidence_basis`, `check_ids`,
  `failing_p0_acs`, `categories` and `keywords` become lists (of structs), the ISO text of
  `ran_at` a UTC timestamp.

A part already in the current schema is returned as it is (one schema comparison), so the
conversion costs nothing once a warehouse is current. `evalflow migrate` rewrites old parts
with it, so SQL clients reading the Parquet files directly see one type per column too.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from evalflow.storage.tables import TABLES, named_scores

if TYPE_CHECKING:
    from evalflow.storage.warehouse import Warehouse

RUN_KEY_PARTS = {"benchmark": 0, "framework": 1}


def judge_name_of(judge_id: str) -> str:
    """The judge name (`--judge`) behind a stored `judge_id`: its backend (`anthropic:<model>`
    → anthropic, `labels:<file>` → labels); a panel's members' backends
    (`panel:anthropic:<m>+openai:<m>` → `panel:anthropic,openai`)."""
    if judge_id.startswith("panel:"):
        members = judge_id.removeprefix("panel:").split("+")
        return "panel:" + ",".join(m.split(":", 1)[0] for m in members)
    return judge_id.split(":", 1)[0]


def _evidence(text: str) -> list[dict[str, Any]]:
    # Before `kind` was a field, a cited line range had none (a run probe had `run`).
    return [{"kind": "lines", **item} for item in json.loads(text)]


def _read_blobs(text: str) -> list[dict[str, str]]:
    return [{"path": path, "blob": blob} for path, blob in sorted(json.loads(text).items())]


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _timestamp(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


# column → how its old text becomes the current value (the same name in every table).
_DECODE: dict[str, Callable[[str], Any]] = {
    "evidence": _evidence,
    "searches": json.loads,
    "usage": json.loads,
    "read_blobs": _read_blobs,
    "scores": lambda text: named_scores(json.loads(text)),
    "flags": _names,
    "isolation_missing": _names,
    "anti_patterns": _names,
    "confidence_basis": _names,
    "check_ids": _names,
    "failing_p0_acs": _names,
    "categories": _names,
    "keywords": _names,
    "ran_at": _timestamp,
}


def current(table: str, schema: pa.Schema) -> bool:
    """Whether a part of this schema needs no upgrade (a table without a contract never does)."""
    spec = TABLES.get(table)
    return spec is None or schema.equals(spec.arrow_schema)


def upgrade(table: str, part: pa.Table) -> pa.Table:
    """`part` in its table's current contract schema; columns outside the contract (since
    removed) are kept after it."""
    if current(table, part.schema):
        return part
    target = TABLES[table].arrow_schema
    columns = []
    for field in target:
        if field.name not in part.column_names:
            columns.append(_missing(part, field))
            continue
        column = part.column(field.name)
        if column.type == field.type:
            columns.append(column)
        elif pa.types.is_string(column.type) and field.name in _DECODE:
            decode = _DECODE[field.name]
            values = [None if v is None else decode(v) for v in column.to_pylist()]
            columns.append(pa.array(values, type=field.type))
        else:
            columns.append(column.cast(field.type))
    # A required column that NULL had to fill (unmeasured then) becomes nullable in this part
    # only; a part that upgrades whole is in exactly the contract's schema.
    fields = [
        f if c.null_count == 0 else f.with_nullable(True)
        for f, c in zip(target, columns, strict=True)
    ]
    extra = [name for name in part.column_names if name not in target.names]
    schema = pa.schema([*fields, *part.select(extra).schema])
    return pa.Table.from_arrays([*columns, *(part.column(n) for n in extra)], schema=schema)


def _missing(part: pa.Table, field: pa.Field) -> pa.Array:
    if field.name in RUN_KEY_PARTS and "run_key" in part.column_names:
        index = RUN_KEY_PARTS[field.name]
        keys = part.column("run_key").to_pylist()
        return pa.array([None if k is None else k.split(".")[index] for k in keys], pa.string())
    # evaluation_history rows named only their judge's id before `final_drift` paired by judge
    # (a judge-dependent table's legacy part takes its run manifest's judge: the warehouse).
    if field.name == "judge_name" and "judge_id" in part.column_names:
        ids = part.column("judge_id").to_pylist()
        return pa.array([None if i is None else judge_name_of(i) for i in ids], pa.string())
    return pa.nulls(len(part), field.type)


def migrate(warehouse: Warehouse) -> dict[str, int]:
    """Rewrite every part not in its table's current schema as `upgrade` reads it (same rows,
    same values), each atomically; returns table → parts rewritten. A table with a rewritten
    part loses its compacted copy (a cache of the old parts; the next refresh rebuilds it).
    An append-only part (`evaluation_history`) is rewritten too: its row stays the same."""
    import pyarrow.parquet as pq

    # Here, not at the top: the warehouse reads every part through `upgrade`.
    from evalflow.storage.warehouse import COMPACT_DIR

    fs, _ = warehouse._fs()
    rewritten: dict[str, int] = {}
    for table, parts in warehouse.table_parts().items():
        for path in parts:
            if current(table, pq.read_schema(path, filesystem=fs)):
                continue
            with fs.open_input_file(path) as handle:
                part = pq.read_table(handle)
            warehouse._put(fs, path, upgrade(table, part))
            rewritten[table] = rewritten.get(table, 0) + 1
        if table in rewritten and warehouse.is_local:
            shutil.rmtree(warehouse.workdir / table / COMPACT_DIR, ignore_errors=True)
    return rewritten
