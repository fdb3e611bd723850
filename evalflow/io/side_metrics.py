"""I/O for the side metrics: spec/tasks and code read from a RepoSnapshot at head, the
benchmark's elicitation files read from disk, and one call that wires a run together.

Benchmark files, all optional, under `<benchmark dir>/elicitation/`:
- `rubric.yaml`  — the frozen E rubric (`ElicitationRubric`): extra or replaced categories,
  the N/A categories with their reason, out-of-scope keywords, trace threshold;
- `master.yaml`  — the adjudicated master list of valid additions (`MasterList`);
- `<framework>.yaml` — the adjudication labels of that framework's run
  (`ElicitationLabels`); the label judge wins wherever it speaks.
The repository is only read through the snapshot (never written).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from evalflow.domain.models import PRD, Baseline, TestLevelPolicy
from evalflow.domain.side_metrics.common import met_test_evidence
from evalflow.domain.side_metrics.compute import (
    SideMetrics,
    SideMetricsInputs,
    compute_side_metrics,
)
from evalflow.domain.side_metrics.elicitation import (
    ElicitationJudge,
    ElicitationLabels,
    ElicitationRubric,
    MasterList,
)
from evalflow.domain.side_metrics.scope import ProductionChange
from evalflow.errors import InputError
from evalflow.io.inputs import read_yaml, validate_model
from evalflow.repo.diff_lines import DiffLines, parse_unified_diff
from evalflow.repo.snapshot import RepoSnapshot
from evalflow.repo.test_inventory import (
    LevelConventions,
    TestCase,
    build_inventory,
    is_test_file,
)

# spec-kit (spec.md, tasks.md), Kiro (requirements.md, design.md, tasks.md) and BMAD
# (prd.md, architecture.md, and one file per story under stories/).
SPEC_FILE_NAMES: tuple[str, ...] = (
    "spec.md",
    "requirements.md",
    "design.md",
    "tasks.md",
    "prd.md",
    "architecture.md",
)
STORIES_DIR = "stories"
CODE_EXTENSIONS: frozenset[str] = frozenset(
    {".py", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".go", ".rb", ".java"}
    | {".kt", ".rs", ".cs", ".php", ".swift", ".scala"}
)
ELICITATION_DIR = "elicitation"
RUBRIC_FILE = "rubric.yaml"
MASTER_FILE = "master.yaml"


def conventions_for(policy: TestLevelPolicy) -> LevelConventions:
    """The inventory conventions with the benchmark's frozen test-level overrides."""
    overrides = policy.model_dump(exclude_none=True)
    base = LevelConventions()
    return base.model_copy(update=overrides) if overrides else base


def spec_files_at_head(snapshot: RepoSnapshot, spec_dir: str | None) -> dict[str, str]:
    """The framework's spec artifacts: `SPEC_FILE_NAMES` directly under `spec_dir`, and the
    Markdown story files directly under its `stories/` folder (BMAD)."""
    if not spec_dir:
        return {}
    folder = spec_dir.strip("/").lower()
    wanted = {f"{folder}/{name}" for name in SPEC_FILE_NAMES}
    stories = f"{folder}/{STORIES_DIR}/"

    def is_artifact(path: str) -> bool:
        lower = path.lower()
        if lower in wanted:
            return True
        rest = lower.removeprefix(stories)
        return rest != lower and "/" not in rest and rest.endswith(".md")

    return {p: snapshot.files[p].text for p in sorted(snapshot.files) if is_artifact(p)}


def read_test_files(snapshot: RepoSnapshot, conventions: LevelConventions) -> dict[str, str]:
    return {p: f.text for p, f in snapshot.files.items() if is_test_file(p, conventions)}


def production_files_at_head(
    snapshot: RepoSnapshot, conventions: LevelConventions, spec_dir: str | None = None
) -> dict[str, str]:
    """Code files that are not test files (and not under the spec folder)."""
    folder = f"{spec_dir.strip('/')}/" if spec_dir else None
    return {
        p: f.text
        for p, f in snapshot.files.items()
        if _is_code(p)
        and not is_test_file(p, conventions)
        and not (folder and p.startswith(folder))
    }


