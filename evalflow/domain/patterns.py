"""Regular expressions that come from input, run by an engine with linear-time matching.

Every pattern evalflow did not write itself — a baseline probe, the pattern a model passes to
the judge's `grep` tool, a scan over a skill folder — is compiled here with RE2, which matches
in time linear in the input and bounded memory, so no pattern can stall a run (Python's `re`
backtracks: `(a+)+$` on a 35-character line never finishes and holds the GIL). RE2 has no
backreferences and no lookaround; such a pattern is refused with a clear error instead of
being run by a slower engine.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Protocol

import re2

# Memory RE2 may use to compile one pattern (its DFA cache); a larger program is refused.
MAX_PATTERN_MEMORY = 16 << 20
MAX_PATTERN_CHARS = 2_000


class UntrustedPatternError(ValueError):
    """A pattern RE2 cannot run (unsupported syntax, too large); the message says why."""


class Match(Protocol):
    def start(self, group: int = 0) -> int: ...
    def end(self, group: int = 0) -> int: ...
    def group(self, group: int = 0) -> str: ...


class Pattern(Protocol):
    pattern: str
    programsize: int  # RE2 instructions: a search costs up to this × the text's length

    def search(self, text: str) -> Match | None: ...
    def match(self, text: str) -> Match | None: ...
    def finditer(self, text: str) -> Iterator[Match]: ...


def _options(ignore_case: bool) -> re2.Options:
    options = re2.Options()
    options.max_mem = MAX_PATTERN_MEMORY
    options.log_errors = False
    options.case_sensitive = not ignore_case
    return options


def compile_linear(pattern: str) -> Pattern:
    """One of evalflow's own patterns that runs over untrusted text, on RE2 (module import
    time: a pattern RE2 cannot run is a programming error, raised as such)."""
    return re2.compile(pattern, _options(ignore_case=False))


@lru_cache(maxsize=4096)
def compile_untrusted(pattern: str, *, ignore_case: bool = False) -> Pattern:
    """`pattern` compiled by RE2, or `UntrustedPatternError` naming what RE2 rejects."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise UntrustedPatternError(
            f"pattern is {len(pattern)} characters long; the limit is {MAX_PATTERN_CHARS}"
        )
    try:
        return re2.compile(pattern, _options(ignore_case))
    except re2.error as exc:
        reason = exc.args[0] if exc.args else str(exc)
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise UntrustedPatternError(
            f"pattern {pattern!r} is refused by the linear-time regex engine (RE2): {reason} "
            "(RE2 has no backreferences and no lookahead/lookbehind)"
        ) from exc
