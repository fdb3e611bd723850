"""The one rounding rule of every surface (terminal, JSON, Markdown, plots): half up from the
exact value, never Python's half-even `round()` or `f"{x:.2f}"` (which print 5/8 as 0.62).

Pure Python on purpose: every command that prints a score uses it, and a light command
(`evalflow query`, `leaderboard`) must not pay for numpy or pandas to round a number.
"""

from __future__ import annotations

import math
from fractions import Fraction

TIE_TOLERANCE = 1e-9


def round_half_up(value: Fraction | float, digits: int = 2) -> float:
    """Half-up rounding to `digits` decimals from the exact value.

    A Fraction is rounded exactly. A float is taken to stand for the ratio of counts it was
    computed from: one within 1e-9 (in units of the last digit) of a tie *is* that tie and
    rounds up, so 5/8 stored as 0.625 and 123/200 stored as 0.61499… both round up.
    """
    scale = 10**digits
    if isinstance(value, Fraction):
        return math.floor(value * scale + Fraction(1, 2)) / scale
    scaled = float(value) * scale + 0.5
    nearest = round(scaled)
    if abs(scaled - nearest) < TIE_TOLERANCE:
        return nearest / scale
    return math.floor(scaled) / scale


def format_half_up(value: Fraction | float | None, digits: int = 2) -> str:
    """`value` rounded half up and printed with `digits` decimals; "—" for NULL/NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{round_half_up(value, digits):.{digits}f}"
