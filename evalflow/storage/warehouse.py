"""The warehouse: typed Parquet parts per (table, run_key[, judge]), written atomically.

Layout (hive style): `<root>/<table>/run_key=<key>/part.parquet` for per-run tables and
`<root>/<table>/all/part.parquet` for cross-run tables; an append-only table
(`evaluation_history`) gets one more `run_key=<key>/<name>.parquet` per write instead. A
judge-dependent per-run table (`TableSpec.per_judge`: verdicts, votes, scores, report…)
holds one part per judge in the run's folder, `run_key=<key>/<judge>.parquet` (`judge_file`),
so a run keeps several judges' results side by side and re-scoring with one judge replaces
only its part; every row names its judge (`judge_name`). A warehouse written before that has
`part.parquet` there: it reads as the result of the judge its run's `run_manifest` part names,
and the first judge-dependent write into the run moves each such part to its judge's name. A
file is written to a temporary name beside its destination and renamed into place, so a
reader never sees half a file and concurrent partitions never lose each other's rows.
A table with a contract (`evalflow.storage.tables`) is written with its Arrow schema and a
frame that does not fit is refused (`evalflow.storage.arrow`); `run_key` is a plain `string`
column, the type hive partitioning reads the directory key as, so pyarrow datasets, polars
and DuckDB all read every table with `run_key=` as its partitioning.

The root is a local path or a URI that `pyarrow.fs` understands (`s3://…`, `gs://…`,
`file://…`), so the same code writes to object storage when an operator scales out. What must
stay on a local disk — built repositories, response caches, reports, plots, the ledger, the
DuckDB catalog — lives in the `workdir`: the warehouse itself when it is a local path, else
`$EVALFLOW_WORKDIR`. A file that cannot be read is reported, never skipped.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from evalflow.errors import InputError
from evalflow.storage.arrow import holds_structs, inferred, to_arrow
from evalflow.storage.migration import judge_name_of, upgrade
from evalflow.storage.tables import TABLES, validate_frame

if TYPE_CHECKING:
    import pandas as pd

PARTITION_DIR = "run_key="
CROSS_RUN_DIR = "all"
PART_FILE = "part.parquet"
# A table's compacted copy of its parts (`evalflow.storage.compaction`): a cache, never a part.
COMPACT_DIR = "_compact"
JUDGE_COLUMN = "judge_name"
# The table whose legacy part names the judge of every legacy part of its run.
MANIFEST_TABLE = "run_manifest"


def judge_file(judge: str) -> str:
    """The part file of `judge`'s result in a run's folder, e.g. `heuristic.parquet`,
    `panel_anthropic_openai.parquet` (never `part.parquet`: no judge is called `part`)."""
    return re.sub(r"[^A-Za-z0-9._+-]", "_", judge) + ".parquet"


def _per_judge(table: str) -> bool:
    spec = TABLES.get(table)
    return spec is not None and spec.per_judge


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

    def folder(self, table: str, run_key: str | None) -> str:
        return (
            f"{table}/{PARTITION_DIR}{run_key}"
            if run_key is not None
            else f"{table}/{CROSS_RUN_DIR}"
        )

    def part_path(self, table: str, run_key: str | None, judge: str | None = None) -> str:
        """A part's path below the root: `judge`'s part of a judge-dependent table's run
        when `judge` is given, else the run's (or the cross-run) `part.parquet`."""
        if judge is not None and run_key is not None and _per_judge(table):
            return f"{self.folder(table, run_key)}/{judge_file(judge)}"
        return f"{self.folder(table, run_key)}/{PART_FILE}"

    def write(
        self,
        table: str,
        frame: pd.DataFrame,
        run_key: str | None = None,
        judge: str | None = None,
    ) -> str:
        """Replace the table's part for `run_key` (or the cross-run part) atomically; for a
        judge-dependent table, `judge`'s part of the run (default: the one its rows name;
        other judges' parts are kept)."""
        if table in TABLES and TABLES[table].append_only:
            raise ValueError(f"table {table!r} is append-only: use Warehouse.append")
        fs, base = self._fs()
        if run_key is not None and _per_judge(table):
            names = set(frame[JUDGE_COLUMN]) if JUDGE_COLUMN in frame else set()
            if judge is None and len(names) == 1:
                judge = str(next(iter(names)))
            if not judge or names - {judge}:
                raise ValueError(
                    f"table {table!r} holds one part per judge: rows of {sorted(names)} "
                    f"cannot be written as judge {judge!r}"
                )
            self._migrate(fs, base, run_key)
            final = f"{base}/{self.part_path(table, run_key, judge)}"
        else:
            final = f"{base}/{self.part_path(table, run_key)}"
        self._put(fs, final, _arrow(table, frame))
        return final

    def _legacy_judge(self, fs: pafs.FileSystem, base: str, run_key: str) -> str | None:
        """The judge of a run's legacy parts (written before one part per judge): the one its
        `run_manifest` part names; None when the run has no legacy manifest part."""
        path = f"{base}/{self.part_path(MANIFEST_TABLE, run_key)}"
        if fs.get_file_info(path).type == pafs.FileType.NotFound:
            return None
        ids = _read_part(fs, path).column("judge_id").to_pylist()
        return judge_name_of(str(ids[0])) if ids else None

    def migrate(self) -> list[str]:
        """Give every run's legacy judge-dependent parts their judge's name (`_migrate`);
        returns the run keys migrated."""
        fs, base = self._fs()
        folder = f"{base}/{MANIFEST_TABLE}"
        keys = [
            name.removeprefix(PARTITION_DIR)
            for name in self._folders(fs, folder)
            if name.startswith(PARTITION_DIR)
            and fs.get_file_info(f"{folder}/{name}/{PART_FILE}").type == pafs.FileType.File
        ]
        for key in keys:
            self._migrate(fs, base, key)
        return keys

    def _migrate(self, fs: pafs.FileSystem, base: str, run_key: str) -> None:
        """Move every legacy `part.parquet` of the run's judge-dependent tables to its judge's
        name (its rows gain `judge_name`); the manifest part, which names the judge, last, so
        an interrupted migration resumes on the next write. A part the judge has already
        written under its own name wins over the legacy one."""
        judge = self._legacy_judge(fs, base, run_key)
        if judge is None:
            return
        tables = sorted(
            (t for t, spec in TABLES.items() if spec.per_judge), key=lambda t: t == MANIFEST_TABLE
        )
        for table in tables:
            legacy = f"{base}/{self.part_path(table, run_key)}"
            if fs.get_file_info(legacy).type == pafs.FileType.NotFound:
                continue
            target = f"{base}/{self.folder(table, run_key)}/{judge_file(judge)}"
            if fs.get_file_info(target).type == pafs.FileType.NotFound:
                self._put(fs, target, _with_judge(_read_part(fs, legacy), judge))
            # FileNotFoundError: a concurrent step of the same run migrated it meanwhile
            with contextlib.suppress(FileNotFoundError):
                fs.delete_file(legacy)

    def append(self, table: str, frame: pd.DataFrame, run_key: str, name: str) -> str:
        """Add the part `<name>.parquet` to the run's partition; earlier parts are never
        rewritten. On a local disk the part is linked into place, which raises
        FileExistsError when the name is taken (by another writer, too); an object store has
        no such primitive, so there a second writer of the same name replaces the first."""
        fs, base = self._fs()
        final = f"{base}/{self.folder(table, run_key)}/{name}.parquet"
        if fs.get_file_info(final).type != pafs.FileType.NotFound:
            raise FileExistsError(final)
        self._put(fs, final, _arrow(table, frame), exclusive=True)
        return final

    def _put(
        self, fs: pafs.FileSystem, final: str, arrow: pa.Table, *, exclusive: bool = False
    ) -> None:
        """Write `arrow` to `final` through a temporary file renamed (or linked) into place."""
        folder = final.rsplit("/", 1)[0]
        fs.create_dir(folder, recursive=True)
        temp = f"{folder}/.{PART_FILE}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
        with fs.open_output_stream(temp) as stream:
            pq.write_table(arrow, stream)
        if not (exclusive and self.is_local):
            fs.move(temp, final)
            return
        try:
            os.link(temp, final)  # FileExistsError if another writer took the name meanwhile
        finally:
            os.unlink(temp)

    def read(
        self, table: str, run_key: str | None = None, judge: str | None = None
    ) -> pd.DataFrame:
        """A run's part(s), or every part of a table concatenated (sorted by path); for a
        judge-dependent table every judge's rows unless `judge` names one."""
        # pandas here, not at module top: the read side of `evalflow query` lists tables
        # through this class and never builds a frame.
        import pandas as pd

        fs, base = self._fs()
        paths = self._judged_parts(fs, base, table, run_key, judge)
        if run_key is not None and not paths:
            raise InputError(
                f"table {table!r} has no data for {run_key}"
                + (f" judged by {judge}" if judge is not None and _per_judge(table) else ""),
                where=f"{base}/{self.folder(table, run_key)}",
                fix="materialise it first (evalflow materialize)",
            )
        # A part written under an older contract reads as the current one: a column it lacks
        # as NULL (unmeasured then), one stored as text then as its type now (`migration`).
        frames = [_frame(upgrade(table, _read_part(fs, path))) for path in paths]
        if _per_judge(table):
            frames = [
                self._judged(fs, base, frame, path)
                for frame, path in zip(frames, paths, strict=True)
            ]
        if not frames:
            raise InputError(
                f"table {table!r} is empty",
                where=self.table_dir(table),
                fix="materialise it first (evalflow materialize)",
            )
        return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]

    def read_arrow(self, table: str) -> pa.Table:
        """Every part of a table as one Arrow table in its current contract's types (parts
        written under an older contract upgraded, `migration.upgrade`)."""
        fs, _ = self._fs()
        parts = [upgrade(table, _read_part(fs, path)) for path in self.parts(table)]
        if not parts:
            raise InputError(
                f"table {table!r} is empty",
                where=self.table_dir(table),
                fix="materialise it first (evalflow materialize)",
            )
        return pa.concat_tables(parts, promote_options="permissive")

    def _judged_parts(
        self, fs: pafs.FileSystem, base: str, table: str, run_key: str | None, judge: str | None
    ) -> list[str]:
        """The table's parts (of one run), only `judge`'s when it names one of a
        judge-dependent table: its own part, else a legacy part of that judge."""
        if run_key is None:
            paths = [info.path for info in self._files(fs, f"{base}/{table}", recursive=True)]
        else:
            paths = [info.path for info in self._files(fs, f"{base}/{self.folder(table, run_key)}")]
        if judge is None or not _per_judge(table):
            return paths
        own = judge_file(judge)
        kept = []
        for path in paths:
            name = path.rsplit("/", 1)[-1]
            if name == own or (
                name == PART_FILE
                and self._legacy_judge(fs, base, _run_key_of(path)) in (judge, None)
            ):
                kept.append(path)
        return kept

    def _judged(
        self, fs: pafs.FileSystem, base: str, frame: pd.DataFrame, path: str
    ) -> pd.DataFrame:
        """A legacy part's rows with the judge its run's manifest part names."""
        if JUDGE_COLUMN in frame.columns and frame[JUDGE_COLUMN].notna().all():
            return frame
        judge = self._legacy_judge(fs, base, _run_key_of(path))
        if judge is None and "judge_id" in frame.columns and len(frame):
            judge = judge_name_of(str(frame["judge_id"].iloc[0]))
        out = frame.copy()
        position = min(2, len(out.columns))
        if JUDGE_COLUMN in out.columns:
            out[JUDGE_COLUMN] = out[JUDGE_COLUMN].fillna(judge)
        else:
            out.insert(position, JUDGE_COLUMN, judge)
        return out

    @staticmethod
    def _files(fs: pafs.FileSystem, folder: str, *, recursive: bool = False) -> list[pafs.FileInfo]:
        """The Parquet parts under `folder`, sorted (temporary files are hidden names)."""
        selector = pafs.FileSelector(folder, recursive=recursive, allow_not_found=True)
        return sorted(
            (
                info
                for info in fs.get_file_info(selector)
                if info.type == pafs.FileType.File
                and info.base_name.endswith(".parquet")
                and not info.base_name.startswith(".")
                and f"/{COMPACT_DIR}/" not in info.path
            ),
            key=lambda info: info.path,
        )

    def parts(self, table: str, run_key: str | None = None) -> list[str]:
        """Every part file of a table (or of one run's partition), sorted."""
        fs, base = self._fs()
        if run_key is not None:
            return [info.path for info in self._files(fs, f"{base}/{self.folder(table, run_key)}")]
        return [info.path for info in self._files(fs, f"{base}/{table}", recursive=True)]

    def tables(self) -> list[str]:
        """Tables that have at least one part."""
        return list(self.first_parts())

    def first_parts(self) -> dict[str, str]:
        """Every table that has at least one part → its first partition's first part.

        Enough to name the tables and bind their columns, at the cost of one listing per
        table (and per folder of a directory that holds no table), not one per partition:
        with 1,000 runs a table has 1,000 partition folders."""
        fs, base = self._fs()
        found: dict[str, str] = {}
        for table in self._folders(fs, base):
            for folder in self._folders(fs, f"{base}/{table}"):
                files = self._files(fs, f"{base}/{table}/{folder}")
                if files:
                    found[table] = files[0].path
                    break
        return found

    @staticmethod
    def _folders(fs: pafs.FileSystem, folder: str) -> list[str]:
        """The names of the (not hidden) folders in `folder`, sorted."""
        selector = pafs.FileSelector(folder, allow_not_found=True)
        return sorted(
            info.base_name
            for info in fs.get_file_info(selector)
            if info.type == pafs.FileType.Directory
            and not info.base_name.startswith((".", COMPACT_DIR))
        )

    def table_parts(self) -> dict[str, list[str]]:
        """Every table that has at least one part → its parts, sorted; one listing of the root
        (a reader of every table, `evalflow query`, would otherwise list each table twice)."""
        fs, base = self._fs()
        parts: dict[str, list[str]] = {}
        for info in self._files(fs, base, recursive=True):
            table, nested, _ = info.path.removeprefix(f"{base}/").partition("/")
            if nested:
                parts.setdefault(table, []).append(info.path)
        return dict(sorted(parts.items()))

    def has(self, table: str, run_key: str | None = None, judge: str | None = None) -> bool:
        """Whether the table has a part (of the run; of `judge`'s result, when it names one)."""
        fs, base = self._fs()
        if run_key is not None and judge is not None and _per_judge(table):
            return bool(self._judged_parts(fs, base, table, run_key, judge))
        return bool(self._files(fs, f"{base}/{self.folder(table, run_key)}"))

    def judges(self, table: str, run_key: str) -> list[str]:
        """The judges whose results a run holds in a judge-dependent table, sorted."""
        frame = self.read(table, run_key) if self.has(table, run_key) else None
        return [] if frame is None else sorted(set(frame[JUDGE_COLUMN].dropna()))


