"""Incremental re-evaluation through the CLI's path (`orchestrate.materialize`) and the
daemon's (sensor, schedule): an unchanged run executes nothing, a stale one only what is
stale, `force` everything, and the tables are the same either way."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import pytest

from evalflow.pipeline import orchestrate
from evalflow.pipeline.assets import per_run_assets
from evalflow.pipeline.assets.common import CODE_VERSION
from evalflow.pipeline.assets.freshness import (
    PER_RUN_KEYS,
    rank_inputs_version,
    stale_by_partition,
    stale_keys,
)
from evalflow.pipeline.definitions import defs
from evalflow.pipeline.resources import EvalflowResource
from evalflow.storage.warehouse import Warehouse
from evalflow_tests.mini_benchmark import make_mini

# Every test re-materialises a real run through Dagster on top of a first evaluation: minutes
# of CPU for the module, so it runs in .ci/run's slow stage, not `make test`.
pytestmark = pytest.mark.slow
KEY = "mini.good.r1"
# The tables whose stages must never run again for an unchanged run.
EXPENSIVE = ("scoring_run_1", "scoring_run_2", "scoring_run_3", "gates", "test_inventory")


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The mini benchmark's `good` run, evaluated once through the CLI path."""
    base = tmp_path_factory.mktemp("incremental")
    mini = make_mini(base)
    root = base / "wh"
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("DAGSTER_HOME", raising=False)
        orchestrate.register(str(root), [mini / "runs" / "good.yaml"])
        outcomes = orchestrate.materialize(str(root), [KEY])
    assert all(o.success and not o.skipped for o in outcomes), outcomes
    return root, mini


@pytest.fixture(autouse=True)
def _no_dagster_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


def tables(root: Path) -> dict[str, str]:
    """Digest of every Parquet part but the append-only logs (ledger, evaluation history)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*.parquet"))
        if not {"dagster_home", "ledger_entry", "evaluation_history"} & set(p.parts)
    }


def executed_steps(root: Path) -> list[str]:
    """Every step any Dagster run on the warehouse's instance has started, in order."""
    inst = orchestrate.instance(str(root))
    steps = []
    for run in reversed(inst.get_runs()):
        for record in inst.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_START):
            steps.append(record.step_key)
    return steps


def written(root: Path, runs_before: int) -> list[str]:
    """The tables and checks the Dagster runs after the first `runs_before` materialised and
    evaluated, in order (a stage writes its tables only when it runs)."""
    inst = orchestrate.instance(str(root))
    done = []
    for run in list(reversed(inst.get_runs()))[runs_before:]:
        for record in inst.all_logs(
            run.run_id,
            of_type={
                dg.DagsterEventType.ASSET_MATERIALIZATION,
                dg.DagsterEventType.ASSET_CHECK_EVALUATION,
            },
        ):
            event = record.dagster_event
            if event.is_step_materialization:
                done.append(event.asset_key.path[-1])
            else:
                done.append(event.event_specific_data.asset_check_key.name)
    return done


def runs(root: Path) -> int:
    return len(orchestrate.instance(str(root)).get_runs())


def test_unchanged_rerun_executes_nothing(evaluated) -> None:
    root, _ = evaluated
    before, steps = tables(root), executed_steps(root)
    outcomes = orchestrate.materialize(str(root), [KEY])
    assert [(o.partition, o.success, o.skipped) for o in outcomes] == [
        (KEY, True, True),
        ("rank_runs", True, True),
    ]
    assert executed_steps(root) == steps  # no step at all, let alone scoring or gates
    assert tables(root) == before


def test_only_the_stale_assets_run(evaluated) -> None:
    root, _ = evaluated
    wh = Warehouse(str(root))
    part = root / wh.part_path("report", KEY, "heuristic")
    saved = wh.read("report", KEY)["content_sha256"].iloc[0]
    part.unlink()
    before = runs(root)
    outcome = orchestrate.run_partition(str(root), KEY, orchestrate.JudgeChoice(), "in_process")
    assert outcome.success and not outcome.skipped
    assert written(root, before) == ["report", "read_only_guard"]  # no scoring, gate or side metric
    assert wh.read("report", KEY)["content_sha256"].iloc[0] == saved
    assert not orchestrate.rank(str(root)).skipped  # the ledger changed: ranking refreshed


def test_a_changed_input_makes_every_asset_stale(evaluated) -> None:
    root, mini = evaluated
    inst = orchestrate.instance(str(root))
    resource = EvalflowResource(warehouse=str(root))
    manifest = mini / "runs" / "good.yaml"
    assert stale_keys(inst, resource, KEY, manifest) == []
    prd = mini / "prd.md"
    original = prd.read_text()
    try:
        prd.write_text(original + "\n<!-- reworded -->\n")
        assert stale_keys(inst, resource, KEY, manifest) == PER_RUN_KEYS
    finally:
        prd.write_text(original)
    assert stale_keys(inst, resource, KEY, manifest) == []


