"""Importers: a spec-driven framework's own artefacts → one `ImportedPRD` (`evalflow init`).

One module per format (`spec_kit`, `kiro`, `bmad`, `openspec`, `markdown`), each a pure
function of `{path: text}` (the repository files at one commit, read by the caller through
evalflow's hardened git layer) that returns the shared model of `evalflow.importers.model`.
Nothing here reads a file, runs git or runs the repository's code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from evalflow.importers import bmad, kiro, markdown, openspec, spec_kit
from evalflow.importers.model import ImportedPRD, PriorityMap

Importer = Callable[[Mapping[str, str], str | None, PriorityMap | None], ImportedPRD]

IMPORTERS: dict[str, Importer] = {
    "spec-kit": spec_kit.import_spec_kit,
    "kiro": kiro.import_kiro,
    "bmad": bmad.import_bmad,
    "openspec": openspec.import_openspec,
    "markdown": markdown.import_markdown,
}
FORMATS: tuple[str, ...] = tuple(IMPORTERS)
