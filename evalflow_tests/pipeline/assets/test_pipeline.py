"""The Dagster graph end to end on the mini benchmark, on ephemeral instances."""

from __future__ import annotations

import hashlib
from pathlib import Path

import dagster as dg
import pytest
import yaml

from evalflow.io.registry import register_manifest
from evalflow.pipeline.assets import cross_run_assets, per_run_assets
from evalflow.pipeline.assets.freshness import PER_RUN_KEYS
from evalflow.pipeline.assets.partitions import evaluations
from evalflow.pipeline.definitions import defs
from evalflow.pipeline.io_manager import ParquetIOManagerFactory
from evalflow.pipeline.resources import EvalflowResource
from evalflow.storage.catalog import query, refresh_catalog
from evalflow.storage.warehouse import Warehouse


def resources(root: Path) -> dict:
    return {
        "evalflow": EvalflowResource(warehouse=str(root)),
        "warehouse_io": ParquetIOManagerFactory(warehouse=str(root)),
    }


def register(instance: dg.DagsterInstance, root: Path, manifests: list[Path]) -> list[str]:
    keys = [register_manifest(Warehouse(str(root)), m) for m in manifests]
    instance.add_dynamic_partitions(evaluations.name, keys)
    return keys


def run(instance, root: Path, key: str, selection=None) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        per_run_assets,
        partition_key=key,
        resources=resources(root),
        instance=instance,
        selection=selection,
        raise_on_error=False,
    )


def check_results(result: dg.ExecuteInProcessResult) -> dict[str, bool]:
    return {e.check_name: e.passed for e in result.get_asset_check_evaluations()}


@pytest.fixture
def instance() -> dg.DagsterInstance:
    return dg.DagsterInstance.ephemeral()


def test_definitions_load() -> None:
    for job in ("evaluate_run", "evaluate_run_multiprocess", "rank_runs", "harness"):
        assert defs.resolve_job_def(job)
    assert defs.resolve_job_def("evaluate_run").executor_def.name == "in_process"
    assert {s.name for s in defs.schedules} == {"nightly_reevaluation", "nightly_harness"}
    assert {s.name for s in defs.sensors} == {"run_manifest_sensor", "rank_after_evaluation"}


def test_a_bad_cron_is_a_clear_error(monkeypatch) -> None:
    from evalflow.errors import InputError
    from evalflow.pipeline.automation import nightly_schedule

    monkeypatch.setenv("EVALFLOW_NIGHTLY_CRON", "every night")
    with pytest.raises(InputError, match="is not a cron expression"):
        nightly_schedule(defs.resolve_job_def("evaluate_run"))


@pytest.mark.slow  # the whole asset graph on real runs (tens of CPU-s)
def test_whole_graph_then_duckdb(mini: Path, tmp_path: Path, instance) -> None:
    root = tmp_path / "wh"
    keys = register(instance, root, sorted((mini / "runs").glob("*.yaml")))
    for key in keys:
        result = run(instance, root, key)
        assert result.success
        assert all(check_results(result).values()), check_results(result)
    everything = [*per_run_assets, *cross_run_assets]
    assert dg.materialize(
        everything, selection=cross_run_assets, resources=resources(root), instance=instance
    ).success
    wh = Warehouse(str(root))
    refresh_catalog(wh)
    _, rows = query(wh, "SELECT framework, rank, final, band FROM leaderboard ORDER BY rank")
    # partial: S1 = 0.6·1 + 0.4·0 = 0.6 (executed-only test), S2 = 0 → (3·0.6)/5 = 0.36
    assert rows == [("good", 1, 1.0, "fully meets spec"), ("partial", 2, 0.36, "very poor")]
    _, fps = query(wh, "SELECT DISTINCT run_key, fingerprint FROM ac_score ORDER BY run_key")
    assert len(fps) == 2 and all(len(fp) == 64 for _, fp in fps)
    _, reports = query(wh, "SELECT report_path FROM report")
    assert all(Path(p).is_file() for (p,) in reports)
    _, ratings = query(
        wh,
        "SELECT player, rating > 1500 FROM elo_bootstrap WHERE method = 'bradley_terry' ORDER BY 1",
    )
    assert ratings == [("good", True), ("partial", False)]
    _, pair = query(wh, "SELECT a, b, p_a_greater, within_noise FROM final_pair")
    assert pair == [("mini.good.r1", "mini.partial.r1", 1.0, False)]
    _, board = query(wh, "SELECT within_noise_of_next, final_ci_low, on_frontier FROM leaderboard")
    assert board[0] == (False, 1.0, False)  # the mini manifests give no cost: never on it
    _, files = query(wh, "SELECT png_path, svg_path FROM leaderboard_plots")
    assert len(files) == 4 and all(Path(p).is_file() for row in files for p in row)
    # beside the Markdown: each run's HTML page and the ranking group's
    pages = sorted(p.name for p in (root / "reports" / "mini").glob("*.html"))
    assert len(pages) == 3 and pages[-1].startswith("leaderboard-"), pages
    assert {Path(p).with_suffix(".html").name for (p,) in reports} <= set(pages)
    _, gates = query(wh, "SELECT DISTINCT status, reason FROM gates")
    assert gates == [("unscored", "no gate command configured")]