def test_one_query_per_table_answers_for_every_partition(evaluated, monkeypatch) -> None:
    """The freshness of the partitions costs one indexed query per per-run table, for all of
    them together, and none per partition."""
    root, mini = evaluated
    inst = orchestrate.instance(str(root))
    storage = inst.event_log_storage
    calls: list[dg.AssetKey] = []
    query = storage.get_latest_tags_by_partition

    def counted(key, *args, **kwargs):
        calls.append(key)
        return query(key, *args, **kwargs)

    monkeypatch.setattr(storage, "get_latest_tags_by_partition", counted)
    monkeypatch.setattr(
        inst, "fetch_materializations", lambda *a, **k: pytest.fail("one query per partition")
    )
    partial = mini / "runs" / "partial.yaml"  # not registered here: all stale, no query
    stale = stale_by_partition(
        inst,
        EvalflowResource(warehouse=str(root)),
        {KEY: mini / "runs" / "good.yaml", "mini.partial.r1": partial},
    )
    assert stale == {KEY: [], "mini.partial.r1": PER_RUN_KEYS}
    assert sorted(calls) == PER_RUN_KEYS


def test_a_renderer_change_makes_only_the_report_stale(evaluated, monkeypatch) -> None:
    """Issue 27: an unchanged re-evaluation kept the old report after the renderer changed.
    The report's data version carries the renderers' digest, so only the report re-runs."""
    from evalflow.pipeline.assets import common

    root, mini = evaluated
    inst, resource = orchestrate.instance(str(root)), EvalflowResource(warehouse=str(root))
    manifests = {KEY: mini / "runs" / "good.yaml"}
    assert stale_by_partition(inst, resource, manifests) == {KEY: []}
    monkeypatch.setattr(common, "RENDERER_VERSION", "another")
    assert stale_by_partition(inst, resource, manifests) == {KEY: [dg.AssetKey("report")]}


def test_the_data_version_alone_decides_because_it_covers_the_code_version() -> None:
    """`stale_by_partition` compares data versions only: sound while every per-run asset's
    code version is evalflow's version, which the fingerprint covers."""
    versions = {v for a in per_run_assets for v in a.code_versions_by_key.values()}
    assert versions == {CODE_VERSION}


def test_an_unchanged_rerun_opens_the_instance_once(evaluated, monkeypatch) -> None:
    root, _ = evaluated
    opened: list[str] = []
    open_instance = orchestrate.instance

    def counted(warehouse_root: str):
        opened.append(warehouse_root)
        return open_instance(warehouse_root)

    monkeypatch.setattr(orchestrate, "instance", counted)
    outcomes = orchestrate.materialize(str(root), [KEY])
    assert all(o.skipped for o in outcomes)
    assert opened == [str(root)]


def test_the_sensor_does_not_request_an_evaluated_run(evaluated, monkeypatch) -> None:
    root, mini = evaluated
    monkeypatch.setenv("EVALFLOW_BENCHMARKS", str(mini.parent))
    monkeypatch.setenv("EVALFLOW_WAREHOUSE", str(root))
    sensor = defs.resolve_sensor_def("run_manifest_sensor")
    result = sensor(dg.build_sensor_context(instance=orchestrate.instance(str(root))))
    # `partial` was never evaluated here; `good` was, with the same fingerprint.
    assert [r.partition_key for r in result.run_requests] == ["mini.partial.r1"]
    assert set(json.loads(result.cursor)) == {str(p) for p in (mini / "runs").glob("*.yaml")}


def test_the_schedule_requests_only_stale_runs(evaluated, monkeypatch) -> None:
    root, _ = evaluated
    monkeypatch.setenv("EVALFLOW_WAREHOUSE", str(root))
    inst = orchestrate.instance(str(root))
    context = dg.build_schedule_context(
        instance=inst,
        scheduled_execution_time=datetime(2026, 12, 1, 2, 0, tzinfo=UTC),
        repository_def=defs.get_repository_def(),
    )
    schedule = defs.resolve_schedule_def("nightly_reevaluation")
    data = schedule.evaluate_tick(context)
    assert not data.run_requests
    assert KEY in data.skip_message and "unchanged" in data.skip_message


@pytest.mark.slow
def test_force_reruns_everything_with_identical_results(evaluated) -> None:
    root, _ = evaluated
    before, count = tables(root), runs(root)
    outcomes = orchestrate.materialize(str(root), [KEY], force=True)
    assert all(o.success and not o.skipped for o in outcomes)
    assert set(EXPENSIVE) <= set(written(root, count))
    assert tables(root) == before


