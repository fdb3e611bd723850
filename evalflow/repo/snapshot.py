"""An immutable, in-memory view of the evaluated repository's text files at one commit.

Judges read code only through a snapshot, so no judge can write to the evaluated repository
and every read is reproducible. A commit is loaded from evalflow's mirror of the repository in
one `git cat-file --batch` pass (`evalflow.repo.git`); a working tree is listed by git with the
mirror's config and a private index, and read without following symlinks
(`evalflow.repo.worktree_fs`). Binary files, files above the size limit, symlinks, special
files and submodules are skipped with a note; non-UTF-8 text is decoded with replacement
characters (line numbers stay right) and noted.

Bounded (`evalflow.repo.limits`): a file above `EVALFLOW_MAX_FILE_BYTES` is skipped and noted;
more files than `EVALFLOW_MAX_FILES`, a path deeper than `EVALFLOW_MAX_PATH_DEPTH` or more
than `EVALFLOW_MAX_READ_BYTES` to read refuse the snapshot before anything is read, naming the
bound (`LimitExceededError`): a hostile tree ends in one line, never a hang.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from evalflow.repo.git import commit_memo, git, is_sha, worktree
from evalflow.repo.limits import MAX_FILE_BYTES, MAX_FILES, MAX_PATH_DEPTH, MAX_READ_BYTES
from evalflow.repo.worktree_fs import read_regular

WORKTREE = "WORKTREE"
_SHOWN_PATH = 120  # characters of an over-deep path an error shows


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str
    text: str

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @property
    def line_count(self) -> int:
        if not self.text:
            return 0
        return self.text.count("\n") + (0 if self.text.endswith("\n") else 1)


@dataclass(frozen=True)
class RepoSnapshot:
    commit: str
    files: dict[str, SourceFile]
    notes: tuple[str, ...] = ()
    # The folder a run is confined to (`evalflow.repo.run_view`); None: the whole repository.
    root: str | None = None
    _lines: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)

    def __contains__(self, path: str) -> bool:
        return path in self.files

    def __iter__(self) -> Iterator[SourceFile]:
        return iter(self.files[p] for p in sorted(self.files))

    def lines(self, path: str) -> list[str]:
        """The file's lines (cached; index 0 is line 1)."""
        if path not in self._lines:
            self._lines[path] = self.files[path].text.split("\n")
        return self._lines[path]


def _decode(path: str, data: bytes, max_bytes: int, notes: list[str]) -> str | None:
    if len(data) > max_bytes:
        notes.append(f"{path}: skipped, {len(data)} bytes is above the {max_bytes}-byte limit")
        return None
    if b"\0" in data[:8000]:
        notes.append(f"{path}: skipped, binary file")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        notes.append(f"{path}: not UTF-8; read with replacement characters")
        text = data.decode("utf-8", "replace")
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def check_listing(paths: list[str], where: str, at: str) -> None:
    """Refuse a listing above the file-count or path-depth bound (before anything is read)."""
    if len(paths) > MAX_FILES.value():
        raise MAX_FILES.exceeded(f"the repository has {len(paths)} files at {at}", where)
    depth_limit = MAX_PATH_DEPTH.value()
    deep = next((p for p in paths if p.count("/") + 1 > depth_limit), None)
    if deep is not None:
        shown = deep if len(deep) <= _SHOWN_PATH else deep[:_SHOWN_PATH] + "…"
        raise MAX_PATH_DEPTH.exceeded(
            f"{shown} at {at} is {deep.count('/') + 1} directory levels deep", where
        )


def check_tree(repo: Path, commit: str) -> None:
    """`check_listing` over the files of `commit`: one cheap `ls-tree` that refuses a hostile
    tree before a diff of it (200,000 added files: 15 s) or a snapshot is made. The listing
    is read once per process (`commit_memo`), the bounds checked on every call."""

    def listing() -> list[str]:
        raws = git(repo, "ls-tree", "-r", "-z", "--name-only", commit).split(b"\0")
        return [raw.decode("utf-8", "replace") for raw in raws if raw]

    paths = (
        commit_memo(("tree", str(repo), commit), listing, keep=2) if is_sha(commit) else listing()
    )
    check_listing(paths, str(repo), commit[:12])


