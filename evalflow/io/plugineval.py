"""File-system adapter for PluginEval: finds skills, reads them, answers link existence.

Owns everything `evalflow.domain.plugineval` must not do: walking directories, reading
SKILL.md bytes, listing `references/` and `assets/` (size, binary or not), reading a plugin
manifest (`.claude-plugin/plugin.json` or `plugin.json`) and `agents/*.md`, reading and
writing the corpus index, and running a whole PATH (one skill dir, a SKILL.md, or a
directory of skills) in one process (PLUGINEVAL fix 9).

A skill folder is untrusted input, so every read goes through `_Confined`:
- a path whose real location leaves the folder it belongs to (the skill directory; the
  plugin root for the manifest and agents) is not followed — `SYMLINK_OUTSIDE_SKILL`;
- only regular files are opened: a FIFO, device or socket is refused from its `lstat`
  before any `open` (a FIFO named SKILL.md would block forever) — `NOT_A_REGULAR_FILE`;
  the open itself uses `O_NOFOLLOW | O_NONBLOCK` and the descriptor must be the file that
  was checked, so a swap between check and open cannot smuggle another file in;
- at most `MAX_FILE_BYTES` (1 MiB) of one file is read — `FILE_OVER_SIZE_CAP` — and at most
  `MAX_SKILL_BYTES` (8 MiB) per skill, SKILL.md included; files past that budget are left
  out of the listing — `SKILL_OVER_SIZE_CAP`.
Link targets are only tested for existence, never read, and only inside the plugin root (or
the folder holding the skill when it has no plugin) or a sibling plugin next to it (a folder
beside the plugin root holding a plugin manifest), so a link cannot probe the host.
"""

from __future__ import annotations

import codecs
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
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
MAX_FILE_BYTES = 1 << 20
MAX_SKILL_BYTES = 8 << 20
# UTF-8 needs at most 4 bytes a character: reading this many bytes fills a character budget.
_UTF8_MAX = 4
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
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
    if os.path.lexists(path / SKILL_FILENAME):
        # Any entry named SKILL.md (a directory too) makes PATH one skill; reading it decides
        # what it may be.
        return [path], False
    found: list[Path] = []
    for root, dirs, files in os.walk(path):
        if SKILL_FILENAME in files or SKILL_FILENAME in dirs:
            found.append(Path(root))
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS and d != SKILL_FILENAME
        )
    if not found:
        raise InputError(
            f"no {SKILL_FILENAME} found",
            where=str(path),
            fix="point at a skill directory or a directory that contains skills",
        )
    return sorted(found, key=lambda p: p.as_posix()), True


def _names_an_entry(path: Path) -> bool:
    """`path` exists as anything but a directory (a dangling symlink or a FIFO counts)."""
    try:
        return not stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _kind_of(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISDIR, "directory"),
    ):
        if test(mode):
            return name
    return "special file"


