"""File I/O of River Review's rubric and evaluation ledger (SPEC §3).

- Rubric: `docs/eval/rubric.yaml`, validated against `schemas/eval-rubric.schema.json`.
- Ledger: a JSONL file (default `<warehouse>/ledger/ledger.jsonl`), one compact JSON line per
  evaluation (River Review's convention, `JSON.stringify` spacing). An append is validated
  against `schemas/eval-ledger-entry.schema.json` (jsonschema, `date-time` checked) and against
  the rubric (known dimensions, method, range) and then written with one `write(2)` on an
  `O_APPEND` descriptor under an exclusive `flock`, so concurrent writers never interleave.
- `description` holds the evaluation key `<kind>:<name>` (`evalflow.domain.rubric.entry_keys`).
- `commit`/`branch` are evalflow's own checkout (what made the entry); a framework run's entry
  also carries what was evaluated: `headSha` (the run's head commit) and `fingerprint`
  (extra fields, which River Review's entry schema allows).
- Read side: `ledger_frame` flattens entries to one row per entry × dimension with the
  snake_case columns of `LEDGER_COLUMNS` (an entry without dimension scores keeps one row with a
  null `dimension_id`), ready to be exposed as the DuckDB table `ledger_entry`.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pandas as pd
import yaml
from pydantic import ValidationError

from evalflow import __version__
from evalflow.domain.rubric.compare import DEFAULT_TOLERANCE, KeyComparison, compare_last_two
from evalflow.domain.rubric.entry_keys import format_entry_key, parse_entry_key
from evalflow.domain.rubric.manual import with_manual_score
from evalflow.domain.rubric.models import LedgerEntry, Rubric, is_rfc3339_datetime
from evalflow.domain.rubric.schemas import (
    LEDGER_ENTRY_SCHEMA_FILE,
    RUBRIC_SCHEMA_FILE,
    schema_documents,
)
from evalflow.domain.rubric.scoring import (
    require_sound_rubric,
    validate_dimension_scores,
    weighted_total,
)
from evalflow.domain.yaml_text import load_yaml
from evalflow.errors import InputError
from evalflow.io import settings
from evalflow.storage.tables import named_scores

__all__ = [
    "DEFAULT_RUBRIC_PATH",
    "LEDGER_COLUMNS",
    "SCHEMAS_DIR",
    "append_entry",
    "compare_last_two",
    "compare_ledger",
    "default_ledger_path",
    "git_identity",
    "ledger_frame",
    "ledger_path_for",
    "load_rubric",
    "now",
    "now_timestamp",
    "read_entries",
    "read_ledger_frame",
    "record_evaluation",
    "record_manual_score",
    "validate_entry_document",
]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_RUBRIC_PATH = PROJECT_ROOT / "docs" / "eval" / "rubric.yaml"
SCHEMAS_DIR = PROJECT_ROOT / "schemas"
LEDGER_COLUMNS: tuple[str, ...] = (
    "entry_index",
    "entry_key",
    "kind",
    "run_key",
    "timestamp",
    "commit",
    "branch",
    "head_sha",
    "fingerprint",
    "status",
    "scores",
    "dimension_id",
    "score",
    "scoring_method",
    "weighted_total",
    "coverage",
)


def ledger_path_for(warehouse_root: Path) -> Path:
    """`<warehouse>/ledger/ledger.jsonl`."""
    return warehouse_root / "ledger" / "ledger.jsonl"


def default_ledger_path() -> Path:
    """The ledger of the default warehouse ($EVALFLOW_WAREHOUSE or data/warehouse)."""
    return ledger_path_for(settings.warehouse().workdir)


@functools.cache
def _validator(schema_file: str) -> jsonschema.Draft202012Validator:
    checker = jsonschema.FormatChecker(formats=())
    checker.checks("date-time")(is_rfc3339_datetime)
    return jsonschema.Draft202012Validator(schema_documents()[schema_file], format_checker=checker)


def _schema_error(document: object, schema_file: str) -> str | None:
    error = jsonschema.exceptions.best_match(_validator(schema_file).iter_errors(document))
    if error is None:
        return None
    place = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"{place}: {error.message}"


def _model_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    place = "/".join(str(p) for p in first["loc"]) or "(root)"
    return f"{place}: {first['msg']}"


def load_rubric(path: Path = DEFAULT_RUBRIC_PATH, *, require_sound: bool = True) -> Rubric:
    """The rubric at `path`; InputError when unreadable, off-schema or (by default) unsound."""
    where = str(path)
    try:
        document = load_yaml(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read the rubric ({exc.strerror})", where=where) from exc
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {exc}".splitlines()[0], where=where) from exc
    problem = _schema_error(document, RUBRIC_SCHEMA_FILE)
    if problem:
        raise InputError(problem, where=where, fix=f"see schemas/{RUBRIC_SCHEMA_FILE}")
    try:
        rubric = Rubric.model_validate(document)
    except ValidationError as exc:
        raise InputError(_model_error(exc), where=where) from exc
    return require_sound_rubric(rubric, where=where) if require_sound else rubric


def validate_entry_document(
    document: object, rubric: Rubric | None = None, *, where: str | None = None
) -> LedgerEntry:
    """The entry if `document` passes the ledger-entry schema (and the rubric), else InputError."""
    problem = _schema_error(document, LEDGER_ENTRY_SCHEMA_FILE)
    if problem:
        raise InputError(
            f"invalid ledger entry: {problem}",
            where=where,
            fix=f"see schemas/{LEDGER_ENTRY_SCHEMA_FILE}",
        )
    try:
        entry = LedgerEntry.model_validate(document)
    except ValidationError as exc:
        raise InputError(f"invalid ledger entry: {_model_error(exc)}", where=where) from exc
    if rubric is not None:
        validate_dimension_scores(rubric, entry.dimension_scores or (), where=where)
    return entry


def append_entry(path: Path, entry: LedgerEntry, rubric: Rubric) -> None:
    """Validate `entry` and append it to the ledger at `path` as one line, atomically."""
    document = entry.to_document()
    validate_entry_document(document, rubric, where=str(path))
    line = (json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        written = os.write(fd, line)
    finally:
        os.close(fd)
    if written != len(line):
        raise OSError(f"{path}: short write ({written} of {len(line)} bytes)")


def read_entries(path: Path, rubric: Rubric | None = None) -> list[LedgerEntry]:
    """Every entry of the ledger in file order; InputError names the first bad line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise InputError(
            "ledger not found", where=str(path), fix="record an evaluation first or pass --ledger"
        ) from exc
    entries: list[LedgerEntry] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            document = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not JSON ({exc.msg})", where=where) from exc
        entries.append(validate_entry_document(document, rubric, where=where))
    return entries


