"""Read-only repository tools an LLM judge calls: `list_files`, `grep`, `read_file`.

They are scoped to the `RepoSnapshot` at head, so a judge can read the evaluated repository
but never write to it (SPEC core rule 5), and every answer is reproducible from the snapshot.
The snapshot already leaves out symbolic links, submodules, binary files and files above its
size limit; asking for one of those gets a tool error that says why, never the bytes.

Rules:
- paths and globs are repository-relative POSIX paths; an absolute path, a `..` component or
  a backslash is refused with a tool error (no path traversal);
- `grep` searches the diff surface first, then the rest of the repository (SPEC §1 inputs:
  the diff surface is the first search scope) and answers `path:line: text` lines; the
  model's pattern runs on RE2 (`evalflow.domain.patterns`, bounded memory), linear in the
  line's length, and syntax RE2 lacks is a tool error that says so. Linear is not cheap: a
  search costs up to (program size × line length), and `((.*a){30}){30}` compiles to ~10,000
  instructions (39 s per 100 KB), so a program above `EVALFLOW_TOOL_RE2_PROGRAM` instructions
  is refused, which bounds one line's search through the file-size bound;
- `list_files` and `grep` stop after `EVALFLOW_TOOL_CALL_S` seconds (checked between paths and
  lines) with a tool error the model can act on. Neither bound is in `ToolLimits` (the judge
  fingerprint): they change no answer that finishes within them;
- `read_file` answers numbered lines of one file;
- every answer is size-bounded (`ToolLimits`) and says when, and how, it was truncated;
- every successful call is recorded as a `Search` (pattern or glob, scope, hits), so an UNMET
  verdict carries the searches that were really run (SPEC core rule 2). A refused call read
  nothing and is not recorded as a search.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evalflow.domain.globs import glob_match, glob_problem
from evalflow.domain.models import Search
from evalflow.domain.patterns import UntrustedPatternError, compile_untrusted
from evalflow.repo.limits import TOOL_CALL_S, TOOL_PROGRAM_SIZE
from evalflow.repo.snapshot import RepoSnapshot

MAX_PATTERN_CHARS = 500
_LINE_CHARS = 400


class ToolLimits(BaseModel):
    """Bounds on one tool answer (they enter the judge fingerprint)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_matches: int = Field(default=200, ge=1, description="grep lines / list_files paths")
    max_lines: int = Field(default=400, ge=1, description="lines per read_file answer")
    max_chars: int = Field(default=20_000, ge=200, description="characters per answer")


@dataclass(frozen=True)
class ToolResult:
    text: str
    is_error: bool = False
    search: Search | None = None


TOOL_DEFINITIONS: tuple[dict[str, Any], ...] = (
    {
        "name": "list_files",
        "description": (
            "List the repository's text files at head whose path matches a glob "
            "('**' spans directories, '*' does not). Diff-surface files are marked '[diff]'."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "glob": {"type": "string", "description": "e.g. 'src/**/*.py'; '**' = all"}
            },
            "required": ["glob"],
            "additionalProperties": False,
        },
    },
    {
        "name": "grep",
        "description": (
            "Search file lines with an RE2 regular expression (Python syntax without "
            "backreferences or lookaround). Diff-surface files are searched first, then the "
            "rest of the repository. Answers 'path:line: text'."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "RE2 regex, matched per line"},
                "path_glob": {"type": "string", "description": "restrict to paths; '**' = all"},
            },
            "required": ["pattern", "path_glob"],
            "additionalProperties": False,
        },
    },
    {
        "name": "read_file",
        "description": (
            "Read numbered lines start..end (1-based, inclusive) of one file. Read the whole "
            "path end to end before crediting a behaviour."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "start": {"type": "integer", "description": "first line, 1-based"},
                "end": {"type": "integer", "description": "last line, inclusive"},
            },
            "required": ["path", "start", "end"],
            "additionalProperties": False,
        },
    },
)
TOOL_NAMES = frozenset(t["name"] for t in TOOL_DEFINITIONS)


def _bad_glob(glob: str) -> str | None:
    """Why `glob` may not be used (a bad path, or too many wildcards), or None."""
    return _bad_path(glob) or glob_problem(glob)


