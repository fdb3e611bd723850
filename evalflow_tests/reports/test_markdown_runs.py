"""The report shows what each `run` probe cited as evidence observed, beside file:line."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from evalflow.domain.models import Baseline
from evalflow.reports.markdown import _behaviour_lines

BASELINE = Baseline.model_validate(
    {
        "benchmark": "b",
        "prd": "prd.md",
        "acs": [
            {
                "id": "AC1",
                "text": "t",
                "checks": [
                    {
                        "id": "I1",
                        "kind": "I",
                        "proposition": "p",
                        "run": [{"command": "app start", "expect": {"exit_code": 0}}],
                    },
                    {"id": "I2", "kind": "I", "proposition": "q"},
                ],
            }
        ],
    }
)


def test_run_evidence_is_listed_with_its_observed_output() -> None:
    run = {"kind": "run", "command": "app start", "expectation": "exit 0", "output": "a\n\nb\nc"}
    cited = {"kind": "lines", "path": "app.py", "start_line": 3, "end_line": 3, "quote": "def f():"}
    by_check = pd.DataFrame({"evidence": [[run, cited], [cited]]}, index=["I1", "I2"])
    lines = _behaviour_lines(SimpleNamespace(baseline=BASELINE), by_check)
    assert lines[-1] == "- **I1**: `app start` ⇒ exit 0; observed: a / b"
    assert _behaviour_lines(SimpleNamespace(baseline=BASELINE), by_check.iloc[1:]) == []