def ledger_frame(entries: Sequence[LedgerEntry], rubric: Rubric) -> pd.DataFrame:
    """One row per entry × dimension score, columns `LEDGER_COLUMNS`."""
    rows: list[dict[str, Any]] = []
    for index, entry in enumerate(entries):
        key = parse_entry_key(entry.description)
        dimension_scores = entry.dimension_scores or ()
        total = weighted_total(rubric, dimension_scores, where=f"ledger entry {index}")
        evaluated = entry.model_extra or {}
        base = {
            "entry_index": index,
            "entry_key": key.key,
            "kind": key.kind,
            "run_key": key.run_key,
            "timestamp": entry.timestamp.upper(),
            "commit": entry.commit,
            "branch": entry.branch,
            "head_sha": evaluated.get("headSha"),
            "fingerprint": evaluated.get("fingerprint"),
            "status": entry.status,
            "scores": named_scores(entry.scores),
            "weighted_total": total.total,
            "coverage": total.coverage,
        }
        per_dimension = [
            {"dimension_id": d.dimension_id, "score": d.score, "scoring_method": d.scoring_method}
            for d in dimension_scores
        ] or [{"dimension_id": None, "score": None, "scoring_method": None}]
        rows.extend({**base, **item} for item in per_dimension)
    frame = pd.DataFrame(rows, columns=list(LEDGER_COLUMNS))
    frame["entry_index"] = frame["entry_index"].astype("int64")
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True, format="ISO8601")
    for column in ("score", "weighted_total", "coverage"):
        frame[column] = frame[column].astype("float64")
    return frame


def read_ledger_frame(path: Path, rubric: Rubric) -> pd.DataFrame:
    """`ledger_frame` of the ledger file at `path`."""
    return ledger_frame(read_entries(path, rubric), rubric)


