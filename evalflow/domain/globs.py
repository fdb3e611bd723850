"""Path globs with `**` (any number of directories), used by probes, level conventions and the
judge's read-only tools.

`fnmatch` lets `*` cross `/`, which makes `app/*.py` match `app/x/y.py`; these globs don't.
Globs come from untrusted input (a baseline, a model's `path_glob`), so they are compiled for
RE2, which matches in time linear in the path: on Python's backtracking `re`, `app/*a*a…*b`
took minutes per path. `glob_problem` names a glob too large to be a real one, which a
baseline may not hold.
"""

from __future__ import annotations

import re
from functools import lru_cache

from evalflow.domain.patterns import Pattern, compile_untrusted

MAX_GLOB_CHARS = 300
# Real globs have a few wildcards (`src/**/test_*.py`); dozens only serve to slow a matcher.
MAX_GLOB_WILDCARDS = 12


def glob_problem(pattern: str) -> str | None:
    """Why `pattern` is refused as a glob (too long, too many wildcards), or None."""
    if len(pattern) > MAX_GLOB_CHARS:
        return f"glob {pattern[:40]!r}… is {len(pattern)} characters; the limit is {MAX_GLOB_CHARS}"
    wildcards = len(re.findall(r"\*+|\?", pattern))
    if wildcards > MAX_GLOB_WILDCARDS:
        return (
            f"glob {pattern[:40]!r} has {wildcards} wildcards; the limit is "
            f"{MAX_GLOB_WILDCARDS} — name the directories instead"
        )
    return None


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> Pattern:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    # (?s): a path may hold a newline; \z: the end of the path, not of a line.
    return compile_untrusted("(?s)" + "".join(out) + r"\z")


def glob_match(path: str, pattern: str) -> bool:
    """Whether a repository-relative POSIX path matches a glob (in time linear in the path)."""
    return _compile(pattern).match(path) is not None


def any_glob(path: str, patterns: tuple[str, ...] | list[str]) -> bool:
    return any(glob_match(path, p) for p in patterns)
