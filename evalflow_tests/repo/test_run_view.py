"""Runs confined to their folder: one repository, one folder per framework (issue 24 item 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from evalflow.domain.models import Evidence, RunManifest, Verdict
from evalflow.errors import InputError
from evalflow.io.evaluation import open_snapshot, prepare_run, score_run
from evalflow.judges.heuristic import HeuristicJudge
from evalflow.judges.validator import validate_verdict
from evalflow.repo.run_view import in_view
from evalflow_tests.mini_benchmark import BASELINE, GOOD, PARTIAL, PRD


def _bake_off(make_repo, tmp_path: Path, root: str | None) -> Path:
    """speckit/ builds greet and bye, bmad/ only greet; specs/ is every run's PRD folder."""
    head = {f"speckit/{p}": t for p, t in GOOD.items()}
    head |= {f"bmad/{p}": t for p, t in PARTIAL.items()}
    head["specs/prd.md"] = PRD
    repo = make_repo({"README.md": "bake-off\n"}, head)
    bench = tmp_path / "bench"
    (bench / "runs").mkdir(parents=True)
    (bench / "prd.md").write_text(PRD)
    baseline = yaml.safe_load(BASELINE)
    baseline["shared_paths"] = ["specs"]
    for ac in baseline["acs"]:
        for check in ac["checks"]:
            for probe in check["probes"]:
                probe["path_globs"] = ["**"]
    (bench / "_ac-baseline.yaml").write_text(yaml.safe_dump(baseline))
    manifest = {
        "benchmark": "mini",
        "framework": "bmad",
        "run": "r1",
        "repo": str(repo),
        "base": "base",
        "head": "head",
    }
    if root is not None:
        manifest["root"] = root
    path = bench / "runs" / "bmad.yaml"
    path.write_text(yaml.safe_dump(manifest))
    return path


def test_root_is_a_relative_folder_inside_the_repository() -> None:
    base = {"benchmark": "b", "framework": "f", "run": "r", "repo": ".", "base": "a", "head": "b"}
    assert RunManifest(**base, root="bmad/demo/").root == "bmad/demo"
    for bad in ("/abs", "../up", "a/../../b", "."):
        with pytest.raises(ValidationError, match="must be a folder inside the repository"):
            RunManifest(**base, root=bad)


def test_in_view_keeps_the_root_and_the_shared_paths() -> None:
    assert in_view("bmad/app/x.py", "bmad", ("specs",))
    assert in_view("specs/prd.md", "bmad", ("specs",))
    assert not in_view("bmadx/app.py", "bmad", ("specs",))
    assert not in_view("speckit/app/x.py", "bmad", ("specs",))
    assert in_view("anything", None)


def test_a_confined_run_is_not_credited_with_the_other_folder(make_repo, tmp_path: Path) -> None:
    loose = prepare_run(_bake_off(make_repo, tmp_path / "a", None), tmp_path / "wh")
    verdicts = {v.check_id: v for v in score_run(loose, HeuristicJudge(), 1, open_snapshot(loose))}
    # Without root, bmad is credited with speckit's farewell (the bug of a bake-off layout).
    assert verdicts["S2-AC1-I1"].status == "MET"
    assert verdicts["S2-AC1-I1"].evidence[0].path == "speckit/app/core.py"

    prepared = prepare_run(_bake_off(make_repo, tmp_path / "b", "bmad"), tmp_path / "wh")
    assert {f.path.split("/")[0] for f in prepared.diff} == {"bmad", "specs"}
    snapshot = open_snapshot(prepared)
    assert snapshot.root == "bmad" and "specs/prd.md" in snapshot
    assert not any(p.startswith("speckit/") for p in snapshot.files)
    verdicts = {v.check_id: v for v in score_run(prepared, HeuristicJudge(), 1, snapshot)}
    assert verdicts["S2-AC1-I1"].status == "UNMET"
    assert verdicts["S1-AC1-I1"].evidence[0].path == "bmad/app/core.py"
    # Evidence outside the root is rejected by the shared validator, whoever cites it.
    claimed = Verdict(
        check_id="S2-AC1-I1",
        run=1,
        status="MET",
        judge_id="x",
        evidence=(Evidence(path="speckit/app/core.py", start_line=5, end_line=5),),
    )
    checked = validate_verdict(claimed, snapshot, set(prepared.diff_paths))
    assert checked.status != "MET" and not checked.evidence
    assert "confined to bmad/" in checked.rationale


def test_a_root_missing_at_head_is_one_clear_error(make_repo, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="root 'kiro' is no folder of the repository"):
        prepare_run(_bake_off(make_repo, tmp_path, "kiro"), tmp_path / "wh")


def test_register_warns_about_frameworks_sharing_one_checkout_without_root() -> None:
    from evalflow.repo.run_view import unconfined_neighbours

    runs = [
        ("b.speckit.r1", "speckit", "/repo", "a", "h", None),
        ("b.bmad.r1", "bmad", "/repo", "a", "h", None),
        ("b.bmad.r2", "bmad", "/other", "a", "h", None),
        ("b.kiro.r1", "kiro", "/other", "a", "h", "kiro"),
    ]
    assert unconfined_neighbours(runs) == [
        "runs b.bmad.r1, b.speckit.r1 of different frameworks share /repo, base and head "
        "without root: each sees the other's code; give each manifest root: <its folder>"
    ]
    assert unconfined_neighbours(runs[2:]) == []
