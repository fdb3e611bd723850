"""Compaction of a local warehouse's per-run tables: one file instead of a part per write.

A per-run table keeps its parts in one folder per run (`<table>/run_key=<key>/`): one
`part.parquet` each, or, for an append-only table (`evaluation_history`), one more file per
write; so a reader of 1,000 runs opens thousands of files. `compact` copies a table's parts
into one file, `<table>/_compact/part-<id>.parquet`, each row tagged with the part it came
from (column `_part`, its path under the table), and records in
`<table>/_compact/manifest.json` which parts it holds, each by its inode, mtime and size. A
reader (`source`) takes the compacted rows of every part that is still the one recorded and
reads every other part — written or re-written since, so it wins over its compacted copy —
directly; a deleted part's rows are left out. The parts stay the source of truth: deleting
`_compact` changes no answer, only its cost.

Concurrency: a part is replaced by a rename, so its inode changes with every write; the
compacted file is written under a fresh name and the manifest renamed over the old one, so a
reader sees either the old or the new snapshot, whole. An unreferenced compacted file is
deleted only once it is older than `_KEEP_S`, long after any reader that read the old
manifest has opened it. Two compactions racing both write a correct snapshot; the last
rename wins.

Only a table whose every folder is `run_key=<key>/` is compacted, whatever files (and
sub-folders) it holds: a cross-run table keeps reading its parts. Object-store warehouses
are not compacted (no inode to tell a re-written part from the recorded one). A manifest of
another format (the earlier one named a part per run key) is ignored: the table reads its
parts until the next rebuild.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import duckdb

from evalflow.storage.warehouse import COMPACT_DIR, PARTITION_DIR, Warehouse

# Rebuild once this many parts are not in the compacted file (new or re-written since).
THRESHOLD = 64
MANIFEST = "manifest.json"
FORMAT = 2
PART_COLUMN = "_part"
_KEEP_S = 600.0
_READ_OPTIONS = "union_by_name = true, hive_partitioning = false"

Stamp = tuple[int, int, int]  # inode, mtime in ns, size


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _files(paths: list[str]) -> str:
    return f"[{', '.join(map(_literal, paths))}]"


def _stamps(table_dir: Path) -> dict[str, tuple[str, Stamp]] | None:
    """part (its path under the table) → (its path, its stamp), for the parts a reader of
    the table reads (`Warehouse.parts`); None unless every folder is a run's."""
    found: dict[str, tuple[str, Stamp]] = {}
    try:
        entries = list(os.scandir(table_dir))
    except FileNotFoundError:
        return None
    for entry in entries:
        if entry.name.startswith(".") or entry.name == COMPACT_DIR:
            continue
        if not (entry.is_dir() and entry.name.startswith(PARTITION_DIR)):
            return None
        for root, dirs, files in os.walk(entry.path):
            dirs[:] = [d for d in dirs if d != COMPACT_DIR]
            for name in files:
                if name.startswith(".") or not name.endswith(".parquet"):
                    continue
                path = os.path.join(root, name)
                stat = os.stat(path)
                relative = Path(path).relative_to(table_dir).as_posix()
                found[relative] = (path, (stat.st_ino, stat.st_mtime_ns, stat.st_size))
    return found or None


