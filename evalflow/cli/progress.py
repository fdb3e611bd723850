"""Progress of multi-run work (`materialize`, `demo`, `score`): each run's steps as they finish.

The runs execute in worker processes (or in this one), so the display reads what Dagster
records rather than hooking the runs: a thread polls the instance once a second for the
runs started since the display opened and counts their finished steps against the steps of
their execution plan. On a terminal that is one live bar per run ("mini.good.r1 scoring_run_2
5/16"); off a terminal (a pipe, a CI log) one plain line per finished step, never a bar
redrawn into the log. Nothing here touches what the runs compute or store.
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


def step_line(partition: str, step: str, done: int, total: int) -> str:
    """The off-terminal line for one finished step."""
    return f"  {partition} {done}/{total} {step}"


class StepProgress:
    """`with StepProgress(root, partitions): ...` shows the steps of those runs' Dagster runs."""

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

    def __enter__(self) -> StepProgress:
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
        """Read the runs' finished steps once and show what changed."""
        import dagster as dg

        records = instance.get_runs(dg.RunsFilter(created_after=self._since))
        for run in records:
            partition = run.tags.get("dagster/partition")
            if partition not in self._partitions:
                continue
            state = self._runs.get(run.run_id)
            if state is None:
                plan = instance.get_execution_plan_snapshot(run.execution_plan_snapshot_id)
                state = self._runs[run.run_id] = _Run(partition, len(plan.steps))
            for event in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_START):
                state.current = event.step_key or state.current
            finished = instance.all_logs(
                run.run_id,
                of_type={dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE},
            )
            for event in finished:
                if event.step_key and event.step_key not in state.done:
                    state.done.add(event.step_key)
                    if self._bar is None:
                        line = step_line(partition, event.step_key, len(state.done), state.total)
                        self._console.print(line, highlight=False, soft_wrap=True)
            self._show(run.run_id, state)

    def _show(self, run_id: str, state: _Run) -> None:
        if self._bar is None:
            return
        description = f"{state.partition} {state.current}"
        if run_id not in self._tasks:
            self._tasks[run_id] = self._bar.add_task(description, total=state.total)
        self._bar.update(self._tasks[run_id], completed=len(state.done), description=description)