def _arrow(table: str, frame: pd.DataFrame) -> pa.Table:
    """The frame as its contract's Arrow table, or with inferred types if it has none."""
    spec = TABLES.get(table)
    if spec is None:
        return inferred(frame)
    validate_frame(table, frame)
    return to_arrow(table, frame, spec.arrow_schema, spec.model)


def _frame(arrow: pa.Table) -> pd.DataFrame:
    """A part as pandas; a column of structs as Python lists of dicts, whose integers stay
    integers (pandas would turn a nested int field with a null into floats: `3.0`)."""
    import pandas as pd

    frame = arrow.to_pandas()
    for field in arrow.schema:
        if holds_structs(field.type):
            cells = arrow.column(field.name).to_pylist()
            frame[field.name] = pd.Series(cells, index=frame.index, dtype=object)
    return frame


def _run_key_of(path: str) -> str:
    """The run key of a part's folder (`…/run_key=<key>/<file>`)."""
    return path.rsplit("/", 2)[-2].removeprefix(PARTITION_DIR)


def _with_judge(arrow: pa.Table, judge: str) -> pa.Table:
    """A legacy part's rows with `judge_name` (after run_key and fingerprint)."""
    if JUDGE_COLUMN in arrow.column_names:
        return arrow
    column = pa.array([judge] * arrow.num_rows, pa.string())
    return arrow.add_column(min(2, arrow.num_columns), JUDGE_COLUMN, column)


def _read_part(fs: pafs.FileSystem, path: str) -> pa.Table:
    try:
        with fs.open_input_file(path) as handle:
            return pq.read_table(handle)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(
            f"corrupt Parquet file ({str(exc).splitlines()[0]})",
            where=path,
            fix="delete it and re-materialise its partition",
        ) from exc