def _manifest(table_dir: Path) -> dict | None:
    try:
        manifest = json.loads((table_dir / COMPACT_DIR / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        return None
    file = table_dir / COMPACT_DIR / str(manifest.get("file", ""))
    return manifest if file.is_file() else None


def _split(
    stamps: dict[str, tuple[str, Stamp]], manifest: dict | None
) -> tuple[set[str], list[str]]:
    """(parts whose compacted rows are current, parts to read directly)."""
    held = {} if manifest is None else manifest["parts"]
    current = {part for part, (_, stamp) in stamps.items() if held.get(part) == list(stamp)}
    return current, sorted(path for part, (path, _) in stamps.items() if part not in current)


def source(warehouse: Warehouse, table: str) -> str | None:
    """A SELECT over a compacted table's current rows, or None if it has no compacted file
    (the caller reads its parts)."""
    if not warehouse.is_local:
        return None
    table_dir = warehouse.workdir / table
    manifest = _manifest(table_dir)
    stamps = None if manifest is None else _stamps(table_dir)
    if manifest is None or stamps is None:
        return None
    current, loose = _split(stamps, manifest)
    compacted = (table_dir / COMPACT_DIR / manifest["file"]).as_posix()
    # Rows of a part re-written or deleted since the rebuild are not current.
    stale = sorted(set(manifest["parts"]) - current)
    where = f" WHERE {PART_COLUMN} NOT IN ({', '.join(map(_literal, stale))})" if stale else ""
    sql = (
        f"SELECT * EXCLUDE ({PART_COLUMN}) "
        f"FROM read_parquet({_literal(compacted)}, {_READ_OPTIONS}){where}"
    )
    if loose:
        sql += f" UNION ALL BY NAME SELECT * FROM read_parquet({_files(loose)}, {_READ_OPTIONS})"
    return sql


def compact(warehouse: Warehouse, threshold: int = THRESHOLD) -> list[str]:
    """Rebuild the compacted file of every per-run table with at least `threshold` parts
    outside it; returns the tables rebuilt."""
    if not warehouse.is_local:
        return []
    rebuilt = []
    for table in warehouse.tables():
        table_dir = warehouse.workdir / table
        stamps = _stamps(table_dir)
        if stamps is None:
            continue
        manifest = _manifest(table_dir)
        current, loose = _split(stamps, manifest)
        if (
            loose
            and len(loose) >= threshold
            and _rebuild(table_dir, stamps, manifest, current, loose)
        ):
            rebuilt.append(table)
        _collect(table_dir)
    return rebuilt


def _rebuild(
    table_dir: Path,
    stamps: dict[str, tuple[str, Stamp]],
    manifest: dict | None,
    current: set[str],
    loose: list[str],
) -> bool:
    """Write a compacted file of the current compacted rows plus the `loose` parts, and swap
    its manifest in (so a rebuild reads the parts written since, not every part again);
    False when it cannot be built (a corrupt part, a part with a `_part` column)."""
    out = table_dir / COMPACT_DIR
    name = f"part-{uuid.uuid4().hex}.parquet"
    temp = out / f".{name}.tmp"
    prefix = len(table_dir.as_posix()) + 2  # DuckDB's substr counts from 1; then the "/"
    try:
        with duckdb.connect() as con:
            rows = (
                f"SELECT * EXCLUDE (filename), substr(filename, {prefix}) AS {PART_COLUMN} "
                f"FROM read_parquet({_files(loose)}, {_READ_OPTIONS}, filename = true)"
            )
            if current and manifest is not None:
                kept = ", ".join(map(_literal, sorted(current)))
                compacted = _literal((out / manifest["file"]).as_posix())
                rows = (
                    f"SELECT * FROM read_parquet({compacted}, {_READ_OPTIONS}) "
                    f"WHERE {PART_COLUMN} IN ({kept}) UNION ALL BY NAME {rows}"
                )
            rows = f"SELECT * FROM ({rows}) ORDER BY {PART_COLUMN}"
            out.mkdir(exist_ok=True)
            con.execute(f"COPY ({rows}) TO {_literal(temp.as_posix())} (FORMAT parquet)")
        os.replace(temp, out / name)
        held = {k: list(s) for k, (_, s) in sorted(stamps.items())}
        temp_manifest = out / f".{MANIFEST}.{uuid.uuid4().hex}.tmp"
        temp_manifest.write_text(
            json.dumps({"format": FORMAT, "file": name, "parts": held}, sort_keys=True)
        )
        os.replace(temp_manifest, out / MANIFEST)
    except (duckdb.Error, OSError):
        # A cache that cannot be built is not built: a reader reads the parts, and reports a
        # corrupt one with its own error.
        return False
    finally:
        temp.unlink(missing_ok=True)
    return True


def _collect(table_dir: Path) -> None:
    """Delete compacted files the manifest no longer names, once no reader can want them."""
    out = table_dir / COMPACT_DIR
    manifest = _manifest(table_dir)
    keep = None if manifest is None else manifest["file"]
    now = time.time()
    for entry in out.glob("part-*.parquet") if out.is_dir() else []:
        try:
            if entry.name != keep and now - entry.stat().st_mtime > _KEEP_S:
                entry.unlink()
        except FileNotFoundError:  # collected by a concurrent compaction
            pass
