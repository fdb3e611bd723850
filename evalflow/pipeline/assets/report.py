"""Stage `report`: the per-run Markdown report and its static HTML page, under the warehouse.

The file name carries the UTC write time (SPEC §Report); the content does not. When the
content of a re-materialised report is unchanged, the existing files and its row are kept,
so re-running unchanged inputs leaves the warehouse byte-identical. The report's data version
carries a digest of the renderers' source (`common.data_version`): after a renderer changes,
an otherwise unchanged run's report is stale, so the next `materialize` rewrites it (and
nothing else).
"""

import hashlib
from pathlib import Path

import dagster as dg
import pandas as pd

from evalflow.domain.vote import agreement
from evalflow.io.evaluation import checks_frame, inputs_fingerprint
from evalflow.io.ledger import ledger_path_for, now, record_evaluation
from evalflow.judges.family import author_unknown_note
from evalflow.pipeline.assets.common import benchmark, run_output, stamp
from evalflow.pipeline.resources import EvalflowResource
from evalflow.reports.html import render_run_html
from evalflow.reports.markdown import ReportInput, render_report, report_filename
from evalflow.storage import history
from evalflow.storage.warehouse import judge_file

REPORT_TABLE = "report"


def _record_in_ledger(
    root: Path,
    manifest: pd.Series,
    final: pd.Series,
    ac: pd.DataFrame,
    votes: pd.DataFrame,
    checks: pd.DataFrame,
) -> None:
    """One `framework_run:<run_key>` ledger entry: pass = complete and no confirmed ✗ gate."""
    unmet = votes[votes["majority"] != "MET"].merge(checks[["check_id", "ac_id"]], on="check_id")
    results = []
    for row in ac.sort_values("ac_id").itertuples(index=False):
        missing = sorted(unmet.loc[unmet["ac_id"] == row.ac_id, "check_id"])
        results.append((row.ac_id, row.ac_score == 1.0, [f"not MET: {', '.join(missing)}"]
                        if missing else None))  # fmt: skip
    record_evaluation(
        "framework_run",
        str(manifest["run_key"]),
        scores={
            "final": final["final"],
            "adjustedFinal": final["adjusted_final"],
            "finalLower": final["final_lower"],
            "finalUpper": final["final_upper"],
            "borderline": final["n_borderline"],
        },
        results=results,
        passed=bool(final["complete"]) and not bool(final["gates_failed"]),
        ledger_path=ledger_path_for(root),
        head_sha=str(manifest["head_sha"]),
        fingerprint=str(manifest["fingerprint"]),
    )


def report(
    context: dg.AssetExecutionContext,
    evalflow: EvalflowResource,
    run_manifest: pd.DataFrame,
    diff_surface: pd.DataFrame,
    scoring_run_1: pd.DataFrame,
    scoring_run_2: pd.DataFrame,
    scoring_run_3: pd.DataFrame,
    majority_vote: pd.DataFrame,
    ac_score: pd.DataFrame,
    story_score: pd.DataFrame,
    final_score: pd.DataFrame,
    gates: pd.DataFrame,
    side_metrics_section: pd.DataFrame,
) -> dg.Output:
    """Markdown report (result, roll-up output, I/T tables with evidence, gaps, assumptions)
    and the same run as a self-contained HTML page beside it."""
    bench = benchmark(context, evalflow)
    m = run_manifest.iloc[0]
    unknown = author_unknown_note(m["judge_model"], m["author_model"])
    inputs = ReportInput(
        run_key=m["run_key"],
        framework=m["framework"],
        benchmark=m["benchmark"],
        prd=bench.prd,
        baseline=bench.baseline,
        baseline_sha256=m["baseline_sha256"],
        fingerprint=m["fingerprint"],
        base_sha=m["base_sha"],
        head_sha=m["head_sha"],
        diff=diff_surface,
        verdicts=pd.concat([scoring_run_1, scoring_run_2, scoring_run_3], ignore_index=True),
        votes=majority_vote,
        ac=ac_score,
        story=story_score,
        final=final_score.iloc[0],
        agreement=agreement(majority_vote).iloc[0],
        judge_id=m["judge_id"],
        judge_deterministic=bool(m["judge_deterministic"]),
        self_preference=bool(m["self_preference"]),
        gates=gates,
        side_metrics=str(side_metrics_section["markdown"].iloc[0]),
        assumptions=(unknown,) if unknown else (),
    )
    text = render_report(inputs)
    page = render_run_html(inputs)
    warehouse = evalflow.get_warehouse()
    judge = str(m["judge_name"])
    previous = None
    if warehouse.has(REPORT_TABLE, m["run_key"], judge):
        previous = str(warehouse.read(REPORT_TABLE, m["run_key"], judge)["report_file"].iloc[0])
    folder = warehouse.workdir / "reports" / str(m["benchmark"])
    # One report per run and judge: another judge's report of the run stays beside it.
    name = report_filename(bench.prd, m["run_key"]).removesuffix(".md")
    name = f"{name}.{judge_file(judge).removesuffix('.parquet')}.md"
    path, digest = write_report(folder, previous, name, text, page)
    _record_in_ledger(
        warehouse.workdir,
        m,
        final_score.iloc[0],
        ac_score,
        majority_vote,
        checks_frame(bench.baseline),
    )
    # Every evaluation appends its row to the run's history (never rewriting earlier ones).
    history.record_evaluation(
        warehouse,
        m,
        final_score.iloc[0],
        inputs_fingerprint=inputs_fingerprint(
            bench, str(m["framework"]), str(m["base_sha"]), str(m["head_sha"]), bool(m["worktree"])
        ),
        evaluated_at=now(),
        cost_usd=history.judge_cost(pd.concat([scoring_run_1, scoring_run_2, scoring_run_3])),
    )
    row = {"report_file": path.name, "report_path": str(path), "content_sha256": digest}
    metadata = {
        "report": dg.MetadataValue.path(str(path)),
        "html": dg.MetadataValue.path(str(html_path(path))),
        "preview": dg.MetadataValue.md(text),
    }
    frame = stamp(pd.DataFrame([row]), run_manifest)
    return run_output(REPORT_TABLE, frame, run_manifest, metadata)


def write_report(
    folder: Path, previous: str | None, name: str, text: str, page: str
) -> tuple[Path, str]:
    """(the Markdown report's path, the digest of both files' content). Unchanged content
    keeps the previous files, so an unchanged run leaves the folder as it was; new content
    goes to `name` (and its HTML beside it), and the run's previous pair is removed: one
    report per run, never a stale one beside the current."""
    digest = hashlib.sha256(f"{text}\0{page}".encode()).hexdigest()
    if previous is not None:
        kept = folder / previous
        if kept.is_file() and html_path(kept).is_file() and _digest(kept) == digest:
            return kept, digest
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    for target, content in ((path, text), (html_path(path), page)):
        temp = target.with_name(target.name + ".tmp")
        temp.write_text(content, encoding="utf-8")
        temp.replace(target)
    if previous is not None and previous != name:
        for old in (folder / previous, html_path(folder / previous)):
            old.unlink(missing_ok=True)
    return path, digest


def _digest(report: Path) -> str:
    text = report.read_text(encoding="utf-8")
    page = html_path(report).read_text(encoding="utf-8")
    return hashlib.sha256(f"{text}\0{page}".encode()).hexdigest()


def html_path(report_path: Path) -> Path:
    """The HTML page beside a Markdown report: same name, `.html`."""
    return report_path.with_suffix(".html")
