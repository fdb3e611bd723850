"""Compaction of a local warehouse's per-run tables: one file instead of one part per run.

A per-run table has one part per run (`<table>/run_key=<key>/part.parquet`), so a reader of
1,000 runs opens 1,000 files. `compact` copies a table's parts into one file,
`<table>/_compact/part-<id>.parquet`, and records in `<table>/_compact/manifest.json` which
parts it holds, each by its inode, mtime and size. A reader (`source`) takes the compacted
rows of every run whose part is still the one recorded and reads every other part — written
or re-written since, so it wins over its compacted copy — directly. The parts stay the
source of truth: deleting `_compact` changes no answer, only its cost.

Concurrency: a part is replaced by a rename, so its inode changes with every write; the
compacted file is written under a fresh name and the manifest renamed over the old one, so a
reader sees either the old or the new snapshot, whole. An unreferenced compacted file is
deleted only once it is older than `_KEEP_S`, long after any reader that read the old
manifest has opened it. Two compactions racing both write a correct snapshot; the last
rename wins.

Only a table whose every folder is `run_key=<key>/` holding `part.parquet` alone, whose
rows carry their folder's key as `run_key`, is compacted: cross-run and append-only tables
keep reading their parts. Object-store warehouses are not compacted (no inode to tell a
re-written part from the recorded one).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import duckdb

from evalflow.storage.warehouse import COMPACT_DIR, PART_FILE, PARTITION_DIR, Warehouse

# Rebuild once this many parts are not in the compacted file (new or re-written since).
THRESHOLD = 64
MANIFEST = "manifest.json"
_KEEP_S = 600.0
_READ_OPTIONS = "union_by_name = true, hive_partitioning = false"

Stamp = tuple[int, int, int]  # inode, mtime in ns, size


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _files(paths: list[str]) -> str:
    return f"[{', '.join(map(_literal, paths))}]"


def _stamps(table_dir: Path) -> dict[str, tuple[str, Stamp]] | None:
    """run key → (its part, its stamp); None unless the table has only per-run parts."""
    found: dict[str, tuple[str, Stamp]] = {}
    try:
        folders = list(os.scandir(table_dir))
    except FileNotFoundError:
        return None
    for folder in folders:
        if folder.name.startswith((".", "_")):
            continue
        if not (folder.is_dir() and folder.name.startswith(PARTITION_DIR)):
            return None
        files = [f for f in os.scandir(folder.path) if not f.name.startswith(".")]
        if [f.name for f in files] != [PART_FILE]:
            return None
        stat = files[0].stat()
        key = folder.name.removeprefix(PARTITION_DIR)
        found[key] = (files[0].path, (stat.st_ino, stat.st_mtime_ns, stat.st_size))
    return found or None


def _manifest(table_dir: Path) -> dict | None:
    try:
        manifest = json.loads((table_dir / COMPACT_DIR / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    file = table_dir / COMPACT_DIR / str(manifest.get("file", ""))
    return manifest if file.is_file() else None


def _split(
    table_dir: Path, stamps: dict[str, tuple[str, Stamp]], manifest: dict | None
) -> tuple[set[str], list[str]]:
    """(run keys whose compacted rows are current, parts to read directly)."""
    held = {} if manifest is None else manifest["parts"]
    current = {key for key, (_, stamp) in stamps.items() if held.get(key) == list(stamp)}
    return current, sorted(path for key, (path, _) in stamps.items() if key not in current)


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
    current, loose = _split(table_dir, stamps, manifest)
    compacted = (table_dir / COMPACT_DIR / manifest["file"]).as_posix()
    stale = sorted(set(manifest["parts"]) - current)
    where = f" WHERE run_key NOT IN ({', '.join(map(_literal, stale))})" if stale else ""
    sql = f"SELECT * FROM read_parquet({_literal(compacted)}, {_READ_OPTIONS}){where}"
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
        current, loose = _split(table_dir, stamps, manifest)
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
    False when a loose part's rows do not carry its folder's key (a reader could not tell
    its runs apart)."""
    out = table_dir / COMPACT_DIR
    name = f"part-{uuid.uuid4().hex}.parquet"
    temp = out / f".{name}.tmp"
    key = f"regexp_extract(filename, '{PARTITION_DIR}([^/]*)/{PART_FILE}$', 1)"
    try:
        with duckdb.connect() as con:
            con.execute(
                "CREATE TEMP TABLE loose AS SELECT * EXCLUDE (filename), "
                f"{key} AS _key FROM read_parquet({_files(loose)}, {_READ_OPTIONS}, "
                "filename = true) ORDER BY filename"
            )
            try:
                mismatched = "SELECT count(*) FROM loose WHERE run_key IS DISTINCT FROM _key"
                if con.execute(mismatched).fetchone()[0]:
                    return False
            except duckdb.Error:  # no run_key column
                return False
            rows = "SELECT * EXCLUDE (_key) FROM loose"
            if current and manifest is not None:
                kept = ", ".join(map(_literal, sorted(current)))
                compacted = _literal((out / manifest["file"]).as_posix())
                rows = (
                    f"SELECT * FROM read_parquet({compacted}, {_READ_OPTIONS}) "
                    f"WHERE run_key IN ({kept}) UNION ALL BY NAME {rows}"
                )
            out.mkdir(exist_ok=True)
            con.execute(f"COPY ({rows}) TO {_literal(temp.as_posix())} (FORMAT parquet)")
        os.replace(temp, out / name)
        held = {k: list(s) for k, (_, s) in sorted(stamps.items())}
        temp_manifest = out / f".{MANIFEST}.{uuid.uuid4().hex}.tmp"
        temp_manifest.write_text(json.dumps({"file": name, "parts": held}, sort_keys=True))
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
