"""Which manifest a partition key (`<benchmark>.<framework>.<run>`) evaluates.

Stored as the warehouse table `run_registry` (one row per run_key), so every process — the
CLI, the sensor, a worker on another machine — resolves a key the same way.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evalflow.errors import InputError
from evalflow.io.inputs import load_manifest
from evalflow.storage.warehouse import Warehouse

REGISTRY_TABLE = "run_registry"


def register_manifest(warehouse: Warehouse, manifest_path: Path) -> str:
    """Validate the manifest and record it; returns its run_key."""
    loaded = load_manifest(manifest_path)
    run_key = loaded.manifest.run_key
    m = loaded.manifest
    frame = pd.DataFrame(
        [
            {
                "run_key": run_key,
                "benchmark": m.benchmark,
                "framework": m.framework,
                "manifest_path": str(loaded.path),
            }
        ]
    )
    if not (
        warehouse.has(REGISTRY_TABLE, run_key)
        and warehouse.read(REGISTRY_TABLE, run_key).equals(frame)
    ):
        warehouse.write(REGISTRY_TABLE, frame, run_key)
    return run_key


def manifest_for(warehouse: Warehouse, run_key: str) -> Path:
    if not warehouse.has(REGISTRY_TABLE, run_key):
        raise InputError(
            f"unknown partition key {run_key!r}",
            fix="register its manifest first: evalflow register MANIFEST",
        )
    return Path(warehouse.read(REGISTRY_TABLE, run_key)["manifest_path"].iloc[0])


def registered_keys(warehouse: Warehouse) -> list[str]:
    if not warehouse.parts(REGISTRY_TABLE):
        return []
    return sorted(warehouse.read(REGISTRY_TABLE)["run_key"])
