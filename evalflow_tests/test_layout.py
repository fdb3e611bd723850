"""The folder tree is the architecture (docs/architecture.md): each layer imports only the
layers below it, and Dagster stays in the shell. Lazy imports inside functions count too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "evalflow"
EVALFLOW = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}

# Layer → the evalflow packages it may import (besides itself, `errors` and the package face).
ALLOWED: dict[str, set[str]] = {
    "domain": set(),
    "repo": {"domain"},
    "importers": {"domain"},
    "reports": {"domain", "judges"},
    "judges": {"domain", "repo"},
    "gates": {"domain", "repo"},
    "storage": {"domain"},
    "io": {"domain", "repo", "judges", "gates", "importers", "storage", "reports"},
    "pipeline": {"domain", "repo", "judges", "gates", "importers", "storage", "reports", "io"},
    "cli": EVALFLOW - {"cli"},
}
DAGSTER_LAYERS = {"pipeline", "cli"}
# Third-party modules the functional core must never see.
CORE_FORBIDDEN = ("dagster", "duckdb", "anthropic", "click", "rich")


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            if node.module == "evalflow":
                names.update(f"evalflow.{alias.name}" for alias in node.names)
    return names


def test_every_package_has_a_layer() -> None:
    assert set(ALLOWED) == EVALFLOW, "a new evalflow/ package needs a row in ALLOWED"
    loose = sorted(
        p.name for p in PACKAGE.glob("*.py") if p.name not in {"__init__.py", "errors.py"}
    )
    assert loose == [], f"modules loose at evalflow/: {loose} (put them in their layer)"


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_layers_below(layer: str) -> None:
    wrong: list[str] = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        for name in imported_modules(path):
            parts = name.split(".")
            top = parts[0]
            if top == "evalflow" and len(parts) > 1 and parts[1] in EVALFLOW:
                if parts[1] != layer and parts[1] not in ALLOWED[layer]:
                    wrong.append(f"{path.relative_to(PACKAGE)} imports {name}")
            elif top == "dagster" and layer not in DAGSTER_LAYERS:
                wrong.append(f"{path.relative_to(PACKAGE)} imports dagster")
            elif layer == "domain" and top in CORE_FORBIDDEN:
                wrong.append(f"{path.relative_to(PACKAGE)} imports {top}")
    assert wrong == []
