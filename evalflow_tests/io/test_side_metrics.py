"""Side metrics on the three demo framework runs (real repos built from the demo sources)
and the benchmark-file loaders."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pandas as pd
import pytest

from evalflow.domain.side_metrics.compute import SideMetrics
from evalflow.domain.side_metrics.markdown import side_metrics_markdown
from evalflow.domain.vote import majority_vote
from evalflow.errors import InputError
from evalflow.io.inputs import Benchmark, load_benchmark
from evalflow.io.side_metrics import (
    elicitation_files_digest,
    load_labels,
    load_master,
    load_rubric,
    side_metrics_for_run,
    spec_files_at_head,
)
from evalflow.judges.base import JudgeRequest
from evalflow.judges.heuristic import HeuristicJudge
from evalflow.repo.builder import build_repo
from evalflow.repo.diff_surface import diff_surface, unified_diff
from evalflow.repo.git import resolve_commit
from evalflow.repo.snapshot import RepoSnapshot, SourceFile, load_snapshot
from evalflow_tests.conftest import DEMO

SPEC_DIRS = {
    "speckit": "specs/001-trialist",
    "kiro": ".kiro/specs/trialist",
    "bmad": "docs/bmad",
}


@pytest.fixture(scope="module")
def benchmark() -> Benchmark:
    return load_benchmark(DEMO / "_ac-baseline.yaml")


@pytest.fixture(scope="module")
def demo_inputs(tmp_path_factory: pytest.TempPathFactory, benchmark: Benchmark) -> dict:
    """Per framework: the built repo's snapshot, unified diff and the heuristic judge's
    k = 3 verdicts with their majority vote."""
    root = tmp_path_factory.mktemp("side-metrics-demo")
    out: dict[str, dict] = {}
    for framework in SPEC_DIRS:
        repo = build_repo(DEMO / "sources" / framework, root / framework)
        base, head = resolve_commit(repo, "base"), resolve_commit(repo, "head")
        snapshot = load_snapshot(repo, head)
        diff_paths = tuple(f.path for f in diff_surface(repo, base, head) if f.status != "deleted")
        judge = HeuristicJudge()
        rows = [
            {
                "check_id": v.check_id,
                "run": run,
                "status": v.status,
                "evidence": [e.model_dump() for e in v.evidence],
                "run_key": f"trialist.{framework}.r1",
            }
            for run in (1, 2, 3)
            for v in judge.score(
                JudgeRequest(
                    run_key=f"trialist.{framework}.r1",
                    run=run,
                    checks=tuple(benchmark.baseline.checks()),
                    snapshot=snapshot,
                    diff_paths=diff_paths,
                    test_levels=benchmark.baseline.test_levels,
                )
            )
        ]
        verdicts = pd.DataFrame(rows)
        out[framework] = {
            "snapshot": snapshot,
            "unified_diff": unified_diff(repo, base, head),
            "verdicts": verdicts,
            "votes": majority_vote(verdicts, 3),
        }
    return out


def _metrics(
    framework: str, demo_inputs: dict, benchmark: Benchmark, *, with_labels: bool = True
) -> SideMetrics:
    data = demo_inputs[framework]
    return side_metrics_for_run(
        prd=benchmark.prd,
        baseline=benchmark.baseline,
        snapshot=data["snapshot"],
        unified_diff=data["unified_diff"],
        spec_dir=SPEC_DIRS[framework],
        benchmark_dir=DEMO,
        framework=framework,
        votes=data["votes"],
        verdicts=data["verdicts"],
        with_labels=with_labels,
    )


def _fraction(value: float | None) -> Fraction | None:
    return None if value is None else Fraction(value).limit_denominator(100)


# framework: (necessary, secondary, nice), healthy failures, R, E (labels), pooled,
# S candidates. D counts more Necessary/Secondary tests than before issue 14 because the
# checks' test-assert probes now tie every asserting test to its check, not only the test a
# judge cited; R counts fewer extras accordingly. Since issue 27 a test ties to a check only
# when it matches all of the check's probes at the check's level (a unit test no longer
# proves an e2e check), a P0 main path resting on UNSCORED checks is undetermined (bmad's
# S2-AC1), and R is NULL while T-checks are UNSCORED (all three runs). The demo's labels
# files adjudicate E but hold no `scope` section, so S is NULL (unadjudicated) in all three.
PINNED = {
    "speckit": ((5, 7, 17), (), None, ("1", "1", "11/16"), "18/19", 0),
    "kiro": ((3, 3, 8), ("S2-AC1", "S2-AC3"), None, ("2/5", "4/5", "1/5"), "7/19", 0),
    "bmad": ((4, 6, 10), (), None, ("2/5", "5/8", "0"), "6/19", 6),
}
UNDETERMINED = {"speckit": (), "kiro": (), "bmad": ("S2-AC1",)}
# candidates the lexicon proposes per run without labels (categories + additions)
HEURISTIC_CANDIDATES = {"speckit": 26, "kiro": 15, "bmad": 20}


@pytest.mark.parametrize("framework", list(PINNED))
def test_demo_runs_pinned(framework: str, demo_inputs: dict, benchmark: Benchmark) -> None:
    tiers, failing, r_total, e_figures, pooled, scope_candidates = PINNED[framework]
    m = _metrics(framework, demo_inputs, benchmark)
    d = m.distribution
    assert (d.counts["necessary"], d.counts["secondary"], d.counts["nice_to_have"]) == tiers
    assert d.total == sum(tiers) and len(d.pre_existing) == 5
    assert d.failing_p0_acs == failing and d.undetermined_p0_acs == UNDETERMINED[framework]
    assert d.healthy is (False if failing else None if UNDETERMINED[framework] else True)
    assert m.robustness.total == r_total
    e = m.elicitation
    assert (
        _fraction(e.e_recall),
        _fraction(e.e_precision),
        _fraction(e.e_justified),
    ) == tuple(Fraction(x) for x in e_figures)
    assert _fraction(e.pooled_recall) == Fraction(pooled)
    assert e.judges == ("labels",) and e.reason is None
    assert m.scope.verdict is None
    assert m.scope.reason == f"unadjudicated — {scope_candidates} candidates"
    frames = m.frames()
    assert frames["distribution"]["count"].sum() == d.total
    assert not frames["elicitation_summary"].iloc[0]["heuristic"]
    assert pd.isna(frames["scope_summary"].iloc[0]["verdict"])


@pytest.mark.parametrize("framework", list(HEURISTIC_CANDIDATES))
def test_demo_heuristic_view_is_candidates_only(
    framework: str, demo_inputs: dict, benchmark: Benchmark
) -> None:
    m = _metrics(framework, demo_inputs, benchmark, with_labels=False)
    e = m.elicitation
    assert (e.e_recall, e.e_precision, e.e_justified, e.pooled_recall) == (None,) * 4
    assert e.reason == f"unadjudicated — {HEURISTIC_CANDIDATES[framework]} candidates"
    assert e.judges == ("heuristic-lexicon",)
    assert set(e.addition_frame()["verdict"]) == {"candidate"}
    assert m.scope.verdict is None
    summary = e.summary_frame().iloc[0]
    assert pd.isna(summary["e_recall"]) and summary["reason"] == e.reason


def test_bmad_proration_module_is_an_out_of_scope_candidate(
    demo_inputs: dict, benchmark: Benchmark
) -> None:
    m = _metrics("bmad", demo_inputs, benchmark)
    oos = {f.ref: f for f in m.scope.findings if f.kind == "out_of_scope"}
    assert oos["trialist/proration.py:7"].status == "candidate"
    assert "Plan upgrades, downgrades and proration." in oos["trialist/proration.py:7"].description
    assert not [f for f in m.scope.findings if f.kind in ("rogue_build", "plan_drift")]
    invalid = {x.item.item_id for x in m.elicitation.ledger if x.verdict == "invalid"}
    assert invalid == {"FR10", "S3.2.1", "S3.2.3"}
    # an unadjudicated candidate never zeroes a test in R
    r = {row.name: row.weight_class for row in m.robustness.rows}
    assert r["test_downgrade_is_not_supported"] != "none"


def test_kiro_scope_is_partial_for_task_5_2(demo_inputs: dict, benchmark: Benchmark) -> None:
    m = _metrics("kiro", demo_inputs, benchmark)
    drift = [f for f in m.scope.findings if f.kind == "plan_drift"]
    assert [(f.ref, f.status, f.description.split(":")[0]) for f in drift] == [
        (".kiro/specs/trialist/tasks.md:32", "confirmed", "task T5.2 is not done")
    ]
    contradiction = next(x for x in m.elicitation.ledger if x.item.item_id == "spec.md:90")
    assert contradiction.verdict == "invalid"


def test_speckit_has_no_scope_candidate_and_every_valid_addition_is_built(
    demo_inputs: dict, benchmark: Benchmark
) -> None:
    m = _metrics("speckit", demo_inputs, benchmark)
    assert {f.kind for f in m.scope.findings} == {"deferred"}
    assert {x.implementation for x in m.elicitation.valid_additions()} == {"implemented"}
    h = m.harness
    # the baseline freezes no T-check for the 16 valid additions: T_sanctioned is NULL
    # The frozen T counts the weighted ACs only: the P2 AC's T-check is left out (issue 27).
    assert (h.met_t_checks, h.t_checks, h.unchecked_additions) == (12, 13, 16)
    assert h.t_sanctioned is None
    text = side_metrics_markdown(m)
    assert "S = **unadjudicated — 0 candidates**" in text
    assert "E_recall 1.00 (10/10) · E_precision 1.00 (16/16) · E_justified 0.69 (11/16)" in text


def test_spec_files_at_head(demo_inputs: dict) -> None:
    snapshot = demo_inputs["kiro"]["snapshot"]
    assert sorted(spec_files_at_head(snapshot, ".kiro/specs/trialist/")) == [
        ".kiro/specs/trialist/spec.md",
        ".kiro/specs/trialist/tasks.md",
    ]
    assert spec_files_at_head(snapshot, None) == {}
    assert spec_files_at_head(snapshot, "nowhere") == {}


def test_spec_files_at_head_reads_the_bmad_layout() -> None:
    paths = [
        "docs/prd.md",
        "docs/architecture.md",
        "docs/stories/1.1.create.md",
        "docs/stories/notes/old.md",
        "docs/stories/1.2.txt",
        "docs/README.md",
        "src/prd.md",
    ]
    snapshot = RepoSnapshot("c0ffee", {p: SourceFile(p, "# x\n") for p in paths})
    assert sorted(spec_files_at_head(snapshot, "docs")) == [
        "docs/architecture.md",
        "docs/prd.md",
        "docs/stories/1.1.create.md",
    ]


def test_loaders(tmp_path: Path) -> None:
    assert load_rubric(DEMO).out_of_scope_keywords is not None
    master = load_master(DEMO)
    assert master is not None and len(master.items) == 19
    assert load_labels(DEMO, "speckit") is not None
    assert load_labels(DEMO, "nobody") is None
    assert load_master(tmp_path) is None and load_rubric(tmp_path).not_applicable == {}
    folder = tmp_path / "elicitation"
    folder.mkdir()
    (folder / "kiro.yaml").write_text("framework: bmad\n")
    with pytest.raises(InputError, match="not 'kiro'"):
        load_labels(tmp_path, "kiro")
    (folder / "master.yaml").write_text(
        "benchmark: x\nitems:\n"
        "  - {id: M1, category: c, description: d, keywords: [a]}\n"
        "  - {id: M1, category: c, description: d, keywords: [b]}\n"
    )
    with pytest.raises(InputError, match="repeats an id"):
        load_master(tmp_path)
    before = elicitation_files_digest(tmp_path, "kiro")
    (folder / "kiro.yaml").write_text("framework: kiro\n")
    assert elicitation_files_digest(tmp_path, "kiro") != before
    assert elicitation_files_digest(DEMO, "kiro") == elicitation_files_digest(DEMO, "kiro")
    (folder / "rubric.yaml").write_text("categories: [{id: x, name: x, pattern: '(']}\n")
    with pytest.raises(InputError, match="rubric"):
        load_rubric(tmp_path)


def test_a_confined_run_inventories_and_counts_only_its_own_folder() -> None:
    # Issue 24: two frameworks' folders in one repository. The diff is the whole repository's;
    # the run's snapshot is confined to its root:, and everything the side metrics read —
    # test inventory, production changes — comes from that snapshot.
    from evalflow.domain.models import TestLevelPolicy
    from evalflow.io.side_metrics import (
        conventions_for,
        feature_inventory,
        production_changes,
        production_files_at_head,
    )
    from evalflow.repo.diff_lines import parse_unified_diff
    from evalflow.repo.run_view import confine_snapshot

    files = {
        f"{run}/{path}": text
        for run in ("speckit", "bmad")
        for path, text in (
            ("app/core.py", "def add(a, b):\n    return a + b\n"),
            ("tests/test_core.py", "def test_add():\n    assert add(1, 2) == 3\n"),
        )
    }
    diff = parse_unified_diff(
        "".join(
            f"diff --git a/{p} b/{p}\nnew file mode 100644\n--- /dev/null\n+++ b/{p}\n"
            f"@@ -0,0 +1,2 @@\n" + "".join(f"+{line}\n" for line in t.splitlines())
            for p, t in files.items()
        )
    )
    whole = RepoSnapshot("c0ffee", {p: SourceFile(p, t) for p, t in files.items()})
    snapshot = confine_snapshot(whole, "speckit")
    conventions = conventions_for(TestLevelPolicy())
    cases = feature_inventory(snapshot, diff, conventions)
    assert [c.path for c in cases] == ["speckit/tests/test_core.py"]
    production = production_files_at_head(snapshot, conventions, None)
    assert [c.path for c in production_changes(diff, production)] == ["speckit/app/core.py"]


def test_a_parsed_diff_is_taken_as_given(demo_inputs: dict, benchmark: Benchmark) -> None:
    from evalflow.repo.diff_lines import parse_unified_diff

    data = demo_inputs["bmad"]
    common = {
        "prd": benchmark.prd,
        "baseline": benchmark.baseline,
        "snapshot": data["snapshot"],
        "spec_dir": SPEC_DIRS["bmad"],
        "benchmark_dir": DEMO,
        "framework": "bmad",
        "votes": data["votes"],
        "verdicts": data["verdicts"],
    }
    parsed = parse_unified_diff(data["unified_diff"])
    given = side_metrics_for_run(**common, unified_diff="", diff_lines=parsed)
    expected = side_metrics_markdown(_metrics("bmad", demo_inputs, benchmark))
    assert side_metrics_markdown(given) == expected
    # The control: the text alone, empty here, gives other metrics.
    assert side_metrics_markdown(side_metrics_for_run(**common, unified_diff="")) != expected
