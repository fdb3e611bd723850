"""Files generated from the models: JSON Schemas under `schemas/` and `docs/tables.md`.

One registry, one command (`evalflow schemas write`) and one test keep them current.
"""

from __future__ import annotations

from pathlib import Path

from evalflow.domain.rubric import schemas as rubric_schemas
from evalflow.storage import tables

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def generated_files() -> dict[str, str]:
    """Path relative to the project root → exact file content."""
    files = {
        f"schemas/{name}": rubric_schemas.render_schema(doc)
        for name, doc in rubric_schemas.schema_documents().items()
    }
    files |= {
        f"schemas/{name}": tables.render_schema(doc)
        for name, doc in tables.schema_documents().items()
    }
    files["docs/tables.md"] = tables.tables_markdown()
    return files


def stale_files(root: Path = PROJECT_ROOT) -> list[str]:
    return [
        name
        for name, text in generated_files().items()
        if not (root / name).is_file() or (root / name).read_text(encoding="utf-8") != text
    ]


def write_generated(root: Path = PROJECT_ROOT) -> list[Path]:
    written = []
    for name, text in generated_files().items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
