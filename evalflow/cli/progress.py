"""Progress of multi-run work (`materialize`, `demo`, `score`): each run's tables as written.

The runs execute in worker processes (or in this one), so the display reads what Dagster
records rather than hooking the runs: a thread polls the instance once a second for the
runs started since the display opened and counts their materialised tables against the
tables planned for the run (a run is one Dagster step, so its steps would say nothing until it
ends). On a terminal that is one live bar per run ("mini.good.r1 scoring_run_2 6/28"); off a
terminal (a pipe, a CI log) one plain line per table written, never a bar redrawn into the
log. Nothing here touches what the runs compute or store.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

if TYPE_CHECKING:
    import dagster as dg

POLL_SECONDS = 1.0


@dataclass
class _Run:
    partition: str
    total: int
    done: set[str] = field(default_factory=set)
    current: str = ""


def table_line(partition: str, table: str, done: int, total: int) -> str:
    """The off-terminal line for one table written."""
    return f"  {partition} {done}/{total} {table}"


class RunProgress:
    """`with RunProgress(root, partitions): ...` shows the tables those runs' Dagster runs
    write."""

    def __init__(
        self, warehouse_root: str, partitions: list[str], console: Console | None = None
    ) -> None:
        self._root = warehouse_root
        self._partitions = set(partitions)
        self._console = console or Console(stderr=True)
        self._since = datetime.now(UTC)
        self._runs: dict[str, _Run] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="evalflow-progress", daemon=True)
        self._bar: Progress | None = None
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> RunProgress:
        if self._console.is_terminal:
            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                console=self._console,
                transient=True,
            )
            self._bar.start()
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        if self._bar is not None:
            self._bar.stop()

    def _watch(self) -> None:
        from evalflow.pipeline import orchestrate

        try:
            instance = orchestrate.instance(self._root)
        except Exception:  # the runs report a bad instance themselves, once
            return
        while True:
            stopping = self._stop.wait(POLL_SECONDS)
            # A display never fails the runs it shows: a failed poll waits for the next one.
            with contextlib.suppress(Exception):
                self.poll(instance)
            if stopping:
                return

    def poll(self, instance: dg.DagsterInstance) -> None:
        """Read the runs' written tables once and show what changed."""
        import dagster as dg

        records = instance.get_runs(dg.RunsFilter(created_after=self._since))
        for run in records:
            partition = run.tags.get("dagster/partition")
            if partition not in self._partitions:
                continue
            state = self._runs.setdefault(run.run_id, _Run(partition, 0))
            # Counted on every poll: a run is listed before all its planned events are stored.
            planned = dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED
            state.total = len(instance.all_logs(run.run_id, of_type=planned))
            written = dg.DagsterEventType.ASSET_MATERIALIZATION
            for record in instance.all_logs(run.run_id, of_type=written):
                table = record.dagster_event.asset_key.path[-1]
                if table in state.done:
                    continue
                state.done.add(table)
                state.current = table
                if self._bar is None:
                    line = table_line(partition, table, len(state.done), state.total)
                    self._console.print(line, highlight=False, soft_wrap=True)
            self._show(run.run_id, state)

    def _show(self, run_id: str, state: _Run) -> None:
        if self._bar is None:
            return
        description = f"{state.partition} {state.current}"
        if run_id not in self._tasks:
            self._tasks[run_id] = self._bar.add_task(description, total=state.total)
        self._bar.update(
            self._tasks[run_id],
            completed=len(state.done),
            total=state.total,
            description=description,
        )