def latest(root: Path, asset: str, partition: str | None = None) -> dg.AssetMaterialization:
    records = (
        orchestrate.instance(str(root))
        .fetch_materializations(
            dg.AssetRecordsFilter(
                asset_key=dg.AssetKey(asset), asset_partitions=[partition] if partition else None
            ),
            limit=1,
        )
        .records
    )
    return records[0].asset_materialization


def test_materialisations_carry_dagster_metadata(evaluated) -> None:
    root, _ = evaluated
    final = latest(root, "final_score", KEY)
    fingerprint = Warehouse(str(root)).read("run_manifest", KEY)["fingerprint"].iloc[0]
    assert final.tags["dagster/data_version"] == fingerprint
    assert final.metadata["dagster/row_count"].value == 1
    assert "adjusted_final" in {
        c.name for c in final.metadata["dagster/column_schema"].schema.columns
    }
    assert final.metadata["rollup"].value.startswith("**Final** 1.000")
    report = latest(root, "report", KEY).metadata
    assert Path(report["report"].value).is_file() and Path(report["html"].value).is_file()
    assert report["preview"].value.startswith("# Evaluation report — good on mini")
    board = latest(root, "leaderboard").metadata
    assert board["dagster/row_count"].value == 1
    assert "| 1 | good | mini.good.r1 | heuristic | 1.00 |" in board["preview"].value
    assert board["ranked_by"].value["mini"]["judge"] == "heuristic (most runs: 1 of 1 runs)"
    plots = latest(root, "leaderboard_plots").metadata
    images = [v.value for k, v in plots.items() if k.endswith(("story_heatmap", "ac_heatmap"))]
    assert len(images) == 2 and all(i.startswith("![") and "base64," in i for i in images)
    (page,) = [v.value for k, v in plots.items() if k.endswith("/html")]
    assert Path(page).is_file() and Path(page).parent == Path(report["report"].value).parent


def test_rank_inputs_change_with_the_ledger_and_the_suites(evaluated, monkeypatch) -> None:
    root, mini = evaluated
    monkeypatch.setenv("EVALFLOW_BENCHMARKS", str(mini.parent))
    inst, wh = orchestrate.instance(str(root)), Warehouse(str(root))
    version = rank_inputs_version(inst, wh)
    assert rank_inputs_version(inst, wh) == version
    suites = mini.parent / "_suites"
    suites.mkdir(exist_ok=True)
    (suites / "extra.yaml").write_text("name: extra\n")
    try:
        assert rank_inputs_version(inst, wh) != version
    finally:
        shutil.rmtree(suites)
    assert rank_inputs_version(inst, wh) == version


# Last in the module: it adds a second judge's result to the shared evaluation.
def test_a_second_judge_keeps_the_first_ones_result_side_by_side(evaluated, tmp_path) -> None:
    """`score --judge labels` after the heuristic keeps the heuristic's parts; scoring with the
    heuristic again does not reuse the labels' results and rewrites only its own parts; an
    unchanged rerun with the same judge then runs nothing."""
    from evalflow.storage.catalog import query

    root, _ = evaluated
    wh = Warehouse(str(root))
    heuristic = wh.read("final_score", KEY, "heuristic")
    labels = tmp_path / "labels.yaml"
    labels.write_text("verdicts: []\n", encoding="utf-8")  # every check UNSCORED
    choice = orchestrate.JudgeChoice("labels", labels=labels)
    outcomes = orchestrate.materialize(str(root), [KEY], judge=choice)
    assert all(o.success and not o.skipped for o in outcomes), outcomes
    assert wh.judges("final_score", KEY) == ["heuristic", "labels"]
    assert wh.read("final_score", KEY, "heuristic").equals(heuristic)
    assert not bool(wh.read("final_score", KEY, "labels")["complete"].iloc[0])
    _, rows = query(wh, "SELECT judge_name, complete FROM final_score ORDER BY judge_name")
    assert rows == [("heuristic", True), ("labels", False)]
    _, board = query(wh, "SELECT judge_name, ranked, ranking_choice FROM leaderboard")
    assert board == [("heuristic", True, "heuristic (most runs: 1 of 1 runs)")]

    labels_parts = {
        p: p.read_bytes() for p in root.glob("*/run_key=*/labels.parquet") if p.parent.exists()
    }
    outcomes = orchestrate.materialize(str(root), [KEY])  # the heuristic again
    assert not outcomes[0].skipped  # not B's (labels') results reused for A
    assert {p: p.read_bytes() for p in labels_parts} == labels_parts
    assert wh.read("final_score", KEY, "heuristic").equals(heuristic)
    again = orchestrate.materialize(str(root), [KEY])
    assert again[0].skipped
