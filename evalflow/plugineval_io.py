"""File-system adapter for PluginEval: finds skills, reads them, answers link existence.

Owns everything `evalflow.domain.plugineval` must not do: walking directories, reading
SKILL.md bytes, listing `references/` and `assets/` (size, binary or not), reading a plugin
manifest (`.claude-plugin/plugin.json` or `plugin.json`) and `agents/*.md`, reading and
writing the corpus index, and running a whole PATH (one skill dir, a SKILL.md, or a
directory of skills) in one process (PLUGINEVAL fix 9).
"""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from evalflow.domain.plugineval.evaluate import EvalOptions, SkillEvaluation, evaluate_skill
from evalflow.domain.plugineval.model import FileEntry, Finding, SkillFiles
from evalflow.domain.plugineval.parser import ParsedSkill, decode_skill_md, split_frontmatter
from evalflow.errors import InputError

if TYPE_CHECKING:
    from evalflow.domain.plugineval.corpus import CorpusIndex
    from evalflow.domain.plugineval.judge_layer import JudgeInput

SKILL_FILENAME = "SKILL.md"
SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__"})
SNIFF_BYTES = 8192
REFERENCE_TEXT_LIMIT = 60_000
_MANIFESTS = (".claude-plugin/plugin.json", "plugin.json")
_PLUGIN_SEARCH_DEPTH = 3


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """The plugin a skill belongs to: manifest name, agents, manifest problems."""

    root: Path
    name: str | None
    agents: tuple[tuple[str, str], ...]
    findings: tuple[Finding, ...]


def discover_skills(path: Path) -> tuple[list[Path], bool]:
    """Skill directories under PATH and whether PATH is a batch (a directory of skills)."""
    if not path.exists():
        raise InputError(
            "no such file or directory",
            where=str(path),
            fix="pass a skill directory, its SKILL.md, or a directory of skills",
        )
    if path.is_file():
        if path.name.lower() != SKILL_FILENAME.lower():
            raise InputError(
                f"expected a {SKILL_FILENAME} file",
                where=str(path),
                fix="pass the skill directory or its SKILL.md",
            )
        return [path.parent], False
    if (path / SKILL_FILENAME).is_file():
        return [path], False
    found: list[Path] = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        if SKILL_FILENAME in files:
            found.append(Path(root))
    if not found:
        raise InputError(
            f"no {SKILL_FILENAME} found",
            where=str(path),
            fix="point at a skill directory or a directory that contains skills",
        )
    return sorted(found, key=lambda p: p.as_posix()), True


def _is_binary(path: Path) -> bool:
    """NUL bytes or invalid UTF-8 in the first 8 KiB."""
    with path.open("rb") as fh:
        chunk = fh.read(SNIFF_BYTES)
    if b"\x00" in chunk:
        return True
    try:
        codecs.getincrementaldecoder("utf-8")().decode(chunk, final=False)
    except UnicodeDecodeError:
        return True
    return False


def _list_files(skill_dir: Path, sub: str) -> list[FileEntry]:
    base = skill_dir / sub
    if not base.is_dir():
        return []
    out: list[FileEntry] = []
    for root, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            full = Path(root) / name
            try:
                size = full.stat().st_size
                binary = size > 0 and _is_binary(full)
            except OSError:
                continue
            out.append(FileEntry(full.relative_to(skill_dir).as_posix(), size, binary))
    return out


