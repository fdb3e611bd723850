"""Gold-evidence retrieval cases from the calibration set and the pinned figures of the
`bm25-evidence` retriever (with and without identifier fusion) at k = 5 and 10."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalflow.io.calibration import evidence_cases
from evalflow.io.rag_eval_evidence import evidence_report

METRICS = ("mean_recall", "mean_precision", "mrr", "map", "mean_ndcg")
# (recall, precision, MRR, MAP, nDCG) over the 38 cases with gold evidence.
PINNED = {
    (5, "fusion"): (0.8135964912280702, 0.26842105263157895, 0.7486842105263157,
                    0.6186403508771929, 0.7026883864930248),
    (5, "no_fusion"): (0.8267543859649124, 0.2736842105263158, 0.7355263157894737,
                       0.6433114035087719, 0.7165245158765835),
    (10, "fusion"): (0.9868421052631579, 0.1736842105263158, 0.7557017543859649,
                     0.6665517961570593, 0.7740542023517097),
    (10, "no_fusion"): (0.9868421052631579, 0.1736842105263158, 0.7428362573099415,
                        0.6861372180451127, 0.7829276424637971),
}  # fmt: skip


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("evidence-warehouse")


def test_cases_come_from_gold_evidence_over_the_diff_surface(warehouse: Path) -> None:
    per_case = evidence_cases(warehouse=warehouse)
    assert [name for name, _, _ in per_case] == [
        "billing/agent-r1",
        "invites/agent-r1",
        "reminders/agent-r1",
        "signup/agent-r1",
    ]
    assert [len(cases) for _, _, cases in per_case] == [12, 9, 7, 10]
    _, files, cases = per_case[0]
    paths = [path for path, _ in files]
    assert "billing/webhooks.py" in paths
    assert "tests/e2e/test_payment_webhooks.py" in paths
    mock_only = next(c for c in cases if c.id == "billing/agent-r1/BI1-AC2-T1")
    assert mock_only.query.startswith("An e2e test delivers `payment.failed`")
    assert mock_only.query.endswith("the subscription status becomes `past_due`.")
    assert mock_only.relevant == [
        "tests/e2e/test_payment_webhooks.py:1-20",
        "tests/e2e/test_payment_webhooks.py:16-35",
    ]
    ids = [c.id for _, _, group in per_case for c in group]
    assert "signup/agent-r1/SU3-AC1-I1" not in ids  # absent feature: no gold evidence
    assert all(c.relevant for _, _, group in per_case for c in group)


@pytest.mark.parametrize("k", [5, 10])
def test_bm25_evidence_figures_are_pinned(k: int, warehouse: Path) -> None:
    report = evidence_report(k=k, warehouse=warehouse)
    assert report["retriever"] == "bm25-evidence"
    assert report["k"] == k
    assert len(report["cases"]) == 38
    got = tuple(report[m] for m in METRICS)
    assert got == pytest.approx(PINNED[(k, "fusion")], abs=1e-12)
    variant = report["variants"]["no_fusion"]
    assert variant["options"] == {"fusion": False}
    assert tuple(variant[m] for m in METRICS) == pytest.approx(PINNED[(k, "no_fusion")], abs=1e-12)
