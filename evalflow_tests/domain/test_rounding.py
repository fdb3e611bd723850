"""The one rounding rule: half up from the exact value, for floats and Fractions."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import pytest

from evalflow.domain.rounding import format_half_up, round_half_up


def test_python_round_would_be_wrong_here() -> None:
    assert round(0.615, 2) == 0.61  # why the roll-up never uses round() on floats
    assert round_half_up(Fraction(123, 200)) == 0.62


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (5 / 8, "0.63"),  # f"{0.625:.2f}" is "0.62" (half even on an exact binary tie)
        (Fraction(5, 8), "0.63"),
        (123 / 200, "0.62"),  # the float is 0.61499…; the tie is the exact value
        (1 / 3, "0.33"),
        (2 / 3, "0.67"),
        (0.0, "0.00"),
        (None, "—"),
        (float("nan"), "—"),
    ],
)
def test_one_half_up_rule_for_floats_and_fractions(value, text: str) -> None:
    assert format_half_up(value) == text


def test_half_up_with_other_digits() -> None:
    assert format_half_up(0.0625, 3) == "0.063" and f"{0.0625:.3f}" == "0.062"
    assert round_half_up(12.5, 0) == 13.0


def test_rounding_needs_neither_numpy_nor_pandas() -> None:
    probe = (
        "import sys, evalflow.domain.rounding; "
        "print(sorted({'numpy', 'pandas'} & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"