def _digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*.parquet"))
        if "dagster_home" not in p.parts and "evaluation_history" not in p.parts
    }


@pytest.mark.slow  # the whole asset graph on real runs (tens of CPU-s)
def test_rerun_is_idempotent(mini: Path, tmp_path: Path, instance) -> None:
    root = tmp_path / "wh"
    (key,) = register(instance, root, [mini / "runs" / "good.yaml"])
    assert run(instance, root, key).success
    first = _digests(root)
    reports = sorted((root / "reports").rglob("*.md"))
    assert run(instance, root, key).success
    assert _digests(root) == first
    # The history is the one table that grows: one appended part per evaluation.
    assert len(list((root / "evaluation_history").rglob("*.parquet"))) == 2
    assert sorted((root / "reports").rglob("*.md")) == reports


@pytest.mark.slow  # the whole asset graph on real runs (tens of CPU-s)
def test_two_baselines_in_one_benchmark_fail_the_hash_check(
    mini: Path, tmp_path: Path, instance
) -> None:
    # A run pointed at another (reworded) baseline file mixes hashes; a re-frozen baseline that
    # every manifest still resolves to is only stale (test_runs_cli covers that case).
    baseline = yaml.safe_load((mini / "_ac-baseline.yaml").read_text())
    baseline["acs"][0]["checks"][0]["proposition"] = "reworded in a second baseline file"
    (mini / "_other-baseline.yaml").write_text(yaml.safe_dump(baseline, sort_keys=False))
    manifest = yaml.safe_load((mini / "runs" / "partial.yaml").read_text())
    manifest["baseline"] = "../_other-baseline.yaml"
    (mini / "runs" / "partial.yaml").write_text(yaml.safe_dump(manifest))
    root = tmp_path / "wh"
    good, partial = register(
        instance, root, [mini / "runs" / "good.yaml", mini / "runs" / "partial.yaml"]
    )
    assert run(instance, root, good).success
    result = run(instance, root, partial)
    assert check_results(result)["one_baseline_per_benchmark"] is False


@pytest.mark.slow  # the whole asset graph on real runs (tens of CPU-s)
def test_write_into_the_repo_fails_the_guard(mini: Path, tmp_path: Path, instance) -> None:
    root = tmp_path / "wh"
    (key,) = register(instance, root, [mini / "runs" / "good.yaml"])
    first = run(instance, root, key, selection=["run_manifest"])
    assert first.success
    (root / "repos" / key / "app" / "core.py").write_text("tampered\n")
    result = run(
        instance,
        root,
        key,
        selection=[k for k in PER_RUN_KEYS if k != dg.AssetKey("run_manifest")],
    )
    assert check_results(result)["read_only_guard"] is False
