"""How every command fails: one line on stderr and the fixed exit codes of `evalflow.errors`.

Used by `evalflow.cli.main` and by commands that can also run on their own
(`python -m evalflow.cli.plugin`), so the mapping exists once. EVALFLOW_DEBUG=1 prints an
internal failure's traceback too; the exit code stays the same with or without it.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

import click

from evalflow.errors import EXIT_INTERNAL, EvalflowError, environment_failure_of

F = TypeVar("F", bound=Callable[..., Any])


def exit_code_for(exc: Exception) -> int:
    """Print the one-line message for `exc` and return its exit code."""
    if not isinstance(exc, EvalflowError):
        # A full disk or an unwritable directory is the machine's, fixable: exit 2 with the fix.
        exc = environment_failure_of(exc) or exc
    if isinstance(exc, EvalflowError):
        click.echo(f"error: {exc.one_line()}", err=True)
        return exc.exit_code
    if os.environ.get("EVALFLOW_DEBUG"):
        traceback.print_exception(exc, file=sys.stderr)
    click.echo(
        f"internal error: {type(exc).__name__}: {exc} "
        "(rerun with EVALFLOW_DEBUG=1 for the traceback and report it)",
        err=True,
    )
    return EXIT_INTERNAL


def guarded(fn: F) -> F:
    """Wrap a command so its failures exit as `exit_code_for` says, however it is run."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except Exception as exc:
            sys.exit(exit_code_for(exc))

    return wrapper  # type: ignore[return-value]
