"""The warehouse: one Parquet file per (table, run_key), written atomically.

Layout (hive style): `<root>/<table>/run_key=<key>/part.parquet` for per-run tables and
`<root>/<table>/all/part.parquet` for cross-run tables. A file is written to a temporary
name beside its destination and renamed into place, so a reader never sees half a file and
concurrent partitions never lose each other's rows. The root is a local path or a URI that
`pyarrow.fs` understands (`s3://…`, `gs://…`, `file://…`), so the same code writes to object
storage when an operator scales out. What must stay on a local disk — built repositories,
response caches, reports, plots, the ledger, the DuckDB catalog — lives in the `workdir`: the
warehouse itself when it is a local path, else `$EVALFLOW_WORKDIR`. A file that cannot be
read is reported, never skipped.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from evalflow.errors import InputError

PARTITION_DIR = "run_key="
CROSS_RUN_DIR = "all"
PART_FILE = "part.parquet"


@dataclass(frozen=True)
class Warehouse:
    root: str
    workdir_path: str = ""

    @property
    def is_local(self) -> bool:
        """A plain local path (a URI, `file://` included, goes through `pyarrow.fs`)."""
        return "://" not in self.root

    @property
    def workdir(self) -> Path:
        """Where local artifacts live: the warehouse itself, or the configured work dir."""
        if self.is_local:
            return Path(self.root).resolve()
        if not self.workdir_path:
            raise InputError(
                "a warehouse URI needs a local work directory for repositories, caches, "
                "reports and the DuckDB catalog",
                where=self.root,
                fix="set EVALFLOW_WORKDIR to a local directory",
            )
        return Path(self.workdir_path).resolve()

    def _fs(self) -> tuple[pafs.FileSystem, str]:
        if self.is_local:
            return pafs.LocalFileSystem(), str(self.workdir)
        fs, path = pafs.FileSystem.from_uri(self.root)
        return fs, path.rstrip("/")

    def table_dir(self, table: str) -> str:
        return f"{self.root.rstrip('/')}/{table}"

    def part_path(self, table: str, run_key: str | None) -> str:
        folder = f"{PARTITION_DIR}{run_key}" if run_key is not None else CROSS_RUN_DIR
        return f"{table}/{folder}/{PART_FILE}"

    def write(self, table: str, frame: pd.DataFrame, run_key: str | None = None) -> str:
        """Replace the table's part for `run_key` (or the cross-run part) atomically."""
        fs, base = self._fs()
        relative = self.part_path(table, run_key)
        final = f"{base}/{relative}"
        folder = final.rsplit("/", 1)[0]
        fs.create_dir(folder, recursive=True)
        temp = f"{folder}/.{PART_FILE}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
        arrow = pa.Table.from_pandas(frame, preserve_index=False)
        with fs.open_output_stream(temp) as stream:
            pq.write_table(arrow, stream)
        fs.move(temp, final)
        return final

    def read(self, table: str, run_key: str | None = None) -> pd.DataFrame:
        """One part, or every part of a table concatenated (run keys sorted)."""
        fs, base = self._fs()
        paths = [f"{base}/{self.part_path(table, run_key)}"] if run_key is not None else None
        if paths is None:
            paths = self.parts(table)
        frames = []
        for path in paths:
            if fs.get_file_info(path).type != pafs.FileType.File:
                raise InputError(
                    f"table {table!r} has no data for {run_key or 'any run'}",
                    where=path,
                    fix="materialise it first (evalflow materialize)",
                )
            frames.append(_read_part(fs, path))
        if not frames:
            raise InputError(
                f"table {table!r} is empty",
                where=self.table_dir(table),
                fix="materialise it first (evalflow materialize)",
            )
        return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]

    def parts(self, table: str) -> list[str]:
        """Every part file of a table, sorted."""
        fs, base = self._fs()
        selector = pafs.FileSelector(f"{base}/{table}", recursive=True, allow_not_found=True)
        return sorted(
            info.path
            for info in fs.get_file_info(selector)
            if info.type == pafs.FileType.File and info.path.endswith(f"/{PART_FILE}")
        )

    def tables(self) -> list[str]:
        """Tables that have at least one part."""
        fs, base = self._fs()
        selector = pafs.FileSelector(base, recursive=False, allow_not_found=True)
        return sorted(
            info.base_name
            for info in fs.get_file_info(selector)
            if info.type == pafs.FileType.Directory and self.parts(info.base_name)
        )

    def has(self, table: str, run_key: str | None = None) -> bool:
        fs, base = self._fs()
        info = fs.get_file_info(f"{base}/{self.part_path(table, run_key)}")
        return info.type == pafs.FileType.File


def _read_part(fs: pafs.FileSystem, path: str) -> pd.DataFrame:
    try:
        with fs.open_input_file(path) as handle:
            return pq.read_table(handle).to_pandas()
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(
            f"corrupt Parquet file ({str(exc).splitlines()[0]})",
            where=path,
            fix="delete it and re-materialise its partition",
        ) from exc
