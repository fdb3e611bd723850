"""The DuckDB read side: the analyst catalog file and the locked-down `evalflow query`.

`<workdir>/evalflow.duckdb` holds one view per table for any DuckDB client, plus the derived
view `final_drift` (`evalflow.storage.history`). Views glob the table's Parquet parts, so new
partitions show up without touching the catalog; a refresh writes a new file and renames it
into place, so an analyst holding a connection to the old one never blocks a run.

Paths: DuckDB resolves a relative path in a view against the working directory of whichever
client opens the file (its `file_search_path` is a per-connection setting the file cannot
carry), so relative views would work only from one directory. Views therefore carry absolute
paths, rewritten on every refresh — each run and `evalflow catalog` — so after moving a
warehouse, `evalflow catalog --warehouse NEW` makes the file right again (`evalflow query`
never needs it). Views keep `hive_partitioning = false`: every per-run part carries `run_key`
as a string column equal to its directory key, so the directory adds nothing, and DuckDB's
key type guessing stays out of the way; `union_by_name` still reads parts written before a
contract change.

`evalflow query` does not use that file: `connect` builds an in-memory database with every
table and then removes DuckDB's own access to files, extensions and settings, so an
analyst's SQL can read the tables and nothing else. A local warehouse is read by DuckDB's
own Parquet reader with the views' `read_parquet` options (no pyarrow, no pandas: the light
command stays light). A view reads its files when queried — after the lockdown — and opening
the table directories to it (`allowed_directories`) would also let `COPY … TO` overwrite a
part, so the tables the SQL reads (DuckDB's parser names them: joins, subqueries, CTE
bodies, `query_table`) are copied into memory before the lockdown; every other table is a
view over its first part, whose columns DuckDB bound at creation, so `SHOW TABLES` and
`information_schema` list it, and reading it some way the parser cannot see fails loudly (a
permission error), never with an empty answer; SQL the parser cannot name tables for copies
every table. A table with a compacted file (`evalflow.storage.compaction`, rebuilt by every
refresh) is copied from it plus the parts written since, so a read of 1,000 runs opens a
few files, not 1,000. The copy costs time and memory in proportion to what the SQL reads, and a
table the SQL does not read costs one directory listing, not a listing and a schema read
per part (`SELECT 1` stays flat as runs accumulate). A warehouse URI (`s3://…`,
`file://…`) is read through `pyarrow.fs` as Arrow datasets, since DuckDB would need its
httpfs extension, which the lockdown forbids.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from evalflow.errors import InputError
from evalflow.storage import compaction
from evalflow.storage.arrow import duckdb_type
from evalflow.storage.history import DRIFT_VIEW, HISTORY_TABLE, final_drift_sql
from evalflow.storage.migration import current
from evalflow.storage.tables import TABLES
from evalflow.storage.warehouse import COMPACT_DIR, Warehouse

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.fs as pafs

CATALOG_FILE = "evalflow.duckdb"
# How every table is read, in the catalog's views and by `evalflow query`: see the docstring.
_READ_OPTIONS = "union_by_name = true, hive_partitioning = false"


def catalog_path(warehouse: Warehouse) -> Path:
    return warehouse.workdir / CATALOG_FILE


def _view_sql(warehouse: Warehouse, table: str) -> str:
    # DuckDB reads local paths and s3:// (its httpfs extension) but not file:// URIs; a local
    # path is made absolute because DuckDB resolves a relative one against the reader's cwd.
    if warehouse.is_local:
        folder = (warehouse.workdir / table).as_posix()
    else:
        folder = warehouse.table_dir(table).removeprefix("file://")
    return f'CREATE VIEW "{table}" AS SELECT * FROM {_read_parquet(f"{folder}/[!_]*/*.parquet")}'


def _read_parquet(files: str | list[str]) -> str:
    """`read_parquet(…)` over a glob or a list of files, with `_READ_OPTIONS`."""

    def literal(path: str) -> str:
        return "'" + path.replace("'", "''") + "'"

    source = literal(files) if isinstance(files, str) else f"[{', '.join(map(literal, files))}]"
    return f"read_parquet({source}, {_READ_OPTIONS})"


def refresh_catalog(warehouse: Warehouse) -> list[str]:
    """Compact the warehouse's per-run tables (`compaction.compact`), then write a fresh
    catalog with a view per table and swap it in; returns the table names.

    The new file is built under a private name and renamed over the old one, so a run never
    needs the lock an analyst's connection (read-only or read-write) holds on the current
    file: that connection keeps reading the file it opened, the next one sees the new views.
    """
    compaction.compact(warehouse)
    tables = warehouse.tables()
    path = catalog_path(warehouse)
    remote = not warehouse.is_local and not warehouse.root.startswith("file://")
    if remote and not _httpfs_installed():
        raise CatalogUnavailableError(
            "the DuckDB catalog file was not written: its views read the object store through "
            "DuckDB's httpfs extension, which is not installed here",
            where=str(path),
            fix="run `INSTALL httpfs` once in DuckDB on this host (it downloads the extension); "
            "`evalflow query` and `leaderboard` read the warehouse without it",
        )
    temp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with duckdb.connect(str(temp)) as con:
            for table in tables:
                con.execute(_view_sql(warehouse, table))
            _derived_views(con, tables)
        # A read-write client killed mid-session leaves `<catalog>.wal`; it belongs to the
        # file being replaced, and DuckDB would replay it into the new one ("WAL does not
        # match database file") for every later client. It goes with its file.
        path.with_name(path.name + ".wal").unlink(missing_ok=True)
        os.replace(temp, path)
    except (duckdb.Error, OSError) as exc:
        raise InputError(
            f"cannot write the DuckDB catalog ({str(exc).splitlines()[0]})",
            where=str(path),
            fix="check that the warehouse's work directory is writable, then rerun",
        ) from exc
    finally:
        temp.unlink(missing_ok=True)
        temp.with_name(temp.name + ".wal").unlink(missing_ok=True)
    return tables


class CatalogUnavailableError(InputError):
    """The catalog file cannot be written for a reason that leaves every table stored and
    readable through evalflow (an object-store warehouse on a host without httpfs)."""


def _httpfs_installed() -> bool:
    """Whether DuckDB can load httpfs without downloading it (never installs anything)."""
    with duckdb.connect(config={"autoinstall_known_extensions": False}) as con:
        try:
            con.execute("LOAD httpfs")
        except duckdb.Error:
            return False
    return True


def _derived_views(con: duckdb.DuckDBPyConnection, tables: list[str]) -> None:
    if HISTORY_TABLE in tables:
        # The catalog file's view reads the parts as they are: older ones lack `judge_name`.
        described = con.execute(f'DESCRIBE "{HISTORY_TABLE}"').fetchall()
        names_judge = any(row[0] == "judge_name" for row in described)
        con.execute(f'CREATE VIEW "{DRIFT_VIEW}" AS {final_drift_sql(names_judge=names_judge)}')


# Settings of the analyst connection, applied after the tables are loaded. The tables live in
# the in-memory database, so DuckDB itself needs no file access afterwards: with external
# access off and no allowed directories it cannot read a host file, write one (COPY TO,
# EXPORT), attach a database file or install/load an extension; spilling is off so no temp
# directory is writable either; the lock refuses any SET that would undo this.
_LOCKDOWN = (
    "SET temp_directory = ''",
    "SET enable_external_access = false",
    "SET lock_configuration = true",
)
_NO_EXTENSIONS = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
    "python_enable_replacements": False,
}


def _unreadable(table: str, parts: list[str], exc: Exception) -> InputError:
    return InputError(
        f"table {table!r} cannot be read ({str(exc).splitlines()[0]})",
        where=parts[0].rsplit("/", 2)[0],
        fix="re-materialise the runs whose parts disagree, or remove a corrupt part",
    )


def _load(con: duckdb.DuckDBPyConnection, table: str, parts: list[str], *, copy: bool) -> None:
    """One local table's parts as a table copied into memory, or as a view over the files
    (`union_by_name` unifies parts written before a contract change: missing columns null,
    int widened to float)."""
    kind = "TABLE" if copy else "VIEW"
    try:
        con.execute(f'CREATE {kind} "{table}" AS SELECT * FROM {_read_parquet(parts)}')
    except duckdb.Error as exc:
        raise _unreadable(table, parts, exc) from exc


def _copy(
    con: duckdb.DuckDBPyConnection,
    table: str,
    warehouse: Warehouse,
    parts: list[str] | None = None,
) -> None:
    """A local table copied into memory, in its contract's types: by DuckDB from the files
    when they have them, else (parts written by an older evalflow: JSON text, missing
    columns) from the parts upgraded in Python (`migration.upgrade`)."""
    failure = None
    try:
        _copy_files(con, table, warehouse, parts)
        if _typed(con, table):
            return
    except InputError as exc:
        # Parts of two schemas, or a corrupt part (then DuckDB's error is the one reported).
        if table not in TABLES:
            raise
        failure = exc
    con.execute(f'DROP TABLE IF EXISTS "{table}"')
    try:
        _copy_upgraded(con, table, warehouse)
    except InputError:
        if failure is not None:
            raise failure from None
        raise


def _typed(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    """Whether the in-memory `table` has its contract's columns and types."""
    if (spec := TABLES.get(table)) is None:
        return True
    described = {name: kind for name, kind, *_ in con.execute(f'DESCRIBE "{table}"').fetchall()}
    return all(described.get(f.name) == duckdb_type(f.type) for f in spec.arrow_schema)


