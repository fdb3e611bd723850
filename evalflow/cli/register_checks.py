"""Fail-early checks of `evalflow register` (one line, exit 2, before anything is stored).

A manifest whose repository, base or head does not resolve, whose head equals its base, whose
`spec_dir` leaves the repository, or whose run_key is already registered to another manifest
would otherwise fail (or silently score the wrong thing) minutes later inside a run. The
repository is read only through evalflow's hardened git layer. A manifest without
`author_model` is registered with a warning (`warn_unknown_authors`).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import click

from evalflow.errors import InputError
from evalflow.io import settings
from evalflow.io.inputs import load_manifest
from evalflow.io.registry import REGISTRY_TABLE
from evalflow.judges.family import AUTHOR_UNKNOWN
from evalflow.repo.git import require_repo, resolve_commit, use_work_root


def check_manifest(path: Path) -> tuple[str, Path]:
    """(run_key, resolved manifest path) of a manifest that passes every check."""
    loaded = load_manifest(path)
    m = loaded.manifest
    if m.spec_dir is not None:
        spec = PurePosixPath(m.spec_dir.replace("\\", "/"))
        if spec.is_absolute() or ".." in spec.parts or (m.spec_dir[1:3] == ":\\"):
            raise InputError(
                f"spec_dir {m.spec_dir!r} is not inside the repository",
                where=str(path),
                fix="give spec_dir relative to the repository root, without '..'",
            )
    if m.repo is not None:
        top = require_repo(loaded.resolve(m.repo))
        base = resolve_commit(top, m.base)
        head = resolve_commit(top, m.head)
        if base == head:
            raise InputError(
                f"head {m.head!r} is the same commit as base {m.base!r} (nothing to evaluate)",
                where=str(path),
                fix="set base to the commit before the implementation and head to its last",
            )
    return m.run_key, loaded.path


def check_registrations(root: str, manifests: list[Path], replace: bool) -> None:
    """Every manifest passes `check_manifest`; no run_key silently changes its manifest."""
    warehouse = settings.warehouse(root)
    use_work_root(warehouse.workdir)  # the repositories' mirrors live with the warehouse
    seen: dict[str, Path] = {}
    for path in manifests:
        key, resolved = check_manifest(path)
        if key in seen and seen[key] != resolved:
            raise InputError(
                f"run_key {key} is given twice ({seen[key]} and {resolved})",
                where=str(path),
                fix="give each run its own 'run' name",
            )
        seen[key] = resolved
        if replace or not warehouse.has(REGISTRY_TABLE, key):
            continue
        stored = str(warehouse.read(REGISTRY_TABLE, key)["manifest_path"].iloc[0])
        if stored != str(resolved):
            raise InputError(
                f"run_key {key} is already registered to {stored}",
                where=str(path),
                fix="pass --replace to register this manifest instead, or change its 'run'",
            )


def warn_unknown_authors(manifests: list[Path]) -> None:
    """A warning (stderr, registration goes on) per manifest without `author_model`: an LLM
    judge cannot then apply SPEC core rule 4 (evaluator ≠ author), the report says so."""
    for path in manifests:
        if load_manifest(path).manifest.author_model is None:
            click.echo(
                f"warning: {path}: no author_model — {AUTHOR_UNKNOWN} for an LLM judge; set "
                "author_model: <the model that wrote the code> in the manifest",
                err=True,
            )
