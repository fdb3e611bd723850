"""`evalflow demo` end to end: every bundled run's Final is pinned and reproducible.

The demo scores two PRDs (Trialist, Shortlink) × three frameworks × two runs. The whole demo
takes minutes on a shared 2-core machine, so it runs once, in a module-scoped fixture, for
the `slow` tests, as does Trialist's three r1 runs materialised twice (byte-identical
results); the fast test reads the session's one scored demo run (`scored_demo_run`, bmad-r1:
a failed gate, so an Adjusted Final) so `make test` still guards a number the README shows.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from pathlib import Path

import pytest

from evalflow.cli import main
from evalflow.io import settings
from evalflow.storage.catalog import query

# speckit misses one e2e assertion; kiro misses S3-AC2, the configurable channel and every
# webhook e2e test; bmad's webhook e2e test is mock-only, it never asserts trialEndsAt, and
# its failing proration unit test is a confirmed ✗ gate, so its Final is halved.
PINNED_TRIALIST_R1 = {
    "speckit": (0.98, None, "fully meets spec"),
    "kiro": (0.74, None, "partial (major gaps)"),
    "bmad": (0.94, 0.47, "fully meets spec"),
}
# run_key → (Final, Adjusted Final). The r2 runs are r1's trees with one change each:
PINNED = {
    "trialist.speckit.r1": (0.98, None),
    # signature compared with == (S2-AC2-I2 unmet), the unchanged-status e2e assertion added
    "trialist.speckit.r2": (0.97, None),
    "trialist.kiro.r1": (0.74, None),
    # at-most-once reminders (S3-AC2 met); channel still hard-coded, webhook e2e tests missing
    "trialist.kiro.r2": (0.84, None),
    "trialist.bmad.r1": (0.94, 0.47),
    # proration rounded (unit gate passes); the duplicate check ignores status (S1-AC2-I2)
    "trialist.bmad.r2": (0.91, None),
    # Shortlink r1: speckit never asserts Retry-After (S1-AC3-T1); kiro has no expiry bounds
    # (S3-AC2) and a mock-only click test; bmad has no e2e 410 test and a failing unit test
    # (its alphabet keeps the ambiguous characters its own test forbids): a confirmed ✗ gate.
    "shortlink.speckit.r1": (0.98, None),
    # codes from `random` (S1-AC1-I2), the limiter keyed by client address (S1-AC3-I2)
    "shortlink.speckit.r2": (0.95, None),
    "shortlink.kiro.r1": (0.83, None),
    # expiry bounds added; redirects became 302 (S2-AC1-I1) and its own e2e test fails, so
    # that test (the e2e gate names it) no longer proves S2-AC1-T1
    "shortlink.kiro.r2": (0.83, 0.41),
    "shortlink.bmad.r1": (0.95, 0.48),
    # unit gate fixed, e2e 410 test added; the redirect no longer counts clicks (S2-AC3)
    "shortlink.bmad.r2": (0.88, None),
}
RESULT_TABLES = ("scoring_run_1", "majority_vote", "ac_score", "story_score", "final_score")


def run_cli(args: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as done:
        main(args)
    out, err = capsys.readouterr()
    assert done.value.code in (0, None), err
    return out


def trialist_r1(tmp_path: Path, name: str, capsys) -> tuple[list[dict], Path]:
    root = tmp_path / name
    runs = settings.benchmarks_root() / "trialist" / "runs"
    manifests = [str(runs / f"{framework}-r1.yaml") for framework in PINNED_TRIALIST_R1]
    run_cli(["register", *manifests, "--warehouse", str(root)], capsys)
    run_cli(["materialize", "--workers", "1", "--warehouse", str(root)], capsys)
    out = run_cli(
        ["leaderboard", "--benchmark", "trialist", "--json", "--warehouse", str(root)], capsys
    )
    return json.loads(out), root


def digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for table in RESULT_TABLES
        for p in sorted((root / table).rglob("*.parquet"))
    }


def test_the_scored_demo_run_is_pinned(scored_demo_run: Path, capsys) -> None:
    out = run_cli(
        ["leaderboard", "--benchmark", "trialist", "--json", "--warehouse", str(scored_demo_run)],
        capsys,
    )
    (row,) = json.loads(out)
    assert (row["final"], row["adjusted_final"], row["band"]) == PINNED_TRIALIST_R1["bmad"]
    assert Path(row["report_path"]).is_file()


@pytest.mark.slow  # six runs through the pipeline
def test_trialist_r1_finals_are_pinned_and_reproducible(tmp_path: Path, capsys) -> None:
    first, root_a = trialist_r1(tmp_path, "a", capsys)
    got = {r["framework"]: (r["final"], r["adjusted_final"], r["band"]) for r in first}
    assert got == PINNED_TRIALIST_R1
    assert [r["framework"] for r in first] == ["speckit", "kiro", "bmad"]
    assert all(Path(r["report_path"]).is_file() for r in first)
    second, root_b = trialist_r1(tmp_path, "b", capsys)
    assert [(r["framework"], r["final"]) for r in second] == [
        (r["framework"], r["final"]) for r in first
    ]
    assert digests(root_a) == digests(root_b) != {}


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The whole demo, run once for the module (every manifest of the demo suite), off a
    terminal in a 100-column environment: (warehouse, what it printed)."""
    root = tmp_path_factory.mktemp("demo") / "wh"
    out, err = io.StringIO(), io.StringIO()
    with (
        pytest.MonkeyPatch.context() as env,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        pytest.raises(SystemExit) as done,
    ):
        env.setenv("COLUMNS", "100")
        main(["demo", "--workers", "2", "--warehouse", str(root)])
    assert done.value.code in (0, None), err.getvalue()[-2000:]
    return root, out.getvalue()


@pytest.fixture(scope="module")
def demo_root(demo_run: tuple[Path, str]) -> Path:
    return demo_run[0]


def finals(root: Path) -> dict[str, tuple[float | None, float | None]]:
    _, rows = query(
        settings.warehouse(str(root)), "SELECT run_key, final, adjusted_final FROM final_score"
    )
    return {key: (final, adjusted) for key, final, adjusted in rows}


@pytest.mark.slow
def test_demo_scores_every_run_of_both_prds(demo_root: Path) -> None:
    assert finals(demo_root) == PINNED


@pytest.mark.slow
def test_demo_runs_are_complete_and_gates_as_designed(demo_root: Path) -> None:
    _, rows = query(settings.warehouse(str(demo_root)), "SELECT run_key, complete FROM final_score")
    assert all(complete for _, complete in rows)
    _, failed = query(
        settings.warehouse(str(demo_root)),
        "SELECT run_key, gate FROM gates WHERE status <> 'pass' ORDER BY run_key, gate",
    )
    assert [tuple(r) for r in failed] == [
        ("shortlink.bmad.r1", "unit"),
        ("shortlink.kiro.r2", "e2e"),
        ("trialist.bmad.r1", "unit"),
    ]


@pytest.mark.slow
def test_the_demo_output_fits_100_columns(demo_run: tuple[Path, str]) -> None:
    """Issue 27: `make demo` must show a leaderboard that fits 100 columns (it folded every
    row in 120 columns; off a terminal its lines ran 260–800 characters)."""
    root, out = demo_run
    widths = sorted(len(line) for line in out.splitlines())
    assert widths[-1] <= 100, [line for line in out.splitlines() if len(line) > 100]
    assert "Leaderboard — trialist" in out and "Suite leaderboard — demo" in out
    assert len(list((root / "reports").rglob("*.html"))) == 12 + 2 + 1  # runs, groups, suite
