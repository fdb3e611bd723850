"""The table contracts as an analyst meets them: typed columns a plain DuckDB query can use."""

from __future__ import annotations

from pathlib import Path

from evalflow.storage.catalog import query
from evalflow.storage.tables import TABLES
from evalflow.storage.warehouse import Warehouse

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
