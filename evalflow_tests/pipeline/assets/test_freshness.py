"""Which incomplete runs are evaluated again (issue 31): only those a new attempt can fill."""

from __future__ import annotations

import pandas as pd
import pytest

from evalflow.pipeline.assets.freshness import _retry_incomplete


class StubWarehouse:
    def __init__(self, tables: dict[str, pd.DataFrame]) -> None:
        self.tables = tables

    def has(self, table: str, partition: str | None = None, judge: str | None = None) -> bool:
        return table in self.tables

    def read(
        self, table: str, partition: str | None = None, judge: str | None = None
    ) -> pd.DataFrame:
        return self.tables[table]


def warehouse(reasons: list[str], *, complete: bool = False, deterministic: bool = False):
    verdicts = pd.DataFrame(
        {"status": ["MET", *["UNSCORED"] * len(reasons)], "rationale": ["ok", *reasons]}
    )
    return StubWarehouse(
        {
            "final_score": pd.DataFrame({"complete": [complete]}),
            "run_manifest": pd.DataFrame({"judge_deterministic": [deterministic]}),
            **{f"scoring_run_{run}": verdicts for run in (1, 2, 3)},
        }
    )


@pytest.mark.parametrize(
    "reasons",
    [
        ["malformed answer twice: no submit_verdict call (stop_reason refusal)"],
        ["tool loop exhausted: no verdict after 12 turns", "judge said [validator: x]"],
    ],
)
def test_unscored_checks_an_answer_decided_are_not_evaluated_again(reasons) -> None:
    assert not _retry_incomplete(warehouse(reasons), "p", "anthropic")


@pytest.mark.parametrize(
    "reason", ["budget stop", "API failure: HTTP 529 OverloadedError", "judge error: boom"]
)
def test_checks_no_answer_decided_are_resumed(reason: str) -> None:
    assert _retry_incomplete(warehouse(["malformed answer twice: x", reason]), "p", "anthropic")


def test_complete_or_deterministic_runs_are_never_resumed() -> None:
    assert not _retry_incomplete(warehouse(["budget stop"], complete=True), "p", "anthropic")
    assert not _retry_incomplete(warehouse(["budget stop"], deterministic=True), "p", "anthropic")