def _copy_upgraded(con: duckdb.DuckDBPyConnection, table: str, warehouse: Warehouse) -> None:
    upgraded = warehouse.read_arrow(table)
    con.register("_evalflow_upgraded", upgraded)
    try:
        con.execute(f'CREATE TABLE "{table}" AS SELECT * FROM _evalflow_upgraded')
    finally:
        con.unregister("_evalflow_upgraded")


def _copy_files(
    con: duckdb.DuckDBPyConnection,
    table: str,
    warehouse: Warehouse,
    parts: list[str] | None = None,
) -> None:
    """A local table copied into memory: from its compacted file and the parts written since
    when it has one, else from all of its `parts` (listed here unless given)."""
    if (rows := compaction.source(warehouse, table)) is None:
        _load(con, table, parts if parts is not None else warehouse.parts(table), copy=True)
        return
    try:
        con.execute(f'CREATE TABLE "{table}" AS {rows}')
    except duckdb.Error as exc:
        where = f"{warehouse.workdir / table}/{COMPACT_DIR}/{compaction.MANIFEST}"
        raise _unreadable(table, [where], exc) from exc


def _reads(sql: str) -> set[str] | None:
    """The lower-cased names of the tables and views `sql` reads, by DuckDB's parser; None
    when it does not parse (running it reports the syntax error) or is refused."""
    # Naming the tables plans the statement, and planning `EXPORT DATABASE` creates its
    # directory: the parser's database is locked down like the analyst's.
    parser = duckdb.connect(config=_NO_EXTENSIONS)
    try:
        for statement in _LOCKDOWN:
            parser.execute(statement)
        return {
            name.lower()
            for statement in parser.extract_statements(sql)
            for name in parser.get_table_names(statement.query)
        }
    except duckdb.Error:
        return None
    finally:
        parser.close()


