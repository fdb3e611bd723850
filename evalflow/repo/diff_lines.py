"""Which new-side lines a unified diff adds, per file: the input that separates feature
tests from pre-existing ones (SPEC §1, Test distribution D).

Pure text parsing of `git diff --unified=0 <base>..<head>` output (any context width
works): `git diff` headers with renames, copies, new and deleted files, binary patches,
quoted paths with C-style escapes, and `\\ No newline at end of file` markers. Plain
`diff -u` output without `diff --git` headers is accepted too. Hunk bodies are consumed by
their line counts, so an added line whose content starts with `++` is never mistaken for a
file header. Paths lose git's `a/` and `b/` prefixes; output from `--no-prefix` keeps its
paths as written, except that a path really starting with `a/` or `b/` cannot be told
apart from a prefixed one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


class DiffLines(BaseModel):
    """Per-file outcome of a unified diff, new-side paths throughout."""

    model_config = ConfigDict(frozen=True)

    added: dict[str, set[int]]
    new_files: set[str]
    deleted_files: set[str]
    renamed: dict[str, str]
    binary_files: set[str]


@dataclass(slots=True)
class _FileDiff:
    header_old: str | None = None
    header_new: str | None = None
    old: str | None = None
    new: str | None = None
    saw_old: bool = False
    saw_new: bool = False
    rename_from: str | None = None
    rename_to: str | None = None
    is_new: bool = False
    is_deleted: bool = False
    is_binary: bool = False
    added: set[int] = field(default_factory=set)

    def new_path(self) -> str | None:
        if self.saw_new:
            return self.new
        return self.rename_to or self.header_new

    def old_path(self) -> str | None:
        if self.saw_old:
            return self.old
        return self.rename_from or self.header_old


def added_lines_from_unified_diff(diff_text: str) -> dict[str, set[int]]:
    """New-side line numbers added by the diff, per surviving file (deleted files absent;
    files touched without added lines, e.g. pure renames, map to an empty set)."""
    return parse_unified_diff(diff_text).added


def parse_unified_diff(diff_text: str) -> DiffLines:
    """Parse unified diff text into added lines, new/deleted/renamed/binary files."""
    lines = [line.removesuffix("\r") for line in diff_text.split("\n")]
    files: list[_FileDiff] = []
    current: _FileDiff | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if line.startswith("diff --git "):
            current = _FileDiff()
            current.header_old, current.header_new = _git_header_paths(line[len("diff --git ") :])
            files.append(current)
            continue
        if line.startswith("--- ") and index < len(lines) and lines[index].startswith("+++ "):
            if current is None or current.saw_old:
                current = _FileDiff()
                files.append(current)
            current.saw_old = True
            current.old = _side_path(line[4:], "a/")
            continue
        if current is None:
            continue
        if line.startswith("+++ "):
            current.saw_new = True
            current.new = _side_path(line[4:], "b/")
        elif line.startswith(("rename from ", "copy from ")):
            current.rename_from = _unquote(line.split(" from ", 1)[1])
        elif line.startswith(("rename to ", "copy to ")):
            current.rename_to = _unquote(line.split(" to ", 1)[1])
        elif line.startswith("new file mode"):
            current.is_new = True
        elif line.startswith("deleted file mode"):
            current.is_deleted = True
        elif line.startswith(("Binary files ", "GIT binary patch")):
            current.is_binary = True
        elif line.startswith("@@ "):
            index = _read_hunk(line, lines, index, current.added)
    return _summarise(files)


def _read_hunk(header: str, lines: list[str], index: int, added: set[int]) -> int:
    match = _HUNK_RE.match(header)
    if match is None:
        return index
    old_left = int(match.group(2)) if match.group(2) is not None else 1
    position = int(match.group(3))
    new_left = int(match.group(4)) if match.group(4) is not None else 1
    # `--unified=0`'s usual hunk: its removed lines, then its added ones, nothing between (a
    # whole new file is one such hunk). Checked in bulk, then taken at once: parsing a
    # whole history's diff line by line took seconds per 100k lines.
    middle, end = index + old_left, index + old_left + new_left
    if (
        end <= len(lines)
        and all(line.startswith("-") for line in lines[index:middle])
        and all(line.startswith("+") for line in lines[middle:end])
    ):
        added.update(range(position, position + new_left))
        return end
    while (old_left > 0 or new_left > 0) and index < len(lines):
        line = lines[index]
        if line.startswith("+"):
            added.add(position)
            position += 1
            new_left -= 1
        elif line.startswith("-"):
            old_left -= 1
        elif line.startswith(" ") or line == "":
            position += 1
            old_left -= 1
            new_left -= 1
        elif not line.startswith("\\"):
            break
        index += 1
    return index


def _summarise(files: list[_FileDiff]) -> DiffLines:
    added: dict[str, set[int]] = {}
    new_files: set[str] = set()
    deleted: set[str] = set()
    renamed: dict[str, str] = {}
    binary: set[str] = set()
    for diff in files:
        new_path = diff.new_path()
        old_path = diff.old_path()
        if diff.is_deleted or new_path is None:
            if old_path is not None:
                deleted.add(old_path)
            continue
        added.setdefault(new_path, set()).update(diff.added)
        if diff.is_new or old_path is None:
            new_files.add(new_path)
        elif old_path != new_path:
            renamed[new_path] = old_path
        if diff.is_binary:
            binary.add(new_path)
    return DiffLines(
        added=added,
        new_files=new_files,
        deleted_files=deleted,
        renamed=renamed,
        binary_files=binary,
    )


def _side_path(raw: str, prefix: str) -> str | None:
    """Path of a `---`/`+++` line: None for /dev/null, prefix and timestamp removed."""
    text = raw if raw.startswith('"') else raw.split("\t", 1)[0]
    path = _unquote(text)
    if path == "/dev/null":
        return None
    return path.removeprefix(prefix)


def _git_header_paths(rest: str) -> tuple[str | None, str | None]:
    """Both paths of a `diff --git` header (only a fallback when no ---/+++ lines follow)."""
    if rest.startswith('"'):
        old, remainder = _split_quoted(rest)
        new = _unquote(remainder.strip())
        return old.removeprefix("a/"), new.removeprefix("b/")
    if rest.endswith('"'):
        cut = rest.rfind(' "')
        return rest[:cut].removeprefix("a/"), _unquote(rest[cut + 1 :]).removeprefix("b/")
    half = (len(rest) - 1) // 2
    if len(rest) % 2 == 1 and rest[half] == " " and rest[:half][2:] == rest[half + 1 :][2:]:
        return rest[:half].removeprefix("a/"), rest[half + 1 :].removeprefix("b/")
    cut = rest.find(" b/")
    if cut < 0:
        return None, None
    return rest[:cut].removeprefix("a/"), rest[cut + 1 :].removeprefix("b/")


def _split_quoted(text: str) -> tuple[str, str]:
    """Split a leading C-quoted token from the rest."""
    position = 1
    while position < len(text):
        if text[position] == "\\":
            position += 2
            continue
        if text[position] == '"':
            return _unquote(text[: position + 1]), text[position + 1 :]
        position += 1
    return _unquote(text), ""


def _unquote(text: str) -> str:
    """Undo git's C-style path quoting (`"t\\303\\251st.py"` → `tést.py`)."""
    if len(text) < 2 or not (text.startswith('"') and text.endswith('"')):
        return text
    body = text[1:-1]
    out = bytearray()
    position = 0
    while position < len(body):
        char = body[position]
        if char != "\\" or position + 1 >= len(body):
            out.extend(char.encode("utf-8"))
            position += 1
            continue
        following = body[position + 1]
        octal = body[position + 1 : position + 4]
        if len(octal) == 3 and all(c in "01234567" for c in octal):
            out.append(int(octal, 8))
            position += 4
        elif following in _ESCAPES:
            out.append(_ESCAPES[following])
            position += 2
        else:
            out.extend(following.encode("utf-8"))
            position += 2
    return out.decode("utf-8", errors="replace")
