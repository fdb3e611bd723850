"""`evalflow init --from FORMAT REPO`: a benchmark directory from a framework's own artefacts.

The shell around `evalflow.importers`: it reads the repository only through evalflow's
hardened git layer (`require_repo`, `resolve_commit`, `load_snapshot`, and `git log` through
the same mirror — never inside the repository, never its code), then writes `prd.md`, a draft
`_ac-baseline.yaml` and `runs/<framework>-r1.yaml` (base/head/spec_dir, the run's `root:`
folder when the repository holds one spec folder per framework, and gate guesses read from
that folder, each commented). It refuses to overwrite a frozen baseline or any existing
file unless `--force` (and never a frozen baseline).
"""

from __future__ import annotations

import time
from pathlib import Path

import click

from evalflow.domain.baseline_draft import draft_baseline, render_draft
from evalflow.domain.prd import SPEC_KIT_PRIORITY_MAP, parse_prd
from evalflow.errors import InputError
from evalflow.importers import FORMATS, IMPORTERS
from evalflow.importers.model import (
    DEFAULT_PRIORITIES,
    check_round_trip,
    parse_priority_map,
    render_prd,
)
from evalflow.importers.project import Commit, guess_base, guess_gates, guess_root, in_root
from evalflow.io.inputs import lock_path
from evalflow.repo.git import git, require_repo, resolve_commit, throwaway_workspace
from evalflow.repo.snapshot import load_snapshot

_KEY = "abcdefghijklmnopqrstuvwxyz0123456789-_"


def _history(repo: Path, head: str) -> list[Commit]:
    """Commits reachable from `head`, oldest first, with the paths each changed."""
    out = git(
        repo,
        "log",
        "--reverse",
        "--topo-order",
        "--format=%x00%H %P",
        "--name-only",
        "--no-renames",
        head,
    ).decode("utf-8", "replace")
    commits = []
    for block in out.split("\0")[1:]:
        header, _, rest = block.partition("\n")
        shas = header.split()
        paths = tuple(p for p in rest.split("\n") if p.strip())
        commits.append(Commit(shas[0], shas[1] if len(shas) > 1 else None, paths))
    return commits


def _checkout(repo: Path) -> Path:
    """The git checkout `init` reads, or one line saying what `repo` is instead: a bare
    repository (a `fetch` mirror has no work tree and no `.git`: clone it first), a
    repository git cannot read whole (objects missing: a fetch or clone that did not finish,
    a snapshot whose large files were left out), or a directory without git data."""
    try:
        return require_repo(repo)
    except InputError as exc:
        if exc.what != "not a git repository":
            raise
        git_said = exc.__cause__.what if isinstance(exc.__cause__, InputError) else None
        if git_said:
            what = f"its git objects cannot all be read ({git_said})"
            fix = "fetch or clone the repository again (git fsck lists what is missing)"
        elif all((repo / name).exists() for name in ("HEAD", "objects", "refs")):
            what = "a bare git repository (a mirror without a work tree), not a checkout"
            fix = f"clone it first (git clone --no-local {repo} <copy>) and pass <copy>"
        else:
            what = "no git repository here (a fetch or copy that did not finish?)"
            fix = "fetch or clone the repository again and pass the checkout's folder"
        raise InputError(what, where=f"init {repo}", fix=fix) from exc


def _yaml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_manifest(
    benchmark: str,
    framework: str,
    repo: Path,
    base: str | None,
    base_why: str,
    head: str,
    spec_dir: str,
    gates: dict[str, tuple[str | tuple[str, ...], str]],
    root: tuple[str, str] | None = None,
) -> str:
    lines = [
        "# Run manifest written by `evalflow init`; check every guessed value, then",
        "# `evalflow register` this file.",
        f"benchmark: {benchmark}",
        f"framework: {framework}",
        "run: r1",
        "baseline: ../_ac-baseline.yaml",
        f"repo: {_yaml_str(str(repo))}",
        f"# guessed: {base_why}",
        f"base: {base}"
        if base
        else "base: null  # no guess: set the commit before the implementation",
        "# the repository's HEAD when imported",
        f"head: {head}",
        f"spec_dir: {_yaml_str(spec_dir)}",
    ]
    if root is not None:
        lines += [
            f"# guessed: {root[1]}; gates run there",
            f"root: {_yaml_str(root[0])}",
        ]
    if "setup" in gates:
        cmd, why = gates["setup"]
        lines.append(f"# guessed from {why}")
        if isinstance(cmd, str):
            lines.append(f"setup: {_yaml_str(cmd)}")
        else:
            lines += ["setup:"] + [f"  - {_yaml_str(c)}" for c in cmd]
    gate_keys = [k for k in ("build", "lint", "unit", "e2e") if k in gates]
    if gate_keys:
        lines.append("gates:")
        for key in gate_keys:
            cmd, why = gates[key]
            lines += [f"  # guessed from {why}", f"  {key}: {_yaml_str(str(cmd))}"]
    else:
        lines.append("# no gate command could be guessed: add gates: {build: ..., unit: ...}")
    return "\n".join(lines) + "\n"


