"""The part of a repository one framework run owns: its `root:` folder and the shared paths.

A repository may hold several frameworks' runs of one PRD side by side (`speckit/`, `bmad/`:
a bake-off layout). Each run's manifest then names its folder (`root:`), and every reader of
the run — diff surface, evidence search, test inventory, side metrics, judge tools, the
evidence validator — sees only files under it plus the benchmark's `shared_paths` (the PRD or
spec folder every run reads). The view is applied once, where a run's diff surface and
snapshot are built (`evalflow.io.evaluation`); paths keep their repository-relative form, so
evidence cites the same `file:line` as before. Without `root:` the view is the whole
repository.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from evalflow.repo.diff_surface import DiffFile
from evalflow.repo.snapshot import RepoSnapshot


def in_view(path: str, root: str | None, shared: Iterable[str] = ()) -> bool:
    """Whether a repository path belongs to the run confined to `root` (None: everything)."""
    if root is None:
        return True
    return any(path == p or path.startswith(p + "/") for p in (root, *shared))


def confine_snapshot(
    snapshot: RepoSnapshot, root: str | None, shared: Sequence[str] = ()
) -> RepoSnapshot:
    """The snapshot with only the files the run owns; it remembers its root (for messages)."""
    if root is None:
        return snapshot
    files = {p: f for p, f in snapshot.files.items() if in_view(p, root, shared)}
    return replace(snapshot, files=files, root=root, _lines={})


def confine_diff(
    files: Sequence[DiffFile], root: str | None, shared: Sequence[str] = ()
) -> tuple[DiffFile, ...]:
    """The diff surface entries under the run's root or shared paths (a rename counts where
    it lands)."""
    return tuple(f for f in files if in_view(f.path, root, shared))


def unconfined_neighbours(runs: Iterable[tuple[str, str, str, str, str, str | None]]) -> list[str]:
    """Warnings for runs of *different* frameworks that read the same repository, base and head
    without a `root:`: they get the same diff surface and can be credited with each other's
    code. `runs`: (run_key, framework, repository, base, head, root)."""
    groups: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for run_key, framework, repo, base, head, root in runs:
        if root is None:
            groups.setdefault((repo, base, head), []).append((run_key, framework))
    out: list[str] = []
    for (repo, _, _), members in sorted(groups.items()):
        if len({framework for _, framework in members}) > 1:
            keys = ", ".join(sorted(k for k, _ in members))
            out.append(
                f"runs {keys} of different frameworks share {repo}, base and head without "
                "root: each sees the other's code; give each manifest root: <its folder>"
            )
    return out
