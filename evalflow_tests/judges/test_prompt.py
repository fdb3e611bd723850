from __future__ import annotations

from evalflow.judges.anthropic_judge import _Submission
from evalflow.judges.prompt import SUBMIT_TOOL

ORDER = ["evidence", "searches", "rationale", "status"]


def test_verdict_schema_asks_for_evidence_and_rationale_before_status() -> None:
    schema = SUBMIT_TOOL["input_schema"]
    assert list(schema["properties"]) == ORDER
    assert schema["required"] == ORDER
    assert list(_Submission.model_fields) == ORDER
