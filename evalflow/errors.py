"""The error types every evalflow command turns into one clear line and an exit code.

Exit codes are fixed across the CLI: 0 ok, 1 a measured result below its threshold (the
retrieval gate, a plugin score under --threshold, a judge that fails calibration), 2 bad input
or usage (including runs that could not be evaluated), 3 an internal failure. A crash is never
confused with a low score; a framework run that scored low or failed a gate was still
evaluated successfully (0).
"""

from __future__ import annotations

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


class ReadOnlyViolationError(EvalflowError):
    """The evaluated repository changed while evalflow was reading it (SPEC core rule 5)."""

    exit_code = EXIT_INTERNAL


class JudgeUnavailableError(EvalflowError):
    """The judge's API refused or stopped answering: the run cannot be scored (exit 2).

    Raised on the first authentication, permission or invalid-request error, and when the
    circuit breaker trips (too many consecutive transient failures, or too long without a
    successful call); never turned into UNSCORED verdicts that would rank a run 0.00.
    """
