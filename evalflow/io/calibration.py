"""Running judges over the calibration set (`data/calibration`) and the gold-evidence
retrieval evaluation of the evidence retriever: the I/O side of `evalflow.domain.calibration`.

Layout of a calibration set: one benchmark directory per case family, in the ordinary
benchmark format (`prd.md`, a frozen `_ac-baseline.yaml`, `sources/<name>/build.yaml` + trees,
`runs/<run>.yaml` manifests with `source:`), plus `gold/<run>.yaml` per manifest: check id →
`{verdict, evidence, kind, note}` (`evalflow.domain.calibration.GoldLabel`). A case is
`<family>/<run>`.

Each case's repository is built deterministically into `<warehouse>/calibration/repos/` and
scored through exactly the pipeline's path — `evaluation.prepare_run`, `open_snapshot`,
`score_run` k = 3 times (so the shared evidence validator applies) and `majority_vote` — then
compared with the gold labels. Gold evidence must itself pass the validator at head, so a
stale gold file fails loudly instead of skewing the figures.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import TypeAdapter, ValidationError

from evalflow import __version__
from evalflow.domain.calibration import (
    ROW_COLUMNS,
    CalibrationRow,
    CalibrationSummary,
    GoldLabel,
    JudgedCheck,
    calibration_ledger_entry,
    compare_case,
    evidence_query,
    evidence_retrieval_cases,
    summarize,
)
from evalflow.domain.models import Verdict
from evalflow.domain.retrieval.evidence import EvidenceRetriever
from evalflow.domain.retrieval.metrics import RetrievalCase, RetrievalReport, evaluate_retrieval
from evalflow.domain.retrieval.retrievers import make_retriever
from evalflow.domain.rubric.models import LedgerEntry, Rubric
from evalflow.domain.vote import majority_vote
from evalflow.errors import InputError
from evalflow.io import settings
from evalflow.io.evaluation import (
    K_RUNS,
    PreparedRun,
    open_snapshot,
    prepare_run,
    score_run,
    verdicts_frame,
)
from evalflow.io.inputs import read_yaml
from evalflow.io.ledger import (
    DEFAULT_RUBRIC_PATH,
    PROJECT_ROOT,
    append_entry,
    default_ledger_path,
    git_identity,
    load_rubric,
    now_timestamp,
)
from evalflow.judges.base import Judge
from evalflow.judges.registry import make_judge
from evalflow.judges.validator import FLAG_INVALID_EVIDENCE, evidence_problem
from evalflow.repo.snapshot import RepoSnapshot

DEFAULT_SET = PROJECT_ROOT / "data" / "calibration"
BASELINE_FILE = "_ac-baseline.yaml"
EVIDENCE_RETRIEVER = "bm25-evidence"
# The registered retriever fuses BM25 with identifier matches; the variant without fusion is
# reported beside it so a regression can be pinned on one of the two signals.
RETRIEVER_VARIANTS: dict[str, dict[str, Any]] = {"fusion": {}, "no_fusion": {"fusion": False}}

_GOLD = TypeAdapter(dict[str, GoldLabel])


@dataclass(frozen=True)
class CalibrationCase:
    """One run of the set: `<family>/<run>`, its manifest and its gold file."""

    name: str
    manifest: Path
    gold_path: Path


@dataclass(frozen=True)
class CalibrationResult:
    """Per-check rows and the summary of one judge over the whole set."""

    judge_id: str
    rows: list[CalibrationRow]
    summary: CalibrationSummary

    def frame(self) -> pd.DataFrame:
        """The rows as a frame with the columns of `ROW_COLUMNS`."""
        return pd.DataFrame([r.model_dump() for r in self.rows], columns=list(ROW_COLUMNS))


def discover_cases(set_dir: Path) -> list[CalibrationCase]:
    """Every `<family>/runs/<run>.yaml` of the set with its `gold/<run>.yaml`, sorted."""
    if not set_dir.is_dir():
        raise InputError(
            "calibration set not found", where=str(set_dir), fix="pass --set DIR (data/calibration)"
        )
    cases: list[CalibrationCase] = []
    for family in sorted(p for p in set_dir.iterdir() if (p / BASELINE_FILE).is_file()):
        for manifest in sorted((family / "runs").glob("*.yaml")):
            gold = family / "gold" / f"{manifest.stem}.yaml"
            if not gold.is_file():
                raise InputError(
                    "run manifest without a gold file",
                    where=str(manifest),
                    fix=f"add {gold.relative_to(set_dir)}",
                )
            cases.append(CalibrationCase(f"{family.name}/{manifest.stem}", manifest, gold))
    if not cases:
        raise InputError(
            "no calibration cases (no <family>/_ac-baseline.yaml with runs/*.yaml)",
            where=str(set_dir),
        )
    return cases


def load_gold(path: Path) -> dict[str, GoldLabel]:
    """check id → gold label, in file order; every problem is one InputError line."""
    data = read_yaml(path, "gold file")
    if not isinstance(data, dict):
        raise InputError("a gold file must map check ids to labels", where=str(path))
    try:
        return _GOLD.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        place = ".".join(str(p) for p in first["loc"])
        raise InputError(
            f"invalid gold label {place}: {first['msg']}",
            where=str(path),
            fix="a label is {verdict: MET|UNMET, evidence: [{path, start_line, end_line}], "
            "kind: clear|planted|borderline, note}",
        ) from None


def _check_gold(
    gold: dict[str, GoldLabel], prepared: PreparedRun, snapshot: RepoSnapshot, where: Path
) -> None:
    baseline_ids = [c.id for _, c in prepared.benchmark.baseline.checks()]
    missing = [c for c in baseline_ids if c not in gold]
    extra = [c for c in gold if c not in baseline_ids]
    if missing or extra:
        raise InputError(
            f"gold labels do not match the baseline checks (missing: {', '.join(missing) or '-'};"
            f" unknown: {', '.join(extra) or '-'})",
            where=str(where),
            fix="label every check of the frozen baseline exactly once",
        )
    for check_id, label in gold.items():
        for item in label.evidence:
            problem = evidence_problem(item, snapshot)
            if problem is not None:
                raise InputError(
                    f"gold evidence of {check_id} is invalid at head: {problem}",
                    where=str(where),
                    fix="fix the gold line range (or the source tree it points into)",
                )


def judged_checks(
    verdicts: Sequence[Verdict], snapshot: RepoSnapshot, k: int
) -> dict[str, JudgedCheck]:
    """The k-run majority per check, with the evidence of the first run that voted it."""
    if not verdicts:
        return {}
    votes = majority_vote(verdicts_frame("calibration", list(verdicts)), k)
    by_check: dict[str, list[Verdict]] = {}
    for verdict in sorted(verdicts, key=lambda v: (v.check_id, v.run)):
        by_check.setdefault(verdict.check_id, []).append(verdict)
    judged: dict[str, JudgedCheck] = {}
    for row in votes.itertuples(index=False):
        voter = next((v for v in by_check[row.check_id] if v.status == row.majority), None)
        evidence = voter.evidence if voter is not None else ()
        valid = (
            row.majority == "MET"
            and voter is not None
            and bool(evidence)
            and FLAG_INVALID_EVIDENCE not in voter.flags
            and all(evidence_problem(e, snapshot) is None for e in evidence)
        )
        judged[row.check_id] = JudgedCheck(
            check_id=row.check_id, majority=row.majority, evidence=evidence, evidence_valid=valid
        )
    return judged


def _prepare(case: CalibrationCase, warehouse: Path) -> tuple[PreparedRun, RepoSnapshot]:
    prepared = prepare_run(case.manifest, warehouse / "calibration")
    return prepared, open_snapshot(prepared)


def run_calibration(
    judge: Judge,
    *,
    set_dir: Path = DEFAULT_SET,
    warehouse: Path | None = None,
    k: int = K_RUNS,
    track: Callable[[Sequence[CalibrationCase]], Any] = iter,
) -> CalibrationResult:
    """Score every case of the set k times with `judge` and compare with the gold labels."""
    root = warehouse or settings.warehouse().workdir
    rows: list[CalibrationRow] = []
    for case in track(discover_cases(set_dir)):
        gold = load_gold(case.gold_path)
        prepared, snapshot = _prepare(case, root)
        _check_gold(gold, prepared, snapshot, case.gold_path)
        verdicts = [v for run in range(1, k + 1) for v in score_run(prepared, judge, run, snapshot)]
        rows += compare_case(judge.judge_id, case.name, gold, judged_checks(verdicts, snapshot, k))
    return CalibrationResult(judge.judge_id, rows, summarize(judge.judge_id, rows))


def calibrate(
    judge: Judge | str,
    *,
    set_dir: Path = DEFAULT_SET,
    warehouse: Path | None = None,
    ledger: bool = True,
    ledger_path: Path | None = None,
    rubric_path: Path = DEFAULT_RUBRIC_PATH,
    labels_path: Path | None = None,
    commit: str | None = None,
    branch: str | None = None,
    track: Callable[[Sequence[CalibrationCase]], Any] = iter,
) -> tuple[CalibrationResult, LedgerEntry, Path | None]:
    """Run the calibration, build its ledger entry and (unless `ledger=False`) append it to
    `ledger_path` (default `evalflow.io.ledger.default_ledger_path()`). Returns the result, the
    entry and the ledger written (None when skipped)."""
    root = warehouse or settings.warehouse().workdir
    rubric = load_rubric(rubric_path)
    if isinstance(judge, str):
        judge = make_judge(judge, cache_dir=root / "cache", labels_path=labels_path)
    result = run_calibration(judge, set_dir=set_dir, warehouse=root, track=track)
    entry = ledger_entry(result, rubric, commit=commit, branch=branch)
    target = (ledger_path or default_ledger_path()) if ledger else None
    if target is not None:
        append_entry(target, entry, rubric)
    return result, entry, target


def ledger_entry(
    result: CalibrationResult,
    rubric: Rubric,
    *,
    commit: str | None = None,
    branch: str | None = None,
) -> LedgerEntry:
    """The ledger entry of `result`, stamped with git's commit/branch of the working directory."""
    git_commit, git_branch = git_identity(Path.cwd())
    return calibration_ledger_entry(
        result.summary,
        result.rows,
        rubric,
        version=__version__,
        timestamp=now_timestamp(),
        commit=commit or git_commit,
        branch=branch or git_branch,
    )


