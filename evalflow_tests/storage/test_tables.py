"""The table contracts as an analyst meets them: typed columns a plain DuckDB query can use."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from evalflow.storage.arrow import TableContractError
from evalflow.storage.catalog import query
from evalflow.storage.tables import TABLES
from evalflow.storage.warehouse import Warehouse
from evalflow_tests.storage.test_engines import synthetic

PER_RUN = sorted(name for name, spec in TABLES.items() if spec.per_run)


def test_every_per_run_table_names_its_benchmark_and_framework() -> None:
    for table in PER_RUN:
        fields = TABLES[table].model.model_fields
        assert fields["benchmark"].annotation is str, table
        assert fields["framework"].annotation is str, table


def test_a_scored_run_carries_benchmark_and_framework_in_every_table(
    scored_demo_run: Path,
) -> None:
    wh = Warehouse(str(scored_demo_run))
    stored = [t for t in PER_RUN if wh.parts(t)]
    assert {"scoring_run_1", "gates", "ac_score", "report", "evaluation_history"} <= set(stored)
    for table in stored:
        _, rows = query(wh, f'SELECT DISTINCT run_key, benchmark, framework FROM "{table}"')
        assert rows == [("trialist.bmad.r1", "trialist", "bmad")], table


@pytest.mark.parametrize(
    ("item", "shown"),
    [
        ({"kind": "lines", "path": "a.py", "start_line": "3"}, "'start_line': '3'"),
        ({"kind": "lines", "path": "a.py", "line": 3}, "'line': 3"),
        ({"path": "a.py", "start_line": 3}, "'path': 'a.py'"),  # no kind
    ],
)
def test_a_struct_that_does_not_fit_is_refused_not_coerced(
    tmp_path: Path, item: dict, shown: str
) -> None:
    frame = synthetic(TABLES["scoring_run_1"], "b.f.r1", True)
    frame["evidence"] = pd.Series([[item]], dtype=object)
    with pytest.raises(TableContractError, match=r"column 'evidence' row 0: .*" + re.escape(shown)):
        Warehouse(str(tmp_path)).write("scoring_run_1", frame, "b.f.r1")
    assert not list(tmp_path.rglob("*.parquet"))


def test_lists_of_structs_round_trip(tmp_path: Path) -> None:
    frame = synthetic(TABLES["scoring_run_1"], "b.f.r1", True)
    run = {"kind": "run", "command": "app start", "expectation": "exit 0", "output": "ok"}
    frame["evidence"] = pd.Series([[{"kind": "lines", "path": "a.py", "start_line": 3}, run]])
    frame["flags"] = pd.Series([["absence-proven", "evidence-invalid"]])
    wh = Warehouse(str(tmp_path))
    wh.write("scoring_run_1", frame, "b.f.r1")
    back = wh.read("scoring_run_1", "b.f.r1").iloc[0]
    first, second = back["evidence"]
    assert first["path"] == "a.py" and first["start_line"] == 3 and first["command"] is None
    assert second == {
        **dict.fromkeys(("path", "start_line", "end_line", "quote")),
        **run,
    }
    assert list(back["flags"]) == ["absence-proven", "evidence-invalid"]
    # A frame read back (numpy arrays, numpy ints) writes the same bytes again.
    part = tmp_path / wh.part_path("scoring_run_1", "b.f.r1", "x")  # the judge of `synthetic`
    before = part.read_bytes()
    wh.write("scoring_run_1", wh.read("scoring_run_1", "b.f.r1"), "b.f.r1")
    assert part.read_bytes() == before