def _within(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


class _Confined:
    """Reads regular files under one folder, within a byte budget, recording refusals.

    `where` is the display path of the folder; findings name files relative to it.
    """

    def __init__(self, folder: Path, where: str, budget: int = MAX_SKILL_BYTES) -> None:
        self.folder = folder
        self.root = os.path.realpath(folder)
        self.where = where
        self.budget = budget
        self.findings: list[Finding] = []

    def _refuse(self, code: str, rel: str, message: str) -> None:
        self.findings.append(Finding(code, "warning", message, f"{self.where}/{rel}"))

    def _realpath(self, rel: str) -> str:
        """`os.path.realpath(folder / rel)`, without resolving the folder's own path again:
        from the folder's real path, component by component, handing any symlink, `.` or
        `..` to `realpath` (which checks every component of the whole path, ≈ 10 lstat calls
        a file, most of reading a skill's listing)."""
        path = self.root
        for part in rel.split("/"):
            if part in ("", ".", ".."):
                return os.path.realpath(self.folder / rel)
            path = f"{path}/{part}"
            try:
                if stat.S_ISLNK(os.lstat(path).st_mode):
                    return os.path.realpath(self.folder / rel)
            except OSError:
                return os.path.realpath(self.folder / rel)
        return path

    def check(self, rel: str) -> tuple[str, os.stat_result] | None:
        """(real path, stat) of `rel` when it is a regular file inside the folder, else None
        (with a finding for a symlink that leaves it or a non-regular file)."""
        real = self._realpath(rel)
        if not _within(real, self.root):
            self._refuse(
                "SYMLINK_OUTSIDE_SKILL",
                rel,
                f"{rel} is a symbolic link to a path outside {self.where}; not followed",
            )
            return None
        try:
            info = os.lstat(real)
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode):
            self._refuse(
                "NOT_A_REGULAR_FILE",
                rel,
                f"{rel} is a {_kind_of(info.st_mode)}; only regular files are read",
            )
            return None
        if info.st_nlink > 1:
            # A hard link is the same file as one elsewhere (a host secret linked into the
            # skill); unlike a symlink, its path cannot tell where, so none is read.
            self._refuse(
                "HARD_LINKED_FILE",
                rel,
                f"{rel} has {info.st_nlink} hard links (it is also a file elsewhere); "
                "only files with one link are read",
            )
            return None
        return real, info

    def read(self, rel: str, limit: int = MAX_FILE_BYTES) -> bytes | None:
        """Up to `limit` bytes of `rel` (never more than `MAX_FILE_BYTES`), or None when it is
        refused or unreadable. Does not charge the budget (callers decide what counts)."""
        checked = self.check(rel)
        if checked is None:
            return None
        real, info = checked
        return _read_checked(real, info, min(limit, MAX_FILE_BYTES))


def _read_checked(real: str, info: os.stat_result, limit: int) -> bytes | None:
    """Read the regular file `info` describes; None if `real` is no longer that file."""
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except OSError:
        return None
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (
            info.st_dev,
            info.st_ino,
        ):
            return None
        chunks: list[bytes] = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _is_binary(chunk: bytes) -> bool:
    """NUL bytes or invalid UTF-8 in the first 8 KiB."""
    if b"\x00" in chunk:
        return True
    try:
        codecs.getincrementaldecoder("utf-8")().decode(chunk, final=False)
    except UnicodeDecodeError:
        return True
    return False


def _list_files(reader: _Confined, sub: str) -> list[FileEntry]:
    """Regular files under `sub` (hidden ones skipped), sorted, each charged to the budget."""
    base = reader.folder / sub
    if not os.path.isdir(base):
        return []
    if not _within(os.path.realpath(base), reader.root):
        reader.check(sub)  # records SYMLINK_OUTSIDE_SKILL for the folder itself
        return []
    out: list[FileEntry] = []
    left_out = 0
    for root, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        folder = Path(root)
        # os.walk lists a symlinked directory but never descends into it; say so when it
        # points outside rather than dropping it silently.
        for name in dirs:
            if (folder / name).is_symlink():
                reader.check((folder / name).relative_to(reader.folder).as_posix())
        for name in sorted(files):
            if name.startswith("."):
                continue
            rel = (folder / name).relative_to(reader.folder).as_posix()
            checked = reader.check(rel)
            if checked is None:
                continue
            real, info = checked
            charge = min(info.st_size, MAX_FILE_BYTES)
            if charge > reader.budget:
                left_out += 1
                continue
            reader.budget -= charge
            if info.st_size > MAX_FILE_BYTES:
                reader._refuse(
                    "FILE_OVER_SIZE_CAP",
                    rel,
                    f"{rel} has {info.st_size} bytes; only its first {MAX_FILE_BYTES} are read",
                )
            chunk = _read_checked(real, info, SNIFF_BYTES) if info.st_size else b""
            if chunk is None:
                continue
            out.append(FileEntry(rel, info.st_size, bool(chunk) and _is_binary(chunk)))
    if left_out:
        reader.findings.append(
            Finding(
                "SKILL_OVER_SIZE_CAP",
                "warning",
                f"{left_out} file(s) under {sub}/ left out: the skill passes its "
                f"{MAX_SKILL_BYTES}-byte read budget",
                f"{reader.where}/{sub}",
            )
        )
    return out


