"""The gold-corpus index `plugin init` writes and Elo reads (SPEC §2).

One JSON document: per skill its name, path (posix, relative to the plugins directory),
description (for the offline router's negatives), the sha256 of its SKILL.md bytes, its
static dimension scores, anti-patterns and quick composite. Entries are sorted by path and
floats rounded to 6 places, with no timestamp, so the same plugins directory always yields
byte-identical JSON.

The index records the `depth` its scores were made at, so Elo plays a candidate with the same
layers (`evaluate.py`). `plugin init` scores at quick depth; an index written before the field
existed was necessarily quick, hence the default.

It also records `plugins_dir`, the directory the skill paths are relative to (posix; relative
to the corpus directory when `plugin init` was given one, else absolute), so a judged Elo can
read an opponent's SKILL.md and check it against its sha256 (the index stores no text). The
field is optional within `INDEX_VERSION` 1: an index written before it loads as before, and
only the judged Elo refuses it (`require_plugins_dir`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalflow.errors import InputError

INDEX_FILENAME = "index.json"
INDEX_FORMAT = "evalflow-plugineval-corpus"
INDEX_VERSION = 1
_DECIMALS = 6


class CorpusEntry(BaseModel):
    """One corpus skill."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    path: str
    description: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    dimensions: dict[str, float]
    anti_patterns: list[str]
    composite_quick: float


class CorpusIndex(BaseModel):
    """The whole index."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: Literal["evalflow-plugineval-corpus"] = INDEX_FORMAT
    version: Literal[1] = INDEX_VERSION
    depth: Literal["quick", "standard", "deep"] = "quick"
    plugins_dir: str | None = None
    skills: list[CorpusEntry]

    def scores_by_path(self, exclude_sha256: str | None = None) -> dict[str, dict[str, float]]:
        """Dimension scores keyed by path, leaving out the candidate's own content."""
        return {e.path: dict(e.dimensions) for e in self.skills if e.sha256 != exclude_sha256}

    def negatives(self, exclude_sha256: str | None = None) -> list[tuple[str, str]]:
        """(name, description) of the corpus skills, for the router's catalogue."""
        return [(e.name, e.description) for e in self.skills if e.sha256 != exclude_sha256]


def make_entry(
    *,
    name: str,
    path: str,
    description: str,
    sha256: str,
    dimensions: dict[str, float],
    anti_patterns: Iterable[str],
    composite_quick: float,
) -> CorpusEntry:
    return CorpusEntry(
        name=name,
        path=path,
        description=description,
        sha256=sha256,
        dimensions={k: round(v, _DECIMALS) for k, v in sorted(dimensions.items())},
        anti_patterns=list(anti_patterns),
        composite_quick=round(composite_quick, _DECIMALS),
    )


def build_index(entries: Iterable[CorpusEntry], plugins_dir: str | None = None) -> CorpusIndex:
    return CorpusIndex(plugins_dir=plugins_dir, skills=sorted(entries, key=lambda e: e.path))


def require_plugins_dir(index: CorpusIndex, where: str) -> str:
    """The recorded plugins directory; an index from before the field is an `InputError`."""
    if index.plugins_dir is None:
        raise InputError(
            "the corpus index does not record its plugins directory, which the judged "
            "(pairwise) Elo needs to read opponents' SKILL.md",
            where=where,
            fix="re-run `evalflow plugin init PLUGINS_DIR --corpus-dir DIR`",
        )
    return index.plugins_dir


def dump_index(index: CorpusIndex) -> str:
    return json.dumps(index.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def load_index(text: str, where: str) -> CorpusIndex:
    """Parse an index; anything malformed is an `InputError` naming the file."""
    try:
        return CorpusIndex.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "document"
        raise InputError(
            f"not a PluginEval corpus index ({loc}: {first['msg']})",
            where=where,
            fix="rebuild it with `evalflow plugin init PLUGINS_DIR --corpus-dir DIR`",
        ) from exc