def _timed_out(tool: str, started: float, where: str) -> ToolResult:
    return ToolResult(
        f"error: {tool} stopped after {time.monotonic() - started:.0f} s (the per-call limit is "
        f"{TOOL_CALL_S.value():g} s) at {where}; narrow the pattern or the glob",
        is_error=True,
    )


def _bad_path(path: str) -> str | None:
    """Why `path` may not be used as a repository path, or None when it is plain."""
    if not path:
        return "empty path"
    if path.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", path) or "\\" in path:
        return f"{path!r} is not a relative POSIX path inside the repository"
    if ".." in path.split("/"):
        return f"{path!r} contains '..' (path traversal is not allowed)"
    return None


def blob_sha(text: str) -> str:
    """Git's blob id of a file's text (sha1 over `blob <size>\\0` and the UTF-8 bytes): the
    same as `git hash-object` for a UTF-8 file, so a verdict's record matches the tree."""
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


@dataclass
class RepoTools:
    """The three tools over one snapshot, with the log of searches they ran and the blob id
    of every file `read_file` answered from (`read`: path -> `blob_sha`)."""

    snapshot: RepoSnapshot
    diff_paths: tuple[str, ...]
    limits: ToolLimits = field(default_factory=ToolLimits)
    searches: list[Search] = field(default_factory=list)
    read: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._diff = [p for p in self.diff_paths if p in self.snapshot]
        diff = set(self._diff)
        self._rest = [p for p in sorted(self.snapshot.files) if p not in diff]
        self._skipped = dict(
            note.split(": skipped, ", 1) for note in self.snapshot.notes if ": skipped, " in note
        )

    def call(self, name: str, arguments: Any) -> ToolResult:
        """Run one tool call as the model sent it; bad arguments are a tool error."""
        if not isinstance(arguments, dict):
            return ToolResult(f"error: {name} expects an object of arguments", is_error=True)
        try:
            if name == "list_files":
                return self.list_files(_str(arguments, "glob", "**"))
            if name == "grep":
                return self.grep(_str(arguments, "pattern"), _str(arguments, "path_glob", "**"))
            if name == "read_file":
                start = _int(arguments, "start", 1)
                return self.read_file(
                    _str(arguments, "path"),
                    start,
                    _int(arguments, "end", start + self.limits.max_lines - 1),
                )
        except _ArgumentError as exc:
            return ToolResult(f"error: {name}: {exc}", is_error=True)
        return ToolResult(
            f"error: unknown tool {name!r}; use one of {', '.join(sorted(TOOL_NAMES))}",
            is_error=True,
        )

    def _record(self, pattern: str, scope: str, hits: int) -> Search:
        search = Search(pattern=pattern, scope=scope, hits=hits)
        self.searches.append(search)
        return search

    def _refuse_missing(self, path: str) -> ToolResult:
        reason = self._skipped.get(path)
        if reason is not None:
            return ToolResult(f"error: refused: {path} is not readable ({reason})", is_error=True)
        return ToolResult(
            f"error: no such text file at head: {path} (symbolic links, submodules, binary "
            "and oversized files are not in the snapshot; use list_files to find paths)",
            is_error=True,
        )

    def list_files(self, glob: str) -> ToolResult:
        problem = _bad_glob(glob)
        if problem:
            return ToolResult(f"error: refused: {problem}", is_error=True)
        diff = set(self._diff)
        started, seconds = time.monotonic(), TOOL_CALL_S.value()
        paths = []
        for path in self._diff + self._rest:
            if time.monotonic() - started > seconds:
                return _timed_out("list_files", started, path)
            if glob_match(path, glob):
                paths.append(path)
        lines = [f"{p} [diff]" if p in diff else p for p in paths]
        text = _bounded(lines, self.limits.max_matches, self.limits.max_chars, "paths", "glob")
        search = self._record(glob, "list_files: diff surface then repository", len(paths))
        return ToolResult(text or f"no file matches {glob!r}", search=search)

    def grep(self, pattern: str, path_glob: str) -> ToolResult:
        problem = _bad_glob(path_glob)
        if problem:
            return ToolResult(f"error: refused: {problem}", is_error=True)
        if len(pattern) > MAX_PATTERN_CHARS:
            return ToolResult(
                f"error: pattern longer than {MAX_PATTERN_CHARS} characters", is_error=True
            )
        try:
            regex = compile_untrusted(pattern)
        except UntrustedPatternError as exc:
            return ToolResult(f"error: invalid regular expression: {exc}", is_error=True)
        if regex.programsize > (program_limit := TOOL_PROGRAM_SIZE.value()):
            return ToolResult(
                f"error: refused: the pattern compiles to {regex.programsize} RE2 instructions; "
                f"the limit is {program_limit:g} ({TOOL_PROGRAM_SIZE.env}); use a simpler "
                "pattern (fewer nested repetitions)",
                is_error=True,
            )
        lines: list[str] = []
        started, seconds = time.monotonic(), TOOL_CALL_S.value()
        for path in self._diff + self._rest:
            if not glob_match(path, path_glob):
                continue
            for number, text in enumerate(self.snapshot.lines(path), start=1):
                if time.monotonic() - started > seconds:
                    return _timed_out("grep", started, f"{path}:{number}")
                if regex.search(text):
                    lines.append(f"{path}:{number}: {text[:_LINE_CHARS]}")
        answer = _bounded(
            lines, self.limits.max_matches, self.limits.max_chars, "matches", "pattern or path_glob"
        )
        search = self._record(
            pattern, f"grep {path_glob}: diff surface then repository", len(lines)
        )
        return ToolResult(answer or f"no line matches {pattern!r} in {path_glob!r}", search=search)

    def read_file(self, path: str, start: int, end: int) -> ToolResult:
        problem = _bad_path(path)
        if problem:
            return ToolResult(f"error: refused: {problem}", is_error=True)
        normal = posixpath.normpath(path.removeprefix("./"))
        if normal not in self.snapshot:
            return self._refuse_missing(normal)
        total = self.snapshot.files[normal].line_count
        self.read[normal] = blob_sha(self.snapshot.files[normal].text)
        if total == 0:
            return ToolResult(
                f"{normal} is empty (0 lines)", search=self._record(normal, normal, 0)
            )
        if start < 1 or start > total or end < start:
            return ToolResult(
                f"error: line range {start}-{end} is outside {normal} (1-{total})", is_error=True
            )
        last = min(end, total, start + self.limits.max_lines - 1)
        source = self.snapshot.lines(normal)
        out: list[str] = [f"{normal} lines {start}-{last} of {total}"]
        used = len(out[0])
        shown = start - 1
        for number in range(start, last + 1):
            line = f"{number}: {source[number - 1][: self.limits.max_chars]}"
            if used + len(line) + 1 > self.limits.max_chars:
                break
            out.append(line)
            used += len(line) + 1
            shown = number
        if shown < min(end, total):
            out.append(
                f"[truncated at line {shown}; call read_file with start={shown + 1} to go on]"
            )
        search = self._record(f"read {normal}:{start}-{shown}", normal, shown - start + 1)
        return ToolResult("\n".join(out), search=search)


class _ArgumentError(ValueError):
    pass


def _str(arguments: dict[str, Any], key: str, default: str | None = None) -> str:
    value = arguments.get(key, default)
    if not isinstance(value, str):
        raise _ArgumentError(f"argument {key!r} must be a string")
    return value


def _int(arguments: dict[str, Any], key: str, default: int) -> int:
    value = arguments.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _ArgumentError(f"argument {key!r} must be an integer")
    return value


def _bounded(lines: list[str], max_items: int, max_chars: int, noun: str, narrow: str) -> str:
    """The first lines within both limits, plus a note saying how many were left out."""
    kept: list[str] = []
    used = 0
    for line in lines[:max_items]:
        if used + len(line) + 1 > max_chars:
            break
        kept.append(line)
        used += len(line) + 1
    if len(kept) < len(lines):
        kept.append(
            f"[truncated: {len(lines) - len(kept)} more {noun} of {len(lines)} not shown; "
            f"narrow the {narrow}]"
        )
    return "\n".join(kept)
