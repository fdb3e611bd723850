"""Harness assets: the judges and the evidence retrieval are measured before they are trusted.

- `retrieval_eval` (SPEC §4): every registered vector retriever over the deterministic
  synthetic corpus, and the `bm25-evidence` retriever over the calibration set's gold
  evidence; asset check `recall_gate` (blocking) requires recall@10 ≥ 0.6 for the production
  retrievers *and* requires the deliberately broken `binary-flipped` canary to fail, proving
  the gate still catches a silent regression.
- `judge_calibration` (SPEC §1 Calibration): the configured judge against the gold labels of
  `data/calibration`; asset check `judge_calibrated` warns when it disagrees with gold on more
  than 20 % of checks or calls any planted defect MET.
Both append their result to the evaluation ledger.
"""

import dagster as dg
import pandas as pd

from evalflow.domain.calibration import ROW_COLUMNS
from evalflow.domain.retrieval.corpus import CorpusConfig, generate_corpus
from evalflow.domain.retrieval.metrics import evaluate_retrieval
from evalflow.domain.retrieval.retrievers import make_retriever, retriever_names
from evalflow.io.calibration import DEFAULT_SET, calibrate
from evalflow.io.ledger import ledger_path_for, record_evaluation
from evalflow.io.rag_eval_evidence import evidence_report
from evalflow.pipeline.assets.common import KINDS, table_metadata
from evalflow.pipeline.resources import EvalflowResource
from evalflow.storage.tables import columns

GROUP = "harness"
K = 10
MIN_RECALL = 0.6
CANARY = "binary-flipped"
EVIDENCE = "bm25-evidence"
METRICS = ("mean_recall", "mean_precision", "mrr", "map", "mean_ndcg")


def _row(retriever: str, source: str, report: dict) -> dict:
    return {
        "retriever": retriever,
        "source": source,
        "k": K,
        **{m: report[m] for m in METRICS},
        "n_cases": len(report["cases"]),
        "passed": report["mean_recall"] >= MIN_RECALL,
        "canary": retriever == CANARY,
    }


@dg.asset(
    io_manager_key="warehouse_io",
    group_name=GROUP,
    kinds=KINDS,
    check_specs=[
        dg.AssetCheckSpec(
            "recall_gate",
            asset="retrieval_eval",
            blocking=True,
            description=f"recall@{K} ≥ {MIN_RECALL} for every production retriever, and the "
            f"broken `{CANARY}` canary fails it",
        )
    ],
)
def retrieval_eval(evalflow: EvalflowResource):
    """recall@10, precision, MRR, MAP and nDCG of each retriever; only recall is gated."""
    corpus = generate_corpus(CorpusConfig())
    rows = []
    for name in retriever_names("vector"):
        index = make_retriever(name, corpus.chunk_ids, corpus.chunk_vectors)
        report = evaluate_retrieval(corpus.cases(), index.retrieve_fn(K), K).model_dump()
        rows.append(_row(name, f"synthetic:{corpus.digest()[:12]}", report))
    root = evalflow.get_warehouse().workdir
    evidence = evidence_report(DEFAULT_SET, K, warehouse=root)
    rows.append(_row(EVIDENCE, "calibration gold evidence", evidence))
    frame = pd.DataFrame(rows, columns=columns("retrieval_eval"))
    for row in rows:
        record_evaluation(
            "retrieval_eval",
            row["retriever"],
            scores={m: row[m] for m in METRICS},
            results=[(f"recall@{K} >= {MIN_RECALL}", row["passed"], None)],
            passed=row["passed"] != row["canary"],
            ledger_path=ledger_path_for(root),
        )
    production = frame[~frame["canary"]]
    failing = production.loc[~production["passed"], "retriever"].tolist()
    canary_caught = not frame.loc[frame["canary"], "passed"].any()
    recalls = {r["retriever"]: r["mean_recall"] for r in rows}
    yield dg.Output(frame, metadata={**table_metadata("retrieval_eval", frame), **recalls})
    yield dg.AssetCheckResult(
        check_name="recall_gate",
        passed=not failing and canary_caught,
        metadata={"failing": ", ".join(failing) or "none", "canary_caught": canary_caught},
    )


@dg.asset(
    io_manager_key="warehouse_io",
    group_name=GROUP,
    kinds=KINDS,
    check_specs=[
        dg.AssetCheckSpec(
            "judge_calibrated",
            asset="judge_calibration",
            description="Warns when the judge disagrees with gold on more than 20 % of checks "
            "or calls a planted defect MET",
        )
    ],
)
def judge_calibration(evalflow: EvalflowResource):
    """The configured judge against gold: agreement, false-MET rate, valid-evidence share."""
    root = evalflow.get_warehouse().workdir
    result, _, _ = calibrate(
        evalflow.get_judge(None), warehouse=root, ledger_path=ledger_path_for(root)
    )
    summary = result.summary
    frame = result.frame()[list(ROW_COLUMNS)]
    figures = {
        "agreement": summary.agreement,
        "false_met_rate": summary.false_met_rate,
        "valid_evidence_share": summary.valid_evidence_share,
        "disagreement_flag": summary.disagreement_flag,
    }
    measured = {k: v for k, v in figures.items() if v is not None}
    yield dg.Output(frame, metadata={**table_metadata("judge_calibration", frame), **measured})
    yield dg.AssetCheckResult(
        check_name="judge_calibrated",
        passed=summary.status == "pass",
        severity=dg.AssetCheckSeverity.WARN,
        metadata=measured,
    )


harness_assets = [retrieval_eval, judge_calibration]
