"""`evalflow rag-eval`: the SPEC §4 retrieval gate.

Runs one registered vector retriever over the deterministic synthetic corpus — or the
`bm25-evidence` retriever over the calibration set's gold evidence — prints the five metrics
and exits 1 when mean recall@k is below `--min-recall` (the only gated metric).
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from evalflow.domain.retrieval.corpus import CorpusConfig, generate_corpus
from evalflow.domain.retrieval.metrics import RetrievalReport, evaluate_retrieval
from evalflow.domain.retrieval.retrievers import REGISTRY, make_retriever, retriever_names
from evalflow.errors import EXIT_BELOW_THRESHOLD

_WORST_SHOWN = 5


EVIDENCE = "bm25-evidence"


def _check_retriever(ctx: click.Context, param: click.Parameter, value: str) -> str:
    valid = ", ".join([*retriever_names("vector"), EVIDENCE])
    spec = REGISTRY.get(value)
    if spec is None:
        raise click.BadParameter(f"unknown retriever {value!r}; valid names: {valid}")
    if spec.kind != "vector" and value != EVIDENCE:
        raise click.BadParameter(
            f"{value!r} ranks code text and cannot run on the synthetic vector corpus; "
            f"valid names: {valid}"
        )
    return value


def _print_table(
    report: RetrievalReport, retriever: str, source: str, min_recall: float, passed: bool
) -> None:
    console = Console()
    k = report.k
    summary = Table(title=f"rag-eval · {retriever} · {source}", min_width=60)
    summary.add_column("metric")
    summary.add_column("value", justify="right")
    summary.add_column("gate", justify="right")
    gate = f"≥ {min_recall:.3f} {'pass' if passed else 'FAIL'}"
    summary.add_row(f"recall@{k}", f"{report.mean_recall:.4f}", gate)
    summary.add_row(f"precision@{k}", f"{report.mean_precision:.4f}", "")
    summary.add_row(f"MRR@{k}", f"{report.mrr:.4f}", "")
    summary.add_row(f"MAP@{k}", f"{report.map:.4f}", "")
    summary.add_row(f"nDCG@{k}", f"{report.mean_ndcg:.4f}", "")
    summary.add_row("cases", str(len(report.cases)), "")
    console.print(summary)

    worst = sorted(report.cases, key=lambda c: (c.recall, c.ndcg, c.id))[:_WORST_SHOWN]
    detail = Table(title=f"lowest recall@{k} cases")
    for column in ("case", "recall", "precision", "RR", "AP", "nDCG"):
        detail.add_column(column, justify="left" if column == "case" else "right")
    for case in worst:
        detail.add_row(
            case.id,
            *(f"{v:.3f}" for v in (case.recall, case.precision, case.rr, case.ap, case.ndcg)),
        )
    console.print(detail)


@click.command("rag-eval")
@click.option(
    "--min-recall",
    type=click.FloatRange(0.0, 1.0),
    default=0.6,
    show_default=True,
    help="Gate: exit 1 when mean recall@k is below this.",
)
@click.option(
    "--k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="Cut-off rank."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
@click.option(
    "--retriever",
    default="exact",
    show_default=True,
    callback=_check_retriever,
    help="exact, binary, ivf, binary-flipped (synthetic corpus) or bm25-evidence "
    "(gold evidence of the calibration set).",
)
@click.option(
    "--set",
    "set_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Calibration set for --retriever bm25-evidence [default: data/calibration].",
)
@click.option(
    "--corpus-seed",
    type=click.IntRange(0, 0xFFFFFFFF),
    default=42,
    show_default=True,
    help="mulberry32 seed of the synthetic corpus.",
)
@click.pass_context
def rag_eval(
    ctx: click.Context,
    min_recall: float,
    k: int,
    as_json: bool,
    retriever: str,
    set_dir: Path | None,
    corpus_seed: int,
) -> None:
    """Gate a retriever on the deterministic synthetic corpus (SPEC §4).

    Builds the 24-topic × 10-chunk corpus (120 queries, 96 dims, noise 0.2) from mulberry32,
    runs the retriever, and reports recall, precision, MRR, MAP and nDCG at k. Only recall@k
    is gated; exit code 1 when it is below --min-recall. `--retriever bm25-evidence` gates
    the evidence retriever judges use, on the calibration set's gold file:line evidence.
    """
    if retriever == EVIDENCE:
        from evalflow.io.calibration import DEFAULT_SET
        from evalflow.io.rag_eval_evidence import evidence_report

        payload = evidence_report(set_dir or DEFAULT_SET, k)
        report = RetrievalReport.model_validate(
            {field: payload[field] for field in RetrievalReport.model_fields}
        )
        source = f"gold evidence of {payload['set']}"
    else:
        corpus = generate_corpus(CorpusConfig(seed=corpus_seed))
        index = make_retriever(retriever, corpus.chunk_ids, corpus.chunk_vectors)
        report = evaluate_retrieval(corpus.cases(), index.retrieve_fn(k), k)
        digest = corpus.digest()
        payload = {
            "retriever": retriever,
            "corpus": {**corpus.config.model_dump(), "digest": digest},
            **report.model_dump(),
        }
        source = f"synthetic corpus {digest[:12]}"
    passed = report.mean_recall >= min_recall
    if as_json:
        click.echo(json.dumps({**payload, "min_recall": min_recall, "passed": passed}, indent=2))
    else:
        _print_table(report, retriever, source, min_recall, passed)
    if not passed:
        click.echo(
            f"gate failed: mean recall@{k} {report.mean_recall:.4f} < min {min_recall:.4f} "
            f"(retriever {retriever})",
            err=True,
        )
        ctx.exit(EXIT_BELOW_THRESHOLD)