def _read_manifest(reader: _Confined) -> tuple[str | None, list[Finding]] | None:
    for rel in _MANIFESTS:
        if not _names_an_entry(reader.folder / rel):
            continue
        where = (reader.folder / rel).as_posix()
        refused = len(reader.findings)
        raw = reader.read(rel)
        if raw is None:
            problems = reader.findings[refused:] or [
                Finding("MANIFEST_UNREADABLE", "warning", "plugin manifest unreadable", where)
            ]
            del reader.findings[refused:]
            return None, problems
        try:
            data = json.loads(raw.decode("utf-8-sig"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
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
        return (str(name) if name else reader.folder.name), []
    return None


def _read_agents(reader: _Confined) -> tuple[tuple[str, str], ...]:
    agents_dir = reader.folder / "agents"
    if not agents_dir.is_dir():
        return ()
    out: list[tuple[str, str]] = []
    for path in sorted(agents_dir.glob("*.md")):
        rel = path.relative_to(reader.folder).as_posix()
        raw = reader.read(rel, min(MAX_FILE_BYTES, reader.budget))
        if raw is None:
            continue
        reader.budget -= len(raw)
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
                # The manifest and agents belong to the plugin root: reads stay inside it.
                reader = _Confined(candidate, candidate.as_posix())
                manifest = _read_manifest(reader)
                info = None
                if manifest is not None:
                    name, findings = manifest
                    agents = _read_agents(reader)
                    info = PluginInfo(candidate, name, agents, (*findings, *reader.findings))
                self._cache[candidate] = info
            if info is not None:
                return info
            if candidate.parent == candidate:
                break
            candidate = candidate.parent
        return None


def read_skill_files(skill_dir: Path, plugin: PluginInfo | None = None) -> SkillFiles:
    """Read SKILL.md bytes and list references/ and assets/, confined to `skill_dir`.

    A SKILL.md that is refused (a symlink out of the skill, a FIFO, a device, a directory, a
    hard link), missing or unreadable is an `InputError` naming why: the skill is never scored
    as empty, nor sent to a judge.
    """
    path = skill_dir / SKILL_FILENAME
    reader = _Confined(skill_dir, skill_dir.as_posix())
    checked = reader.check(SKILL_FILENAME) if os.path.lexists(path) else None
    raw = b""
    if checked is not None:
        real, info = checked
        read = _read_checked(real, info, MAX_FILE_BYTES)
        if read is None:
            raise InputError(
                f"cannot read {SKILL_FILENAME}",
                where=path.as_posix(),
                fix="check the path and its permissions",
            )
        raw = read
        if info.st_size > MAX_FILE_BYTES:
            reader._refuse(
                "FILE_OVER_SIZE_CAP",
                SKILL_FILENAME,
                f"{SKILL_FILENAME} has {info.st_size} bytes; only its first "
                f"{MAX_FILE_BYTES} are read",
            )
    elif reader.findings:
        raise InputError(
            f"{SKILL_FILENAME} refused: {reader.findings[-1].message}",
            where=path.as_posix(),
            fix=f"make {SKILL_FILENAME} a regular file of the skill with a single link",
        )
    else:
        raise InputError(
            f"cannot read {SKILL_FILENAME}: no such file",
            where=path.as_posix(),
            fix="check the path and its permissions",
        )
    reader.budget -= len(raw)
    files = tuple(_list_files(reader, "references") + _list_files(reader, "assets"))
    return SkillFiles(
        dir_name=skill_dir.resolve().name if skill_dir.name in ("", ".", "..") else skill_dir.name,
        skill_md=raw,
        files=files,
        location=skill_dir.as_posix(),
        plugin=plugin.name if plugin else None,
        io_findings=(*(plugin.findings if plugin else ()), *reader.findings),
    )


def _sibling_plugin(lexical: str, plugin_root: str) -> str | None:
    """The plugin directory next to `plugin_root` that `lexical` lies in, if any: a directory
    of the folder holding the plugin (a marketplace's `plugins/`) with a plugin manifest."""
    holder = os.path.dirname(plugin_root)
    if not _within(lexical, holder) or lexical == holder:
        return None
    sibling = os.path.join(holder, os.path.relpath(lexical, holder).split(os.sep, 1)[0])
    if any(_names_an_entry(Path(sibling) / rel) for rel in _MANIFESTS):
        return sibling
    return None


def existing_targets(
    skill_dir: Path, bound: Path | None = None, *, plugin_root: bool = False
) -> Callable[[ParsedSkill], frozenset[str]]:
    """The resolver `evaluate_skill` needs: which link candidates exist.

    Existence only, and only inside `bound` (the plugin root; by default the folder holding
    the skill, where sibling skills live) or, when `bound` is a plugin root, inside a sibling
    plugin next to it (seed 004 resolves a `../` cross-reference from `skills/`, which reaches
    the marketplace's other plugins): a link such as `../../../../etc/passwd` never probes the
    host, and a target whose real path leaves the folder it was found in does not exist.
    """
    base = os.path.abspath(bound or skill_dir.parent)
    root = os.path.realpath(base)

    def exists(candidate: str) -> bool:
        lexical = os.path.normpath(os.path.join(os.path.abspath(skill_dir), candidate))
        confine = root
        if not _within(lexical, base):
            sibling = _sibling_plugin(lexical, base) if plugin_root else None
            if sibling is None:
                return False
            confine = os.path.realpath(sibling)
            if not _within(confine, os.path.realpath(os.path.dirname(base))):
                return False  # a "sibling" that is a symlink elsewhere is not one
        real = os.path.realpath(lexical)
        return _within(real, confine) and os.path.exists(real)

    def resolve(parsed: ParsedSkill) -> frozenset[str]:
        return frozenset(c for check in parsed.link_checks for c in check.candidates if exists(c))

    return resolve


def reference_texts(skill_dir: Path, parsed: ParsedSkill) -> tuple[tuple[str, str], ...]:
    """Text of the non-binary reference files, capped in total, for the judge.

    Each file is checked again when read (confined to `skill_dir`, regular files only), so
    one swapped for a symlink after it was listed is skipped, never sent.
    """
    reader = _Confined(skill_dir, skill_dir.as_posix())
    out: list[tuple[str, str]] = []
    budget = REFERENCE_TEXT_LIMIT
    for f in parsed.reference_files:
        if f.binary or f.size == 0 or budget <= 0:
            continue
        raw = reader.read(f.relpath, budget * _UTF8_MAX)
        if raw is None:
            continue
        text = raw.decode("utf-8", errors="replace")
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
            evaluate_skill(
                files,
                # A plugin manifest inside the skill itself still lets siblings resolve.
                existing_targets(
                    skill_dir,
                    plugin.root if plugin and plugin.root != skill_dir else None,
                    plugin_root=plugin is not None and plugin.root != skill_dir,
                ),
                opts,
                judge_input=judge_input,
            )
        )
    return out, is_batch


def build_corpus(plugins_dir: Path, corpus_dir: Path | None = None) -> CorpusIndex:
    """Static-score every skill under PLUGINS_DIR into a corpus index (deterministic).

    The index records PLUGINS_DIR relative to `corpus_dir` (the index's folder) when given,
    else absolute, so the judged Elo can read opponents' SKILL.md from it.
    """
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
    recorded = os.path.realpath(plugins_dir)
    if corpus_dir is not None:
        recorded = os.path.relpath(recorded, os.path.realpath(corpus_dir))
    return build_index(entries, Path(recorded).as_posix())


def corpus_skill_reader(corpus_dir: Path, index: CorpusIndex) -> Callable[[str], bytes | None]:
    """Read a corpus skill's SKILL.md bytes by its index path, confined to the recorded
    plugins directory (the index is input: a path such as `../../etc` reads nothing)."""
    from evalflow.domain.plugineval.corpus import INDEX_FILENAME, require_plugins_dir

    where = (corpus_dir / INDEX_FILENAME).as_posix()
    root = corpus_dir / require_plugins_dir(index, where)
    if not root.is_dir():
        raise InputError(
            f"the corpus's plugins directory {root.as_posix()} is not a directory",
            where=where,
            fix="re-run `evalflow plugin init PLUGINS_DIR --corpus-dir DIR`",
        )
    reader = _Confined(root, root.as_posix())

    def read(path: str) -> bytes | None:
        return reader.read((PurePosixPath(path) / SKILL_FILENAME).as_posix())

    return read


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
