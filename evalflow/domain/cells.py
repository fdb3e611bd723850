"""Cells of a warehouse frame: a list column (evidence, searches, flags, …) read as a list."""

from __future__ import annotations

import math
from typing import Any


def listed(cell: Any) -> list[Any]:
    """A list cell as a Python list, its structs as dicts: a list read back from Parquet is a
    numpy array, one built by an asset a list, and NULL (a judge that records no
    `read_blobs`) is no item."""
    if cell is None or (isinstance(cell, float) and math.isnan(cell)):
        return []
    return list(cell)
