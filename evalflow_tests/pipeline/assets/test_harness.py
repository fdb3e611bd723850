"""The harness job: retrieval gate (with its canary) and judge calibration, with ledger entries."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from evalflow.io.ledger import ledger_path_for, load_rubric, read_ledger_frame
from evalflow.pipeline.assets import harness_assets
from evalflow.pipeline.io_manager import ParquetIOManagerFactory
from evalflow.pipeline.resources import EvalflowResource
from evalflow.storage.warehouse import Warehouse


def test_harness_assets(tmp_path: Path) -> None:
    root = tmp_path / "wh"
    result = dg.materialize(
        harness_assets,
        resources={
            "evalflow": EvalflowResource(warehouse=str(root)),
            "warehouse_io": ParquetIOManagerFactory(warehouse=str(root)),
        },
        instance=dg.DagsterInstance.ephemeral(),
    )
    assert result.success
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    # The gate passes the production retrievers and catches the broken canary.
    assert checks["recall_gate"] is True
    # The default judge passes its own calibration: no planted defect is MET (the nightly
    # harness schedule is green).
    assert checks["judge_calibrated"] is True
    frame = Warehouse(str(root)).read("retrieval_eval").set_index("retriever")
    assert frame.loc["exact", "mean_recall"] >= 0.95
    assert not frame.loc["binary-flipped", "passed"] and frame.loc["binary-flipped", "canary"]
    assert frame.loc["bm25-evidence", "passed"]
    calibration = Warehouse(str(root)).read("judge_calibration")
    # 17 checks without a verdict (heuristic-6: no portable proof of absence), none against gold
    assert len(calibration) == 50 and (~calibration["agree"]).sum() == 17
    ledger = read_ledger_frame(ledger_path_for(root), load_rubric())
    assert set(ledger["kind"]) == {"retrieval_eval", "judge_calibration"}
