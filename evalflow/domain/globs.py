"""Path globs with `**` (any number of directories), used by probes and level conventions.

`fnmatch` lets `*` cross `/`, which makes `app/*.py` match `app/x/y.py`; these globs don't.
"""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> re.Pattern[str]:
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
    return re.compile("".join(out) + r"\Z")


def glob_match(path: str, pattern: str) -> bool:
    """Whether a repository-relative POSIX path matches a glob."""
    return _compile(pattern).match(path) is not None


def any_glob(path: str, patterns: tuple[str, ...] | list[str]) -> bool:
    return any(glob_match(path, p) for p in patterns)
