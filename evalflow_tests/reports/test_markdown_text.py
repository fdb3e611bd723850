"""Report wording (issue 27): no "PRD: PRD:", no "(exit 127.0)" or "+8.0/-0.0", no
"1 candidates"."""

from __future__ import annotations

from types import SimpleNamespace

from evalflow.domain.side_metrics.common import candidates
from evalflow.reports import markdown


def test_the_prd_title_loses_its_own_prefix() -> None:
    assert markdown._prd_title("PRD: Mini") == "Mini"
    assert markdown._prd_title("PRD — Trialist") == "Trialist"
    assert markdown._prd_title("Mini PRD") == "Mini PRD"


def test_counts_read_back_as_floats_print_as_integers() -> None:
    row = SimpleNamespace(status="not-run", reason="no docker", probe_command="docker ps",
                          probe_exit_code=127.0)  # fmt: skip
    assert markdown._gate_detail(row) == "no docker; attempt `docker ps` (exit 127)"
    assert markdown._count(8.0) == 8 and markdown._count(None) is None


def test_candidates_agree_in_number() -> None:
    assert (candidates(0), candidates(1), candidates(2)) == (
        "0 candidates",
        "1 candidate",
        "2 candidates",
    )


def test_a_fix_names_what_is_missing_and_where_it_was_searched() -> None:
    import pandas as pd

    searches = [{"pattern": r"def bye\(", "scope": "app/**", "hits": 0}]
    by_check = pd.DataFrame(
        [{"check_id": "S2-AC1-I1", "rationale": "no bye() in the change",
          "searches": searches}]
    ).set_index("check_id")  # fmt: skip
    text = markdown._missing_where(by_check, "S2-AC1-I1")
    # One backslash, as the probe is written (the report doubled them).
    assert text == ". Missing: no bye() in the change; searched `def bye\\(` in app/** (0 hits)"
    assert markdown._missing_where(by_check, "other") == ""