def _is_code(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return "." in name and name[name.rfind(".") :].lower() in CODE_EXTENSIONS


def production_changes(diff: DiffLines, production: dict[str, str]) -> list[ProductionChange]:
    """The production files the diff added or modified, with their added lines."""
    return [
        ProductionChange(
            path=path,
            new_file=path in diff.new_files,
            added_lines=frozenset(diff.added.get(path, set())),
        )
        for path in sorted(set(diff.added) | diff.new_files)
        if path in production
    ]


def feature_inventory(
    snapshot: RepoSnapshot, diff: DiffLines, conventions: LevelConventions
) -> list[TestCase]:
    """Every test case at head, classified feature (added by the diff) or pre-existing."""
    files = read_test_files(snapshot, conventions)
    result = build_inventory(
        sorted(files.items()), conventions, added_lines=diff.added, new_files=diff.new_files
    )
    return list(result.cases)


def load_rubric(benchmark_dir: Path) -> ElicitationRubric:
    path = benchmark_dir / ELICITATION_DIR / RUBRIC_FILE
    if not path.is_file():
        return ElicitationRubric()
    return validate_model(ElicitationRubric, read_yaml(path, "elicitation rubric"), path, "rubric")


def load_master(benchmark_dir: Path) -> MasterList | None:
    path = benchmark_dir / ELICITATION_DIR / MASTER_FILE
    if not path.is_file():
        return None
    master = validate_model(MasterList, read_yaml(path, "master list"), path, "master list")
    ids = [m.id for m in master.items]
    if len(ids) != len(set(ids)):
        raise InputError("master list repeats an id", where=str(path), fix="give unique ids")
    return master


def labels_path(benchmark_dir: Path, framework: str) -> Path:
    return benchmark_dir / ELICITATION_DIR / f"{framework}.yaml"


def load_labels(benchmark_dir: Path, framework: str) -> ElicitationLabels | None:
    path = labels_path(benchmark_dir, framework)
    if not path.is_file():
        return None
    labels = validate_model(
        ElicitationLabels, read_yaml(path, "elicitation labels"), path, "elicitation labels"
    )
    if labels.framework != framework:
        raise InputError(
            f"labels are for framework {labels.framework!r}, not {framework!r}",
            where=str(path),
            fix="fix the file's 'framework' key or its name",
        )
    return labels


def elicitation_files_digest(benchmark_dir: Path, framework: str) -> str:
    """sha256 over the rubric, master list and this framework's labels (absent files
    count as empty): add it to the run fingerprint, since these files change E and S."""
    digest = hashlib.sha256()
    for path in (
        benchmark_dir / ELICITATION_DIR / RUBRIC_FILE,
        benchmark_dir / ELICITATION_DIR / MASTER_FILE,
        labels_path(benchmark_dir, framework),
    ):
        digest.update(path.name.encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"")
        digest.update(b"\0")
    return digest.hexdigest()


def side_metrics_for_run(
    *,
    prd: PRD,
    baseline: Baseline,
    snapshot: RepoSnapshot,
    unified_diff: str,
    spec_dir: str | None,
    benchmark_dir: Path,
    framework: str,
    votes: pd.DataFrame,
    verdicts: pd.DataFrame,
    model_judges: Sequence[ElicitationJudge] = (),
    with_labels: bool = True,
    untracked: Sequence[str] = (),
    cases: Sequence[TestCase] | None = None,
    diff_lines: DiffLines | None = None,
) -> SideMetrics:
    """E, S, D, R for one run: `unified_diff` is `git diff --unified=0 base..head`, `votes`
    the majority-vote frame and `verdicts` the k runs' verdict frame of this run;
    `untracked` the untracked files when a working tree is evaluated (they are new files).
    `with_labels=False` ignores the run's labels file (the heuristic/model view alone);
    `cases` is the run's test inventory and `diff_lines` the parsed `unified_diff` when the
    caller already has them (a whole history's diff takes seconds to parse)."""
    conventions = conventions_for(baseline.test_levels)
    diff = parse_unified_diff(unified_diff) if diff_lines is None else diff_lines
    if untracked:
        diff = diff.model_copy(update={"new_files": diff.new_files | set(untracked)})
    production = production_files_at_head(snapshot, conventions, spec_dir)
    labels = load_labels(benchmark_dir, framework) if with_labels else None
    return compute_side_metrics(
        SideMetricsInputs(
            prd=prd,
            baseline=baseline,
            cases=list(cases)
            if cases is not None
            else feature_inventory(snapshot, diff, conventions),
            evidence=met_test_evidence(votes, verdicts),
            votes=votes,
            test_files=read_test_files(snapshot, conventions),
            spec_files=spec_files_at_head(snapshot, spec_dir),
            production_files=production,
            changes=production_changes(diff, production),
            rubric=load_rubric(benchmark_dir),
            master=load_master(benchmark_dir),
            labels=labels,
            labels_source=str(labels_path(benchmark_dir, framework)),
            model_judges=model_judges,
        )
    )
