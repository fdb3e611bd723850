"""One rounding rule on every surface: the same exact 5/8 is 0.63 in the terminal, in JSON,
in Markdown and on a plot label (never the half-even 0.62 of `f"{0.625:.2f}"`)."""

from __future__ import annotations

import json

import pandas as pd

from evalflow.cli.output import emit_json, emit_markdown, emit_table, records
from evalflow.domain.rollup import rollup
from evalflow.domain.rounding import format_half_up
from evalflow.reports import markdown


def five_eighths() -> pd.Series:
    """A run whose Final is exactly 5/8: one P0 AC with I = 5/8 and T = 5/8."""
    checks = [{"check_id": f"{k}{n}", "ac_id": "A-1", "kind": k} for k in "IT" for n in range(8)]
    votes = [
        {"run_key": "r", "check_id": c["check_id"], "majority": "MET" if n % 8 < 5 else "UNMET"}
        for n, c in enumerate(checks)
    ]
    stories = [{"ac_id": "A-1", "story_id": "A", "priority": "P0", "assumed": False}]
    return rollup(pd.DataFrame(votes), pd.DataFrame(checks), pd.DataFrame(stories)).final.iloc[0]


def test_five_eighths_is_063_on_every_surface(capsys) -> None:
    final = five_eighths()
    assert final["final_value"] == 0.625 and f"{final['final_value']:.2f}" == "0.62"
    cols = ["final_value", "final"]
    rows = [(final["final_value"], final["final"])]

    emit_json(records(cols, rows))
    stored = json.loads(capsys.readouterr().out)[0]
    assert stored["final"] == 0.63  # JSON carries the reported value, rounded by the rule

    emit_table(cols, rows)
    terminal = capsys.readouterr().out
    assert terminal.count("0.63") == 2 and "0.62" not in terminal

    emit_markdown(cols, rows)
    assert capsys.readouterr().out.splitlines()[-1] == "| 0.63 | 0.63 |"
    assert markdown._fmt(final["final_value"]) == "0.63"  # the report's formatter
    assert format_half_up(final["final_value"]) == "0.63"  # the plots' label formatter


def test_query_cells_are_plain_text_and_non_scores_keep_full_precision(capsys) -> None:
    """Issue 27: `evalflow query` dropped "[x]" as rich markup and printed 1e-4 as 0.00."""
    from evalflow.cli.output import SCORE_COLUMNS

    cols = ["note", "cost_usd", "final"]
    emit_table(cols, [("[x] done [bold]", 0.0001, 0.625)], rounded=SCORE_COLUMNS)
    out = capsys.readouterr().out
    assert "[x] done [bold]" in out
    assert "0.0001" in out and "0.63" in out and "0.625" not in out
