"""Arrow schemas of the table contracts, and the strict frame → Arrow conversion of a write.

Each row model in `evalflow.storage.tables` maps to one Arrow schema (`arrow_schema`):
`str` → string, `int` → int64, `float` → float64, `bool` → bool, `datetime` → timestamp (µs,
UTC), `list[X]` → list of X, a pydantic model → a struct of its fields (in order); `X | None`
is a nullable field, anything else is required. A frame is converted column by column:
pandas' values are first read as what they are, then cast only along lossless paths (int →
float, an integral float → int, null → anything), so a value that does not fit — `"3"` for an
int, `True` for a float, `2.5` for an int — is refused with the table, column, row and value
instead of being coerced. A column holding structs is validated cell by cell against its
model in pydantic's strict mode (no coercion, no unknown or missing field) before Arrow builds
it. Every part of a table thus has the same types, whichever engine reads it, even when a
column is all null or a list is empty.
"""

from __future__ import annotations

import functools
import math
from datetime import datetime
from types import NoneType, UnionType
from typing import TYPE_CHECKING, Any, Union, get_args, get_origin

import pyarrow as pa
from pydantic import BaseModel, TypeAdapter, ValidationError

from evalflow.errors import EvalflowError

if TYPE_CHECKING:
    import pandas as pd

# Parquet names a list's value field `element`; using the same name keeps a schema equal to
# the one read back from a file.
_LIST_FIELD = "element"
_SCALARS: dict[Any, pa.DataType] = {
    str: pa.string(),
    int: pa.int64(),
    float: pa.float64(),
    bool: pa.bool_(),
    datetime: pa.timestamp("us", tz="UTC"),
}


class TableContractError(EvalflowError):
    """A frame about to be written does not match its table's contract (a bug: exit 3)."""

    exit_code = 3


def _optional(annotation: Any) -> tuple[Any, bool]:
    """(the annotation without None, whether None was allowed)."""
    if get_origin(annotation) not in (Union, UnionType):
        return annotation, False
    args = [a for a in get_args(annotation) if a is not NoneType]
    if len(args) != 1:
        raise TypeError(f"a table column has one type (or it and None), not {annotation}")
    return args[0], NoneType in get_args(annotation)


def _struct_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def arrow_type(annotation: Any) -> tuple[pa.DataType, bool]:
    """(Arrow type, nullable) of a row-model annotation."""
    inner, nullable = _optional(annotation)
    if get_origin(inner) is list:
        (item,) = get_args(inner)
        return pa.list_(pa.field(_LIST_FIELD, arrow_type(item)[0])), nullable
    if _struct_model(inner):
        fields = []
        for name, field in inner.model_fields.items():
            kind, child_nullable = arrow_type(field.annotation)
            fields.append(pa.field(name, kind, nullable=child_nullable))
        return pa.struct(fields), nullable
    if inner not in _SCALARS:
        raise TypeError(f"no Arrow type for table column annotation {annotation}")
    return _SCALARS[inner], nullable


@functools.cache
def arrow_schema(model: type) -> pa.Schema:
    """The Arrow schema of a row model (fields in declaration order)."""
    fields = []
    for name, field in model.model_fields.items():
        kind, nullable = arrow_type(field.annotation)
        fields.append(pa.field(name, kind, nullable=nullable))
    return pa.schema(fields)


_DUCKDB_SCALARS = {
    pa.string(): "VARCHAR",
    pa.int64(): "BIGINT",
    pa.float64(): "DOUBLE",
    pa.bool_(): "BOOLEAN",
    pa.timestamp("us", tz="UTC"): "TIMESTAMP WITH TIME ZONE",
}


def duckdb_type(kind: pa.DataType) -> str:
    """The DuckDB type a column of this Arrow type reads as (what `DESCRIBE` prints)."""
    if pa.types.is_list(kind):
        return duckdb_type(kind.value_type) + "[]"
    if pa.types.is_struct(kind):
        return f"STRUCT({', '.join(f'{_field_name(f.name)} {duckdb_type(f.type)}' for f in kind)})"
    return _DUCKDB_SCALARS[kind]


@functools.cache
def _keywords() -> frozenset[str]:
    import duckdb  # only to spell a struct type as DuckDB does; readers never need it

    return frozenset(
        name for (name,) in duckdb.sql("SELECT keyword_name FROM duckdb_keywords()").fetchall()
    )


def _field_name(name: str) -> str:
    """A struct field's name as DuckDB's DESCRIBE prints it: keywords (`quote`, `scope`) in
    double quotes, though `e.quote` works unquoted in a query."""
    return f'"{name}"' if name in _keywords() else name


def holds_structs(kind: pa.DataType) -> bool:
    """Whether a column of this type holds structs (at any depth)."""
    if pa.types.is_list(kind):
        return holds_structs(kind.value_type)
    return pa.types.is_struct(kind)


