"""The error types every evalflow command turns into one clear line and an exit code.

Exit codes are fixed across the CLI: 0 ok, 1 a measured result below its threshold (the
retrieval gate, a plugin score under --threshold, a judge that fails calibration), 2 bad input,
usage or environment (runs that could not be evaluated, a full disk, an unwritable directory),
3 an internal failure. A crash is never confused with a low score; a framework run that scored
low or failed a gate was still evaluated successfully (0).
"""

from __future__ import annotations

import errno
import os

EXIT_OK = 0
EXIT_BELOW_THRESHOLD = 1
EXIT_INPUT = 2
EXIT_INTERNAL = 3


class EvalflowError(Exception):
    """A failure the user can act on: what went wrong, where, and how to fix it."""

    exit_code = EXIT_INPUT

    def __init__(self, what: str, *, where: str | None = None, fix: str | None = None) -> None:
        self.what = what
        self.where = where
        self.fix = fix
        super().__init__(self.one_line())

    def one_line(self) -> str:
        text = self.what
        if self.where:
            text = f"{self.where}: {text}"
        if self.fix:
            text = f"{text} — {self.fix}"
        return text


class InputError(EvalflowError):
    """Malformed or missing input (PRD, baseline, manifest, repository, fixture)."""


class LimitExceededError(InputError):
    """The evaluated repository is beyond a configured resource bound (`evalflow.repo.limits`):
    the run is not scored (exit 2), and the project is not blamed."""


class GitTimeoutError(InputError):
    """A git child ran past `EVALFLOW_GIT_TIMEOUT_S` (the repository is too large for it)."""


class InternalError(EvalflowError):
    """A failure evalflow cannot tell the operator how to fix, reported as such (exit 3)."""

    exit_code = EXIT_INTERNAL


class ReadOnlyViolationError(EvalflowError):
    """The evaluated repository changed while evalflow was reading it (SPEC core rule 5)."""

    exit_code = EXIT_INTERNAL


class JudgeUnavailableError(EvalflowError):
    """The judge's API refused or stopped answering: the run cannot be scored (exit 2).

    Raised on the first authentication, permission or invalid-request error, and when the
    circuit breaker trips (too many consecutive transient failures, or too long without a
    successful call); never turned into UNSCORED verdicts that would rank a run 0.00.
    """


# The OS errors an operator fixes on the machine, each with what to do: reported as an
# InputError (exit 2) about the machine, never blamed on the evaluated project. Anything else an
# OSError says stays an internal failure: evalflow cannot tell the operator how to fix it.
_ENVIRONMENT_FIXES = {
    errno.ENOSPC: "free disk space there (or point --warehouse at a larger disk), then rerun",
    errno.EDQUOT: "free space within your disk quota there, then rerun",
    errno.EROFS: "the file system is read-only: point --warehouse (or DAGSTER_HOME) at a "
    "writable directory",
    errno.EACCES: "make it writable by this user, or point --warehouse (or DAGSTER_HOME) at "
    "a directory you own",
    errno.EPERM: "make it writable by this user, or point --warehouse (or DAGSTER_HOME) at "
    "a directory you own",
}


def environment_failure(code: int | None, where: str | None) -> InputError | None:
    """The InputError for OS error number `code` at `where`, or None when that number is
    not one an operator can fix on the machine (see `_ENVIRONMENT_FIXES`)."""
    if code not in _ENVIRONMENT_FIXES:
        return None
    return InputError(os.strerror(code), where=where, fix=_ENVIRONMENT_FIXES[code])


def environment_failure_of(exc: BaseException) -> InputError | None:
    """`environment_failure` of the first OSError in `exc`'s chain of causes, if any."""
    current: BaseException | None = exc
    while current is not None:
        if isinstance(current, OSError) and current.errno is not None:
            where = str(current.filename) if current.filename else None
            return environment_failure(current.errno, where)
        current = current.__cause__ or current.__context__
    return None