def compare_ledger(
    path: Path, rubric: Rubric, key: str | None = None, *, tolerance: float = DEFAULT_TOLERANCE
) -> tuple[list[KeyComparison], dict[str, int]]:
    """Comparisons of the last two entries per key, and the entry count of every key considered.

    InputError when `key` is given but no entry carries it (a typo, not "nothing to compare").
    """
    entries = read_entries(path, rubric)
    counts: dict[str, int] = {}
    for entry in entries:
        entry_key = parse_entry_key(entry.description).key
        counts[entry_key] = counts.get(entry_key, 0) + 1
    if key is not None:
        if key not in counts:
            raise InputError(
                f"no ledger entry has the key {key!r}",
                where=str(path),
                fix="keys are the entries' descriptions, e.g. review_eval:<reviewer>",
            )
        counts = {key: counts[key]}
    return compare_last_two(entries, key, rubric=rubric, tolerance=tolerance), counts


def now() -> datetime:
    """UTC now to the second; `SOURCE_DATE_EPOCH` pins it for reproducible output."""
    pinned = os.environ.get("SOURCE_DATE_EPOCH")
    if pinned:
        try:
            return datetime.fromtimestamp(int(pinned), tz=UTC)
        except ValueError as exc:
            raise InputError(
                f"SOURCE_DATE_EPOCH={pinned!r} is not an integer number of seconds"
            ) from exc
    return datetime.now(tz=UTC).replace(microsecond=0)


def now_timestamp() -> str:
    """`now()` as RFC 3339 (seconds)."""
    return now().strftime("%Y-%m-%dT%H:%M:%SZ")


def git_identity(cwd: Path) -> tuple[str, str]:
    """(commit, branch) of the git checkout at `cwd`; "unknown" for what git cannot tell."""

    def ask(*args: str) -> str:
        try:
            done = subprocess.run(
                ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return "unknown"
        return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "unknown"

    return ask("rev-parse", "HEAD"), ask("rev-parse", "--abbrev-ref", "HEAD")


def record_manual_score(
    path: Path,
    rubric: Rubric,
    key: str,
    dimension_id: str,
    score: float,
    *,
    details: str | None = None,
) -> LedgerEntry:
    """Append a copy of `key`'s latest entry carrying a human score; returns the new entry."""
    matching = [e for e in read_entries(path, rubric) if parse_entry_key(e.description).key == key]
    if not matching:
        raise InputError(
            f"no ledger entry has the key {key!r}",
            where=str(path),
            fix="a human score amends an evaluation already in the ledger",
        )
    timestamp = now_timestamp()
    entry = with_manual_score(
        matching[-1],
        rubric,
        dimension_id,
        score,
        timestamp=timestamp,
        version=__version__,
        details=details or f"human score recorded {timestamp}",
    )
    append_entry(path, entry, rubric)
    return entry


def record_evaluation(
    kind: str,
    name: str,
    *,
    scores: dict[str, float],
    results: Sequence[tuple[str, bool, list[str] | None]],
    passed: bool,
    ledger_path: Path | None = None,
    rubric_path: Path = DEFAULT_RUBRIC_PATH,
    head_sha: str | None = None,
    fingerprint: str | None = None,
) -> LedgerEntry:
    """Append one evaluation (`<kind>:<name>`) to the ledger and return the entry.

    For evaluations the River Review dimensions do not describe (framework runs, plugin
    scores, retrieval evaluations) the entry carries scores and results only; a framework
    run's entry also carries its `head_sha` and `fingerprint` (what was evaluated).
    """
    rubric = load_rubric(rubric_path)
    commit, branch = git_identity(Path.cwd())
    entry = LedgerEntry.model_validate(
        {
            "version": __version__,
            "timestamp": now_timestamp(),
            "commit": commit,
            "branch": branch,
            "scores": {k: float(v) for k, v in scores.items() if not pd.isna(v)},
            "results": [
                {"name": n, "pass": ok, **({"errors": e} if e else {})} for n, ok, e in results
            ],
            "status": "pass" if passed else "fail",
            "description": format_entry_key(kind, name),
            **({"headSha": head_sha} if head_sha else {}),
            **({"fingerprint": fingerprint} if fingerprint else {}),
        }
    )
    append_entry(ledger_path or default_ledger_path(), entry, rubric)
    return entry
