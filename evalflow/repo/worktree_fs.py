"""Reading files of an untrusted working tree without ever leaving it.

Every path is opened one component at a time relative to the directory above it, with
``O_NOFOLLOW``: a symlinked directory or file anywhere on the way (``src -> /etc``) is
reported as such and never followed, and only regular files are read (a FIFO named like a
source file cannot hang evalflow; ``O_NONBLOCK`` covers a swap between the check and the open).
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

EntryKind = Literal["file", "symlink", "missing", "special"]
_CHUNK = 1 << 20
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class Entry:
    """What is at a repository-relative path: a regular file's size, a link's target, or why not."""

    kind: EntryKind
    size: int = 0
    target: str = ""


def _parent_fd(root: Path, rel: str) -> tuple[int, str] | None:
    """An fd of the directory holding `rel`'s last component, reached without symlinks."""
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return None
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the root is the caller's
    for part in parts[:-1]:
        try:
            inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError:  # missing, a file, or a symlink (ELOOP): the path does not lead inside
            os.close(fd)
            return None
        os.close(fd)
        fd = inner
    return fd, parts[-1]


def _open(root: Path, rel: str) -> tuple[Entry, int | None]:
    found = _parent_fd(root, rel)
    if found is None:
        return Entry("missing"), None
    dir_fd, name = found
    try:
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            return Entry("missing"), None
        if stat.S_ISLNK(st.st_mode):
            return Entry("symlink", target=os.readlink(name, dir_fd=dir_fd)), None
        if not stat.S_ISREG(st.st_mode):
            return Entry("special"), None
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
        except OSError:
            return Entry("missing"), None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            return Entry("special"), None
        return Entry("file", size=st.st_size), fd
    finally:
        os.close(dir_fd)


def read_regular(root: Path, rel: str, limit: int) -> tuple[Entry, bytes | None]:
    """The entry at `rel` (``/``-separated, inside `root`) and, for a regular file of at most
    `limit` bytes, its content."""
    entry, fd = _open(root, rel)
    if fd is None:
        return entry, None
    with os.fdopen(fd, "rb") as handle:
        if entry.size > limit:
            return entry, None
        data = handle.read(limit + 1)
    return (Entry("file", size=len(data)), data) if len(data) <= limit else (entry, None)


def fingerprint(root: Path, rel: str, limit: int) -> tuple[bytes, int]:
    """A digest of what is at `rel` and the bytes read for it: content for a file of at most
    `limit` bytes, size and modification time for a larger one (git's own test for a
    change; hashing a 2 GB file would cost more than the evaluation), the target for a link,
    else the kind."""
    entry, fd = _open(root, rel)
    if fd is None:
        return f"{entry.kind}:{entry.target}".encode(), 0
    with os.fdopen(fd, "rb") as handle:
        if entry.size > limit:
            st = os.fstat(handle.fileno())
            return f"large:{st.st_size}:{st.st_mtime_ns}".encode(), 0
        digest = hashlib.sha256()
        read = 0
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            read += len(chunk)
    return b"file:" + digest.digest(), read