def evidence_cases(
    set_dir: Path = DEFAULT_SET, warehouse: Path | None = None
) -> list[tuple[str, list[tuple[str, str]], list[RetrievalCase]]]:
    """Per case: its name, the diff-surface files at head (path, text) the evidence retriever
    indexes, and the gold-evidence retrieval cases over them."""
    root = warehouse or settings.warehouse().workdir
    out: list[tuple[str, list[tuple[str, str]], list[RetrievalCase]]] = []
    for case in discover_cases(set_dir):
        gold = load_gold(case.gold_path)
        prepared, snapshot = _prepare(case, root)
        _check_gold(gold, prepared, snapshot, case.gold_path)
        files = [(p, snapshot.files[p].text) for p in prepared.diff_paths if p in snapshot]
        queries = {
            check.id: evidence_query(check.proposition, ac.text)
            for ac, check in prepared.benchmark.baseline.checks()
        }
        retriever = EvidenceRetriever(files)
        out.append(
            (case.name, files, evidence_retrieval_cases(case.name, queries, gold, retriever))
        )
    return out


def evidence_retrieval_report(
    k: int,
    *,
    set_dir: Path = DEFAULT_SET,
    warehouse: Path | None = None,
    options: dict[str, Any] | None = None,
) -> RetrievalReport:
    """`evaluate_retrieval` of the `bm25-evidence` retriever (built per case over that case's
    diff surface, with `options`) on every gold-evidence case of the set, at cut-off k."""
    if k < 1:
        raise InputError(f"k must be >= 1, got {k}", fix="use k >= 1")
    cases: list[RetrievalCase] = []
    rankers: dict[str, Callable[[str], list[str]]] = {}
    for _, files, case_list in evidence_cases(set_dir, warehouse):
        retriever = make_retriever(EVIDENCE_RETRIEVER, files, **(options or {}))
        for item in case_list:
            rankers[item.id] = retriever.retrieve_fn(k)
        cases += case_list
    # Each case has its own index (its repository): the query carries the case id to route it.
    keyed = [c.model_copy(update={"query": (c.id, c.query)}) for c in cases]
    return evaluate_retrieval(keyed, lambda query: rankers[query[0]](query[1]), k)