def _dataset(
    fs: pafs.FileSystem, table: str, parts: list[str], warehouse: Warehouse
) -> ds.Dataset | pa.Table:
    """One remote table's parts as one Arrow dataset; their schemas are unified the way
    DuckDB's `union_by_name` would (missing columns null, int widened to float, null-typed
    lists). Parts written by an older evalflow make it a table of the parts upgraded in
    Python (`migration.upgrade`)."""
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    try:
        schemas = [pq.read_schema(path, filesystem=fs) for path in parts]
        if not all(current(table, schema) for schema in schemas):
            return warehouse.read_arrow(table)
        schema = pa.unify_schemas(schemas, promote_options="permissive")
        return ds.dataset(parts, schema=schema, format="parquet", filesystem=fs)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError) as exc:
        raise _unreadable(table, parts, exc) from exc


def connect(warehouse: Warehouse, sql: str | None = None) -> duckdb.DuckDBPyConnection:
    """A read-only analyst connection: an in-memory database with every table, then locked
    down (`_LOCKDOWN`). With `sql`, a local warehouse copies only the tables it reads (the
    others are views, see the module docstring); without, every table. It never opens the
    catalog file, so it neither waits for nor blocks a run."""
    con = duckdb.connect(config=_NO_EXTENSIONS)
    try:
        reads = None if sql is None else _reads(sql)
        if reads is not None and DRIFT_VIEW in reads:
            reads.add(HISTORY_TABLE)
        if warehouse.is_local and reads is not None:
            tables = list(warehouse.first_parts().items())
            for table, first in tables:
                if table in reads:
                    _copy(con, table, warehouse)
                else:
                    _load(con, table, [first], copy=False)
        else:
            fs = None if warehouse.is_local else warehouse._fs()[0]
            tables = list(warehouse.table_parts().items())
            for table, parts in tables:
                if fs is None:
                    _copy(con, table, warehouse, parts)
                else:
                    con.register(table, _dataset(fs, table, parts, warehouse))
        _derived_views(con, [table for table, _ in tables])
        for statement in _LOCKDOWN:
            con.execute(statement)
    except BaseException:
        con.close()
        raise
    return con


def query(
    warehouse: Warehouse, sql: str, parameters: dict[str, object] | None = None
) -> tuple[list[str], list[tuple]]:
    """Run SQL (with named `$parameters`) against the warehouse; a bad query or a corrupt
    file is one clear error."""
    con = connect(warehouse, sql)
    try:
        cursor = con.execute(sql, parameters)
        columns = [d[0] for d in cursor.description or []]
        return columns, cursor.fetchall()
    except duckdb.Error as exc:
        raise InputError(
            f"query failed: {str(exc).splitlines()[0]}",
            where=warehouse.root,
            fix="check the SQL (read-only: SELECT over the tables; no files, extensions or "
            'settings); `evalflow query "SHOW TABLES"` lists the tables',
        ) from exc
    finally:
        con.close()