def _check_total(total: int, where: str, at: str) -> None:
    if total > MAX_READ_BYTES.value():
        raise MAX_READ_BYTES.exceeded(f"reading the repository at {at} takes {total} bytes", where)


def load_snapshot(repo: Path, commit: str, *, max_file_bytes: int | None = None) -> RepoSnapshot:
    """Every text file of `commit` (a full SHA), read through git objects.

    The newest snapshot is kept for the process (`commit_memo`): the steps of one run each
    open it, and one snapshot at a time stays in memory (at most `EVALFLOW_MAX_READ_BYTES`
    of text). The bounds are checked again on every call."""
    limit = max_file_bytes or int(MAX_FILE_BYTES.value())
    if not is_sha(commit):
        return _load_snapshot(repo, commit, limit)
    bounds = (MAX_FILES.value(), MAX_PATH_DEPTH.value(), MAX_READ_BYTES.value())
    key = ("snapshot", str(repo), commit, str(limit), *map(str, bounds))
    return commit_memo(key, lambda: _load_snapshot(repo, commit, limit), keep=1)


def _load_snapshot(repo: Path, commit: str, limit: int) -> RepoSnapshot:
    notes: list[str] = []
    blobs: list[tuple[str, str]] = []
    entries = [e for e in git(repo, "ls-tree", "-r", "-l", "-z", commit).split(b"\0") if e]
    listed = [
        (meta.decode().split(), raw.decode("utf-8", "replace"))
        for meta, raw in (e.split(b"\t", 1) for e in entries)
    ]
    check_listing([path for _, path in listed], str(repo), commit[:12])
    total = 0
    for (mode, kind, sha, size), path in listed:
        if kind != "blob":
            notes.append(f"{path}: skipped, {kind} (submodule)")
        elif mode == "120000":
            notes.append(f"{path}: skipped, symbolic link")
        elif int(size) > limit:
            notes.append(f"{path}: skipped, {size} bytes is above the {limit}-byte limit")
        else:
            blobs.append((path, sha))
            total += int(size)
    _check_total(total, str(repo), commit[:12])
    files: dict[str, SourceFile] = {}
    if blobs:
        out = git(
            repo, "cat-file", "--batch", input_bytes="".join(f"{s}\n" for _, s in blobs).encode()
        )
        offset = 0
        for path, _ in blobs:
            header_end = out.index(b"\n", offset)
            size = int(out[offset:header_end].split()[2])
            data = out[header_end + 1 : header_end + 1 + size]
            offset = header_end + 1 + size + 1
            text = _decode(path, data, limit, notes)
            if text is not None:
                files[path] = SourceFile(path, text)
    return RepoSnapshot(commit=commit, files=files, notes=tuple(notes))


def load_worktree_snapshot(
    repo: Path, head_commit: str, *, max_file_bytes: int | None = None
) -> RepoSnapshot:
    """Tracked (in `head_commit`) and untracked, not ignored files as on disk, read only."""
    limit = max_file_bytes or int(MAX_FILE_BYTES.value())
    notes: list[str] = []
    files: dict[str, SourceFile] = {}
    with worktree(repo, index_from=head_commit) as run:
        listing = run("ls-files", "-z", "--cached", "--others", "--exclude-standard")
    raws = sorted(set(listing.split(b"\0")) - {b""})
    at = f"{head_commit[:12]}+{WORKTREE}"
    check_listing([raw.decode("utf-8", "replace") for raw in raws], str(repo), at)
    total = 0
    for raw in raws:
        path = raw.decode("utf-8", "replace")
        entry, data = read_regular(repo, raw.decode("utf-8", "surrogateescape"), limit)
        if entry.kind == "symlink":
            notes.append(f"{path}: skipped, symbolic link")
        elif entry.kind == "special":
            notes.append(f"{path}: skipped, not a regular file")
        elif entry.kind == "file" and data is None:
            notes.append(f"{path}: skipped, {entry.size} bytes is above the {limit}-byte limit")
        elif data is not None:
            total += len(data)
            _check_total(total, str(repo), at)
            text = _decode(path, data, limit, notes)
            if text is not None:
                files[path] = SourceFile(path, text)
    return RepoSnapshot(commit=f"{head_commit}+{WORKTREE}", files=files, notes=tuple(notes))