def _plain(value: Any) -> Any:
    """A cell as plain Python: a list read back from Parquet is a numpy array, its numbers
    numpy scalars; strict validation wants what a writer builds (lists, ints, strs)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        listed = value.tolist() if hasattr(value, "tolist") else value
        return [_plain(v) for v in listed] if isinstance(listed, (list, tuple)) else listed
    return value


def _structs(values: list[Any] | pd.Series, target: pa.DataType, adapter: TypeAdapter) -> pa.Array:
    """Struct-holding `values` as `target`, each cell validated strictly by `adapter`."""
    cells = []
    for value in list(values):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            cells.append(None)
            continue
        try:
            cells.append(adapter.dump_python(adapter.validate_python(_plain(value), strict=True)))
        except ValidationError as exc:
            raise pa.ArrowInvalid(str(exc).splitlines()[0]) from None
    return pa.array(cells, type=target)


def _fits(source: pa.DataType, target: pa.DataType) -> bool:
    """Whether values read as `source` may be cast to `target` without changing meaning
    (a float → int cast still fails later when a value is not integral)."""
    if pa.types.is_null(source) or source == target:
        return True
    if pa.types.is_string(target):
        return pa.types.is_string(source) or pa.types.is_large_string(source)
    if pa.types.is_integer(target) or pa.types.is_floating(target):
        return pa.types.is_integer(source) or pa.types.is_floating(source)
    if pa.types.is_timestamp(target):
        return pa.types.is_timestamp(source) and source.tz is not None
    if pa.types.is_list(target):
        return (pa.types.is_list(source) or pa.types.is_large_list(source)) and _fits(
            source.value_type, target.value_type
        )
    return False


def _convert(
    values: list[Any] | pd.Series, target: pa.DataType, adapter: TypeAdapter | None = None
) -> pa.Array:
    """`values` as `target`; ArrowInvalid/ArrowTypeError when they do not fit. A struct-holding
    target needs the `adapter` of its annotation."""
    if adapter is not None and holds_structs(target):
        return _structs(values, target, adapter)
    inferred = pa.array(values, from_pandas=True)
    if inferred.null_count == len(inferred):
        # Only nulls (pandas holds a missing string as NaN, a float): nothing to coerce.
        return pa.nulls(len(inferred), target)
    if not _fits(inferred.type, target):
        raise pa.ArrowTypeError(f"{inferred.type} is not {target}")
    return inferred.cast(target)  # safe: 2.0 → 2 passes, 2.5 → int fails


def _is_null(value: Any) -> bool:
    # Only the error path asks; the frame's owner has pandas loaded already.
    import pandas as pd

    return (
        value is None
        or value is pd.NA
        or value is pd.NaT
        or (isinstance(value, float) and math.isnan(value))
    )


def _misfit(
    table: str, column: str, series: pd.Series, field: pa.Field, adapter: TypeAdapter | None
) -> TableContractError:
    """The error naming the first value of `series` that does not fit `field`."""
    for row, value in enumerate(series.tolist()):
        if _is_null(value):
            continue
        try:
            _convert([value], field.type, adapter)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            shown = repr(value)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            return TableContractError(
                f"table {table!r} column {column!r} row {row}: {shown} "
                f"({type(value).__name__}) does not fit {field.type}",
                fix="fix the asset that produced it, or the contract in evalflow/storage/tables.py",
            )
    return TableContractError(
        f"table {table!r} column {column!r}: {series.dtype} values do not fit {field.type}",
        fix="fix the asset that produced it, or the contract in evalflow/storage/tables.py",
    )


@functools.cache
def adapters(model: type) -> dict[str, TypeAdapter]:
    """column → the strict validator of its cells, for the struct-holding columns of a model."""
    return {
        name: TypeAdapter(_optional(field.annotation)[0])
        for name, field in model.model_fields.items()
        if holds_structs(arrow_type(field.annotation)[0])
    }


def to_arrow(table: str, frame: pd.DataFrame, schema: pa.Schema, model: type) -> pa.Table:
    """`frame` (columns already checked against the contract) as an Arrow table of `schema`,
    the Arrow schema of the row `model`."""
    arrays = []
    nested = adapters(model)
    for field in schema:
        series = frame[field.name]
        adapter = nested.get(field.name)
        try:
            array = _convert(series, field.type, adapter)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            raise _misfit(table, field.name, series, field, adapter) from None
        if not field.nullable and array.null_count:
            raise TableContractError(
                f"table {table!r} column {field.name!r} has nulls but the contract forbids them",
                fix="fix the asset that produced it",
            )
        arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=schema)


def inferred(frame: pd.DataFrame) -> pa.Table:
    """A frame without a contract as Arrow, its types inferred; strings are plain `string`,
    the type a hive partition key is read as, so `run_key` never conflicts with it."""
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    schema = pa.schema(
        f.with_type(pa.string()) if pa.types.is_large_string(f.type) else f for f in arrow.schema
    )
    return arrow.cast(schema)
