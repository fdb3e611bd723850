"""The gold-evidence report of the `bm25-evidence` retriever, for `evalflow rag-eval
--retriever bm25-evidence` (SPEC §4 harness on real code instead of the synthetic corpus).

Cases come from the calibration set's gold files (`evalflow.io.calibration.evidence_cases`):
query = a check's proposition plus its AC text; relevant = the retriever's chunks of the
case's diff surface at head that overlap the check's gold evidence lines. The retriever is
built per case over that case's files. The top-level metrics are those of the registered
retriever (BM25 fused with identifier matches); `variants.no_fusion` is plain BM25.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalflow.io.calibration import (
    DEFAULT_SET,
    EVIDENCE_RETRIEVER,
    RETRIEVER_VARIANTS,
    evidence_retrieval_report,
)


def evidence_report(
    set_dir: Path = DEFAULT_SET, k: int = 10, *, warehouse: Path | None = None
) -> dict[str, Any]:
    """`{retriever, set, k, mean_recall, mean_precision, mrr, map, mean_ndcg, cases,
    variants: {no_fusion: {...same metrics...}}}` — the rag-eval JSON shape, so the gate on
    `mean_recall` works unchanged."""
    reports = {
        name: evidence_retrieval_report(k, set_dir=set_dir, warehouse=warehouse, options=options)
        for name, options in RETRIEVER_VARIANTS.items()
    }
    main = reports.pop("fusion")
    return {
        "retriever": EVIDENCE_RETRIEVER,
        "set": str(set_dir),
        **main.model_dump(),
        "variants": {
            name: {**report.model_dump(), "options": RETRIEVER_VARIANTS[name]}
            for name, report in reports.items()
        },
    }