def _read_manifest(root: Path) -> tuple[str | None, list[Finding]] | None:
    for rel in _MANIFESTS:
        path = root / rel
        if not path.is_file():
            continue
        where = path.as_posix()
        try:
            data = json.loads(path.read_bytes().decode("utf-8-sig"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            return None, [
                Finding(
                    "MANIFEST_UNREADABLE", "warning", f"plugin manifest unreadable: {exc}", where
                )
            ]
        if not isinstance(data, dict):
            return None, [
                Finding("MANIFEST_NOT_OBJECT", "warning", "plugin manifest is not an object", where)
            ]
        name = data.get("name")
        return (str(name) if name else root.name), []
    return None


def _read_agents(root: Path) -> tuple[tuple[str, str], ...]:
    agents_dir = root / "agents"
    if not agents_dir.is_dir():
        return ()
    out: list[tuple[str, str]] = []
    for path in sorted(agents_dir.glob("*.md")):
        try:
            raw = path.read_bytes()
        except OSError:
            continue
        text, _ = decode_skill_md(raw, path.as_posix())
        fm, _, _ = split_frontmatter(text, path.as_posix())
        desc = fm.get("description")
        out.append((str(fm.get("name") or path.stem), desc if isinstance(desc, str) else ""))
    return tuple(out)


class PluginLocator:
    """Finds (and caches) the plugin root above a skill directory."""

    def __init__(self) -> None:
        self._cache: dict[Path, PluginInfo | None] = {}

    def for_skill(self, skill_dir: Path) -> PluginInfo | None:
        candidate = skill_dir
        for _ in range(_PLUGIN_SEARCH_DEPTH + 1):
            if candidate in self._cache:
                info = self._cache[candidate]
            else:
                manifest = _read_manifest(candidate)
                info = None
                if manifest is not None:
                    name, findings = manifest
                    info = PluginInfo(candidate, name, _read_agents(candidate), tuple(findings))
                self._cache[candidate] = info
            if info is not None:
                return info
            if candidate.parent == candidate:
                break
            candidate = candidate.parent
        return None


def read_skill_files(skill_dir: Path, plugin: PluginInfo | None = None) -> SkillFiles:
    """Read SKILL.md bytes and list references/ and assets/."""
    path = skill_dir / SKILL_FILENAME
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(
            f"cannot read {SKILL_FILENAME}: {exc.strerror}",
            where=path.as_posix(),
            fix="check the path and its permissions",
        ) from exc
    files = tuple(_list_files(skill_dir, "references") + _list_files(skill_dir, "assets"))
    return SkillFiles(
        dir_name=skill_dir.resolve().name if skill_dir.name in ("", ".", "..") else skill_dir.name,
        skill_md=raw,
        files=files,
        location=skill_dir.as_posix(),
        plugin=plugin.name if plugin else None,
        io_findings=plugin.findings if plugin else (),
    )


def existing_targets(skill_dir: Path) -> Callable[[ParsedSkill], frozenset[str]]:
    """The resolver `evaluate_skill` needs: which link candidates exist under `skill_dir`."""

    def resolve(parsed: ParsedSkill) -> frozenset[str]:
        return frozenset(
            c
            for check in parsed.link_checks
            for c in check.candidates
            if os.path.exists(os.path.join(skill_dir, c))
        )

    return resolve


def reference_texts(skill_dir: Path, parsed: ParsedSkill) -> tuple[tuple[str, str], ...]:
    """Text of the non-binary reference files, capped in total, for the judge."""
    out: list[tuple[str, str]] = []
    budget = REFERENCE_TEXT_LIMIT
    for f in parsed.reference_files:
        if f.binary or f.size == 0 or budget <= 0:
            continue
        try:
            text = (skill_dir / f.relpath).read_bytes().decode("utf-8", errors="replace")
        except OSError:
            continue
        out.append((f.relpath, text[:budget]))
        budget -= len(text)
    return tuple(out)


def load_corpus(corpus_dir: Path) -> CorpusIndex:
    """Read `<corpus_dir>/index.json` (pydantic is imported only when a corpus is used)."""
    from evalflow.domain.plugineval.corpus import INDEX_FILENAME, load_index

    path = corpus_dir / INDEX_FILENAME
    if not path.is_file():
        raise InputError(
            "no corpus index",
            where=path.as_posix(),
            fix="build it with `evalflow plugin init PLUGINS_DIR --corpus-dir DIR`",
        )
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read corpus index: {exc}", where=path.as_posix()) from exc
    return load_index(text, path.as_posix())


def evaluate_path(
    path: Path,
    options: EvalOptions,
) -> tuple[list[SkillEvaluation], bool]:
    """Score every skill PATH designates, in this process; returns (evaluations, is_batch)."""
    skill_dirs, is_batch = discover_skills(path)
    locator = PluginLocator()
    out: list[SkillEvaluation] = []
    for skill_dir in skill_dirs:
        plugin = locator.for_skill(skill_dir)
        files = read_skill_files(skill_dir, plugin)
        opts = options
        if plugin is not None and plugin.agents:
            opts = replace(options, negatives=(*options.negatives, *plugin.agents))

        def judge_input(
            parsed: ParsedSkill, base: JudgeInput, _dir: Path = skill_dir
        ) -> JudgeInput:
            return replace(base, references=reference_texts(_dir, parsed))

        out.append(
            evaluate_skill(files, existing_targets(skill_dir), opts, judge_input=judge_input)
        )
    return out, is_batch


def build_corpus(plugins_dir: Path) -> CorpusIndex:
    """Static-score every skill under PLUGINS_DIR into a corpus index (deterministic)."""
    from evalflow.domain.plugineval.corpus import build_index, make_entry

    if not plugins_dir.is_dir():
        raise InputError(
            "not a directory",
            where=str(plugins_dir),
            fix="pass the directory that holds your plugins or skills",
        )
    evaluations, _ = evaluate_path(plugins_dir, EvalOptions(depth="quick"))
    entries = []
    for ev in evaluations:
        rel = Path(ev.parsed.location).relative_to(plugins_dir.as_posix()).as_posix()
        entries.append(
            make_entry(
                name=ev.parsed.name or ev.parsed.dir_name,
                path=rel,
                description=ev.parsed.description,
                sha256=ev.sha256,
                dimensions=ev.static.dimensions,
                anti_patterns=[a.flag for a in ev.static.anti_patterns],
                composite_quick=ev.composite.score or 0.0,
            )
        )
    return build_index(entries)


def write_corpus(corpus_dir: Path, index: CorpusIndex) -> Path:
    """Write the index atomically (temp file + rename)."""
    from evalflow.domain.plugineval.corpus import INDEX_FILENAME, dump_index

    try:
        corpus_dir.mkdir(parents=True, exist_ok=True)
        target = corpus_dir / INDEX_FILENAME
        tmp = corpus_dir / f".{INDEX_FILENAME}.tmp"
        tmp.write_text(dump_index(index), encoding="utf-8")
        tmp.replace(target)
    except OSError as exc:
        raise InputError(
            f"cannot write the corpus index: {exc.strerror}",
            where=corpus_dir.as_posix(),
            fix="choose a writable --corpus-dir",
        ) from exc
    return target
