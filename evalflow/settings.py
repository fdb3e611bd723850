"""Operator settings: where the warehouse and benchmarks live and which judge scores.

Read at run time (never at import) from the environment, with documented defaults:
`EVALFLOW_WAREHOUSE` (default `data/warehouse`; a path or a URI such as `s3://bucket/prefix`),
`EVALFLOW_WORKDIR` (local artifacts of a URI warehouse), `EVALFLOW_BENCHMARKS` (default
`data/benchmarks`), `EVALFLOW_JUDGE` (default `heuristic`).
"""

from __future__ import annotations

import os
from pathlib import Path

from evalflow.storage.warehouse import Warehouse

DEFAULT_WAREHOUSE = "data/warehouse"
DEFAULT_BENCHMARKS = "data/benchmarks"
DEFAULT_JUDGE = "heuristic"


def warehouse_root() -> str:
    return os.environ.get("EVALFLOW_WAREHOUSE") or DEFAULT_WAREHOUSE


def warehouse(root: str | None = None) -> Warehouse:
    """The warehouse; a URI root gets `EVALFLOW_WORKDIR` as its local work directory."""
    value = root or warehouse_root()
    if "://" not in value:
        return Warehouse(str(Path(value).resolve()))
    return Warehouse(value, os.environ.get("EVALFLOW_WORKDIR", ""))


def benchmarks_root() -> Path:
    return Path(os.environ.get("EVALFLOW_BENCHMARKS") or DEFAULT_BENCHMARKS).resolve()


def default_judge() -> str:
    return os.environ.get("EVALFLOW_JUDGE") or DEFAULT_JUDGE
