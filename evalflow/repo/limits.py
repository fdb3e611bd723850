"""Bounds on what a hostile repository can make evalflow do, each set by an environment variable.

An evaluated repository is written by an agent: 200,000 files, a directory 5,000 deep or a
2 GB file must end in one line naming the bound that was hit — never a hang, never a crash,
never a verdict on the project (a run that hits one is not scored: exit 2). Every default is
far above an honest run (the largest real repository evalflow scores has 1,594 files, 12
directory levels and 18 MB). Values are read when used, so a test or an operator lowers a
bound for one command.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from evalflow.errors import InputError, LimitExceededError


@dataclass(frozen=True)
class Bound:
    env: str
    default: float
    what: str  # the quantity, for messages: "files per snapshot"
    integer: bool = True
    maximum: float = 1e15

    def value(self) -> float:
        """The bound in force: the variable when set (finite, positive, at most `maximum`)."""
        raw = os.environ.get(self.env, "").strip()
        if not raw:
            return self.default
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not 0 < value <= self.maximum or (self.integer and not value.is_integer()):
            kind = "whole number" if self.integer else "number"
            raise InputError(
                f"{self.env}={raw!r} is not a {kind} in (0, {self.maximum:g}]",
                fix=f"unset it (default {self.default:g}, the {self.what}) or give one",
            )
        return value

    def exceeded(self, found: str, where: str) -> LimitExceededError:
        return LimitExceededError(
            f"{found}; the limit is {self.value():g} {self.what} ({self.env}): not scored",
            where=where,
            fix=f"raise {self.env} if the repository is honest, or score a smaller one",
        )


MAX_FILES = Bound("EVALFLOW_MAX_FILES", 100_000, "files per snapshot")
MAX_FILE_BYTES = Bound("EVALFLOW_MAX_FILE_BYTES", 1_000_000, "bytes per file (larger: skipped)")
MAX_PATH_DEPTH = Bound("EVALFLOW_MAX_PATH_DEPTH", 100, "directory levels per path")
MAX_READ_BYTES = Bound("EVALFLOW_MAX_READ_BYTES", 512_000_000, "bytes read per snapshot")
# A 2 GB file makes `update-index` take minutes.
GIT_TIMEOUT_S = Bound(
    "EVALFLOW_GIT_TIMEOUT_S", 120, "seconds per git child", integer=False, maximum=86_400
)
PREPARE_S = Bound("EVALFLOW_PREPARE_TIMEOUT_S", 600, "seconds to prepare a run", integer=False)
TOOL_CALL_S = Bound("EVALFLOW_TOOL_CALL_S", 10, "seconds per judge tool call", integer=False)
TOOL_PROGRAM_SIZE = Bound("EVALFLOW_TOOL_RE2_PROGRAM", 1_000, "RE2 instructions per pattern")
BOUNDS = (
    GIT_TIMEOUT_S,
    MAX_FILES,
    MAX_FILE_BYTES,
    MAX_PATH_DEPTH,
    MAX_READ_BYTES,
    PREPARE_S,
    TOOL_CALL_S,
    TOOL_PROGRAM_SIZE,
)

# The deadline of the step under way (one per thread: Dagster and the CLI run steps there).
_DEADLINE: ContextVar[tuple[float, Bound, str] | None] = ContextVar(
    "evalflow_deadline", default=None
)


@contextmanager
def budget(bound: Bound, what: str) -> Iterator[None]:
    """Run the block under the wall-clock `bound`: every git child in it gets at most what is
    left (`remaining_s`), and one starting after the end raises naming `bound`."""
    token = _DEADLINE.set((time.monotonic() + bound.value(), bound, what))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def remaining_s() -> float | None:
    """Seconds left of the enclosing `budget` (None outside one; at most 0 once spent)."""
    deadline = _DEADLINE.get()
    return None if deadline is None else deadline[0] - time.monotonic()


def budget_spent(where: str) -> LimitExceededError:
    """The error for the enclosing budget (call only inside one)."""
    deadline = _DEADLINE.get()
    assert deadline is not None, "budget_spent outside a budget"
    _, bound, what = deadline
    return bound.exceeded(f"{what} did not finish in time", where)