@click.command("init")
@click.option("--from", "fmt", type=click.Choice(FORMATS), required=True, help="Framework format.")
@click.argument("repo", type=click.Path(path_type=Path))
@click.option("--spec", default=None, help="Spec folder (or file, markdown) inside the repo.")
@click.option("--benchmark", required=True, help="Benchmark name (letters, digits, - and _).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), required=True)
@click.option("--head", default="HEAD", show_default=True, help="Commit to import from.")
@click.option("--priority-map", default="", help="LABEL=P0|P1|P2 pairs, e.g. P1=P0,P2=P1,P3=P2.")
@click.option("--force", is_flag=True, help="Overwrite an unfrozen draft and manifest.")
# Its git workspace (in $TMPDIR: no warehouse) goes when the command ends, however it ends.
@throwaway_workspace()
def init(
    fmt: str,
    repo: Path,
    spec: str | None,
    benchmark: str,
    out_dir: Path,
    head: str,
    priority_map: str,
    force: bool,
) -> None:
    """Import a framework run's PRD, draft its baseline and write its run manifest."""
    started = time.monotonic()
    if not benchmark or any(ch not in _KEY for ch in benchmark.lower()):
        raise InputError(
            f"invalid benchmark name {benchmark!r}",
            where="--benchmark",
            fix="use letters, digits, '-' and '_'",
        )
    if spec is not None and (spec.startswith("/") or ".." in Path(spec).parts):
        raise InputError(
            "spec folder must lie inside the repository",
            where=f"--spec {spec}",
            fix="give a path relative to the repository root, without '..'",
        )
    baseline_path = out_dir / "_ac-baseline.yaml"
    if lock_path(baseline_path).is_file():
        raise InputError(
            "the benchmark's baseline is frozen; init never overwrites it",
            where=str(baseline_path),
            fix="choose another --out directory",
        )
    framework = fmt.replace("-", "")
    targets = [out_dir / "prd.md", baseline_path, out_dir / "runs" / f"{framework}-r1.yaml"]
    existing = [str(t) for t in targets if t.exists()]
    if existing and not force:
        raise InputError(
            f"{existing[0]} already exists",
            where=str(out_dir),
            fix="pass --force to replace the unfrozen draft, or another --out",
        )
    top = _checkout(repo)
    head_sha = resolve_commit(top, head)
    snapshot = load_snapshot(top, head_sha)
    files = {path: f.text for path, f in snapshot.files.items()}
    base_map = SPEC_KIT_PRIORITY_MAP if fmt == "spec-kit" else DEFAULT_PRIORITIES
    mapping = parse_priority_map(priority_map, base_map)
    prd = IMPORTERS[fmt](files, spec, mapping)
    prd_text = render_prd(prd, mapping, head_sha)
    check_round_trip(prd, prd_text)
    base, base_why = guess_base(_history(top, head_sha), prd.spec_dir)
    parsed = parse_prd(prd_text, "prd.md")
    drafted = draft_baseline(parsed, benchmark)
    draft = render_draft(drafted, benchmark)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "runs").mkdir(exist_ok=True)
    targets[0].write_text(prd_text, encoding="utf-8")
    targets[1].write_text(draft, encoding="utf-8")
    root = guess_root(list(files), prd.spec_dir)
    gates = guess_gates(in_root(files, root[0] if root else None))
    manifest = render_manifest(
        benchmark, framework, top, base, base_why, head_sha, prd.spec_dir, gates, root
    )
    targets[2].write_text(manifest, encoding="utf-8")
    n_acs = sum(len(s.acs) for s in prd.stories)
    assumed = [s.id for s in prd.stories if s.assumed]
    click.echo(
        f"imported {len(prd.stories)} stories, {n_acs} ACs, {len(prd.out_of_scope)} "
        f"out-of-scope items from {', '.join(prd.sources)} ({time.monotonic() - started:.1f} s)"
    )
    if assumed:
        click.echo(f"ASSUMED priorities (listed in prd.md): {', '.join(assumed)}")
    roadmap = [ac.id for s in parsed.stories if s.priority == "P2" for ac in s.acs]
    if roadmap:
        click.echo(
            f"{len(roadmap)} AC(s) of P2 stories drafted at weight 0 (roadmap readiness, not in "
            "Final)"
        )
    manual = [ac.id for ac in drafted if ac.checks and ac.checks[0].rule.startswith("manual")]
    if manual:
        click.echo(
            f"not English, imported verbatim: decompose by hand before freezing: "
            f"{', '.join(manual)}"
        )
    for note in prd.notes:
        click.echo(f"note: {note}")
    if root is not None:
        click.echo(f"root: {root[0]} ({root[1]})")
    for target in targets:
        click.echo(f"wrote {target}")
    click.echo(
        f"next: review {targets[1].name}, `evalflow baseline lint {targets[1]}`, add probes "
        "and anchors, `evalflow baseline freeze`, then `evalflow register` the manifest"
    )
