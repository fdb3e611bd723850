"""Shared fixture of the rubric tests: the shipped rubric."""

from __future__ import annotations

import pytest

from evalflow.domain.rubric.models import Rubric
from evalflow.io.ledger import load_rubric


@pytest.fixture(scope="session")
def rubric() -> Rubric:
    return load_rubric()
