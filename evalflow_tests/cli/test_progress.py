"""The progress display: each run's written tables, live on a terminal, one line each off it."""

from __future__ import annotations

import io
import re
from pathlib import Path
from types import SimpleNamespace

import dagster as dg
import pytest
from rich.console import Console

from evalflow.cli.progress import RunProgress
from evalflow_tests.cli.test_errors import run_cli


class FakeInstance:
    """Two runs: one of ours with 3 planned tables, one of a partition not asked about."""

    def __init__(self) -> None:
        self.planned: dict[str, list[str]] = {"r1": ["a", "b", "c"], "other": ["a"]}
        self.written: dict[str, list[str]] = {"r1": [], "other": ["a"]}

    def get_runs(self, _filters: dg.RunsFilter) -> list[SimpleNamespace]:
        return [
            SimpleNamespace(run_id=run_id, tags={"dagster/partition": key})
            for run_id, key in (("r1", "b.f.r1"), ("other", "b.x.r1"))
        ]

    def all_logs(self, run_id: str, of_type: object) -> list[SimpleNamespace]:
        planned = of_type == dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED
        tables = (self.planned if planned else self.written)[run_id]
        return [
            SimpleNamespace(dagster_event=SimpleNamespace(asset_key=dg.AssetKey(t))) for t in tables
        ]


def test_off_a_terminal_each_written_table_is_one_line_once() -> None:
    file = io.StringIO()
    instance = FakeInstance()
    display = RunProgress("/unused", ["b.f.r1"], console=Console(file=file, width=40))
    display.poll(instance)
    assert file.getvalue() == ""
    instance.written["r1"] = ["a"]
    display.poll(instance)
    instance.written["r1"] = ["a", "b", "c"]
    display.poll(instance)
    display.poll(instance)
    assert file.getvalue().splitlines() == ["  b.f.r1 1/3 a", "  b.f.r1 2/3 b", "  b.f.r1 3/3 c"]


def test_on_a_terminal_a_bar_per_run_names_the_last_table_written() -> None:
    file = io.StringIO()
    instance = FakeInstance()
    console = Console(file=file, force_terminal=True, color_system=None, width=80)
    with RunProgress("/unused", ["b.f.r1"], console=console) as display:
        display._stop.set()  # no polling thread of its own: this test polls
        instance.written["r1"] = ["a", "b"]
        display.poll(instance)
        assert display._bar is not None
        (task,) = display._bar.tasks
        assert (task.description, task.completed, task.total) == ("b.f.r1 b", 2, 3)


@pytest.mark.slow  # a `score` run through the pipeline (the rendering: tests above)
def test_materialize_off_a_terminal_shows_every_table_of_each_run(
    mini: Path, warehouse_dir: Path, capsys
) -> None:
    code, _, err = run_cli(capsys, "score", str(mini / "runs" / "good.yaml"))
    assert code == 0, err
    counts = [(int(a), int(b)) for a, b in re.findall(r"^  mini\.good\.r1 (\d+)/(\d+) ", err, re.M)]
    assert counts and counts == [(n, counts[0][1]) for n in range(1, counts[0][1] + 1)]
    assert err.index("mini.good.r1 1/") < err.index("✓ mini.good.r1")
