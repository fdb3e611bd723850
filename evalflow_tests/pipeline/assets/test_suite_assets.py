"""Suite assets: every suite file rated into contract-valid tables; a refused suite is listed,
not fatal; the plots asset is registered with the cross-run assets."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalflow.pipeline.assets import cross_run_assets
from evalflow.pipeline.assets.suite import SUITE_TABLES, rate_all_suites
from evalflow.storage.tables import validate_frame
from evalflow.storage.warehouse import Warehouse
from evalflow_tests.suite_tables import suite_runs, write_suite_file, write_suite_warehouse


def test_every_suite_is_rated_and_a_refused_one_is_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALFLOW_BENCHMARKS", str(tmp_path / "benchmarks"))
    folder = tmp_path / "benchmarks" / "_suites"
    (folder).mkdir(parents=True)
    (folder / "only_p1.yaml").write_text("name: only_p1\nbenchmarks: [p1]\n", encoding="utf-8")
    write_suite_file(folder, name="both")
    write_suite_warehouse(tmp_path / "wh", suite_runs({"p2.a.r1": "anthropic"}))
    wh = Warehouse(str(tmp_path / "wh"))
    tables = ("leaderboard", "ac_score", "majority_vote", "run_manifest")
    frames = rate_all_suites(*(wh.read(t) for t in tables))
    for name in SUITE_TABLES:
        validate_frame(name, frames[name])
    rating = frames["suite_rating"]
    assert set(rating["suite"]) == {"only_p1"}
    assert list(rating["framework"]) == ["a", "b"]  # c's only p1 run is incomplete
    assert (rating["n_samples"] == 1000).all() and (rating["judge_id"] == "heuristic").all()
    left = frames["suite_left_out"]
    refused = left[left["suite"] == "both"]
    assert len(refused) == len(suite_runs())
    assert (
        refused["reason"]
        .str.startswith("suite refused: runs were scored by different judges")
        .all()
    )
    assert left.loc[left["suite"] == "only_p1", "run_key"].tolist() == ["p1.c.r1"]


def test_suite_assets_are_cross_run_assets() -> None:
    keys = {key.to_user_string() for spec in cross_run_assets for key in spec.keys}
    assert {
        "suite_rating",
        "suite_pair",
        "suite_prd_score",
        "suite_left_out",
        "suite_plots",
    } <= keys
