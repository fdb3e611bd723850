"""Operator settings: where the warehouse, benchmarks and Dagster instance live, which judge scores.

Read at run time (never at import) from the environment, with documented defaults:
`EVALFLOW_WAREHOUSE` (default `data/warehouse`; a path or a URI such as `s3://bucket/prefix`),
`EVALFLOW_WORKDIR` (local artifacts of a URI warehouse), `EVALFLOW_BENCHMARKS` (default
`data/benchmarks`), `EVALFLOW_JUDGE` (default `heuristic`), `DAGSTER_HOME` (default
`<workdir>/dagster_home`). The bounds on repository content (`EVALFLOW_MAX_FILES` …) are
defined in `evalflow.repo.limits` and checked here with the rest of the environment. Light on
purpose: the fast CLI commands import it, so no Dagster.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from evalflow.errors import InputError
from evalflow.repo.limits import BOUNDS

# The warehouse module pulls pandas, pyarrow and the table contracts (~1 s): imported where a
# warehouse is made, so `evalflow --help` (which checks the environment here) stays instant.
if TYPE_CHECKING:
    from evalflow.storage.warehouse import Warehouse

DEFAULT_WAREHOUSE = "data/warehouse"
DEFAULT_BENCHMARKS = "data/benchmarks"
DEFAULT_JUDGE = "heuristic"
DAGSTER_YAML = "dagster.yaml"
# Written into a Dagster home that has no instance file: without one Dagster warns "No dagster
# instance configuration file" on every instance load (3–6 times per command) and prints its
# telemetry banner on first use. Storage stays Dagster's default: everything under the home.
# `python_log_level: INFO`: a multiprocess step's child process announces itself
# (STEP_WORKER_STARTED, DEBUG) through a log manager built before the run's logger config
# applies, whose console logger takes its level from the instance (default DEBUG), so the
# run config's quiet console cannot silence it. INFO hides it; Dagster's events are stored
# whatever the level, and `context.log.info` and above still reach the event log.
WRITTEN_BY = "# Written by evalflow:"
DAGSTER_YAML_TEXT = f"""\
{WRITTEN_BY} Dagster's default storage under this directory, telemetry off,
# no DEBUG lines from multiprocess step workers on the console.
telemetry:
  enabled: false
python_logs:
  python_log_level: INFO
"""


def check_environment() -> None:
    """Refuse, before anything is imported, an environment value that would crash a library.

    `SOURCE_DATE_EPOCH` (pins evalflow's timestamps) is read at import time by numpy's f2py,
    which scipy loads: a non-integer there is a ValueError deep inside an import, not a line
    naming the variable."""
    pinned = os.environ.get("SOURCE_DATE_EPOCH")
    if pinned and not pinned.strip().isdigit():
        raise InputError(
            "SOURCE_DATE_EPOCH is not a whole number of seconds since 1970",
            where=f"SOURCE_DATE_EPOCH={pinned}",
            fix="set it to e.g. $(git log -1 --format=%ct) or unset it",
        )
    # A bad bound is one line before any run starts, not a failed step inside one.
    for bound in BOUNDS:
        bound.value()


def warehouse_root() -> str:
    return os.environ.get("EVALFLOW_WAREHOUSE") or DEFAULT_WAREHOUSE


def warehouse(root: str | None = None) -> Warehouse:
    """The warehouse; a URI root gets `EVALFLOW_WORKDIR` as its local work directory."""
    from evalflow.storage.warehouse import Warehouse

    value = root or warehouse_root()
    if "://" not in value:
        path = Path(value).resolve()
        if path.exists() and not path.is_dir():
            raise InputError(
                "the warehouse is not a directory",
                where=str(path),
                fix="pass --warehouse (or set EVALFLOW_WAREHOUSE to) a directory",
            )
        return Warehouse(str(path))
    return Warehouse(value, os.environ.get("EVALFLOW_WORKDIR", ""))


def dagster_home(warehouse_root: str | None = None) -> Path:
    """The Dagster instance directory, with a `dagster.yaml` in it.

    `$DAGSTER_HOME` when set (shared with `dagster dev`; it must exist, as Dagster requires),
    else `<workdir>/dagster_home`, created. An existing `dagster.yaml` is left as it is.
    """
    configured = os.environ.get("DAGSTER_HOME")
    if configured:
        home = Path(configured)
        if not home.is_absolute() or not home.is_dir():
            raise InputError(
                "DAGSTER_HOME is not an existing directory given as an absolute path",
                where=f"DAGSTER_HOME={configured}",
                fix=f"mkdir -p {home.resolve()} and set DAGSTER_HOME={home.resolve()}, "
                "or unset DAGSTER_HOME to use <warehouse>/dagster_home",
            )
    else:
        home = warehouse(warehouse_root).workdir / "dagster_home"
        home.mkdir(parents=True, exist_ok=True)
    if not os.access(home, os.W_OK | os.X_OK):
        raise InputError(
            "the Dagster home is not writable (Dagster keeps its runs and logs there)",
            where=str(home),
            fix=f"make it writable (chmod u+w {home}) or set DAGSTER_HOME to a directory you own",
        )
    config = home / DAGSTER_YAML
    current = config.read_text(encoding="utf-8", errors="replace") if config.exists() else None
    # A file evalflow wrote is evalflow's to upgrade (an older home keeps no stale settings);
    # one the operator wrote is never touched.
    if current is None or (current != DAGSTER_YAML_TEXT and current.startswith(WRITTEN_BY)):
        # Atomic: parallel workers may load the instance while another one writes the file;
        # each writer (process and thread: a run and its progress display) has its own partial.
        partial = home / f".{DAGSTER_YAML}.{os.getpid()}.{threading.get_ident()}"
        partial.write_text(DAGSTER_YAML_TEXT, encoding="utf-8")
        partial.replace(config)
    return home


def benchmarks_root() -> Path:
    return Path(os.environ.get("EVALFLOW_BENCHMARKS") or DEFAULT_BENCHMARKS).resolve()


def default_judge() -> str:
    return os.environ.get("EVALFLOW_JUDGE") or DEFAULT_JUDGE


def rank_judge() -> str | None:
    """The judge every benchmark is ranked by (`EVALFLOW_RANK_JUDGE`); None: per benchmark,
    the judge whose results cover the most runs (`evalflow.domain.ranking.judge_choice`)."""
    return os.environ.get("EVALFLOW_RANK_JUDGE") or None
