"""The manifest sensor, the nightly schedule and the re-rank sensor, evaluated as a preview
would: they must return what to do and change nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import pytest

from evalflow.io.registry import REGISTRY_TABLE, register_manifest
from evalflow.pipeline.assets import per_run_assets
from evalflow.pipeline.assets.common import MANIFEST_TAG
from evalflow.pipeline.assets.freshness import RANK_INPUTS_TAG
from evalflow.pipeline.assets.partitions import evaluations
from evalflow.pipeline.definitions import defs
from evalflow.pipeline.io_manager import ParquetIOManagerFactory
from evalflow.pipeline.orchestrate import RANKED_INLINE_TAG
from evalflow.pipeline.resources import EvalflowResource
from evalflow.storage.warehouse import Warehouse

KEYS = ["mini.good.r1", "mini.partial.r1"]


@pytest.fixture
def instance(tmp_path: Path) -> dg.DagsterInstance:
    (tmp_path / "home").mkdir()
    return dg.DagsterInstance.local_temp(tempdir=str(tmp_path / "home"))


@pytest.fixture
def watched(mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sensor watches the mini benchmark and writes (if it ever did) to a temp warehouse."""
    monkeypatch.setenv("EVALFLOW_BENCHMARKS", str(mini.parent))
    monkeypatch.setenv("EVALFLOW_WAREHOUSE", str(tmp_path / "wh"))
    return tmp_path / "wh"


def tick(instance: dg.DagsterInstance, cursor: str | None = None) -> dg.SensorResult:
    sensor = defs.resolve_sensor_def("run_manifest_sensor")
    return sensor(dg.build_sensor_context(instance=instance, cursor=cursor))


def test_sensor_preview_changes_nothing(mini: Path, watched: Path, instance) -> None:
    (mini / "runs" / "broken.yaml").write_text("benchmark: [unclosed\n")
    result = tick(instance)
    assert sorted(r.partition_key for r in result.run_requests) == KEYS
    assert all(r.tags[MANIFEST_TAG].endswith(".yaml") for r in result.run_requests)
    assert all(r.asset_selection is None for r in result.run_requests)  # never evaluated
    (add,) = result.dynamic_partitions_requests
    assert sorted(add.partition_keys) == KEYS
    # Only returned, never done: no registry row, no partition, no repository built.
    assert not Warehouse(str(watched)).parts(REGISTRY_TABLE)
    assert instance.get_dynamic_partitions(evaluations.name) == []
    assert not watched.exists()


def test_the_cursor_prevents_requesting_a_manifest_again(mini: Path, watched, instance) -> None:
    first = tick(instance)
    seen = json.loads(first.cursor)
    assert sorted(Path(p).name for p in seen) == ["good.yaml", "partial.yaml"]
    again = tick(instance, first.cursor)
    assert not again.run_requests and not again.dynamic_partitions_requests
    assert again.cursor == first.cursor
    good = mini / "runs" / "good.yaml"
    good.write_text(good.read_text() + "# edited\n")
    changed = tick(instance, first.cursor)
    assert [r.partition_key for r in changed.run_requests] == ["mini.good.r1"]
    assert changed.run_requests[0].run_key != first.run_requests[0].run_key


def test_a_requested_run_registers_its_manifest(mini: Path, watched: Path, instance) -> None:
    (request, _) = sorted(tick(instance).run_requests, key=lambda r: r.partition_key)
    instance.add_dynamic_partitions(evaluations.name, [request.partition_key])
    result = dg.materialize(
        per_run_assets,
        selection=["run_manifest"],
        partition_key=request.partition_key,
        tags=request.tags,
        instance=instance,
        resources={
            "evalflow": EvalflowResource(warehouse=str(watched)),
            "warehouse_io": ParquetIOManagerFactory(warehouse=str(watched)),
        },
    )
    assert result.success
    assert Warehouse(str(watched)).has(REGISTRY_TABLE, "mini.good.r1")


def test_schedule_requests_every_run_never_evaluated(mini: Path, watched: Path, instance) -> None:
    wh = Warehouse(str(watched))
    keys = [register_manifest(wh, mini / "runs" / f"{n}.yaml") for n in ("good", "partial")]
    instance.add_dynamic_partitions(evaluations.name, [*keys, "gone.f.r1"])
    schedule = defs.resolve_schedule_def("nightly_reevaluation")
    assert schedule.cron_schedule == "0 2 * * *"
    context = dg.build_schedule_context(
        instance=instance,
        scheduled_execution_time=datetime(2026, 11, 30, 2, 0, tzinfo=UTC),
        repository_def=defs.get_repository_def(),
    )
    requests = schedule.evaluate_tick(context).run_requests
    # `gone.f.r1` has a partition but no registry row here: not requested.
    assert sorted(r.partition_key for r in requests) == KEYS
    assert all(r.tags["evalflow/skipped_unchanged"] == "0" for r in requests)


def test_rank_sensor_runs_by_default_and_leaves_cli_runs_alone(watched, instance) -> None:
    sensor = defs.resolve_sensor_def("rank_after_evaluation")
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    job = defs.resolve_job_def("evaluate_run")

    def evaluate(run_id: str, tags: dict) -> dg.RunRequest | dg.SkipReason:
        run = instance.create_run_for_job(job, run_id=run_id, tags=tags)
        return sensor(
            dg.build_run_status_sensor_context(
                sensor_name=sensor.name,
                dagster_instance=instance,
                dagster_run=run,
                dagster_event=dg.DagsterEvent(
                    event_type_value="PIPELINE_SUCCESS", job_name="evaluate_run"
                ),
            )
        )

    daemon = evaluate("e0a1b2c3-0000-4000-8000-000000000001", {})
    assert daemon.run_key == "rank-after-e0a1b2c3-0000-4000-8000-000000000001"
    assert len(daemon.tags[RANK_INPUTS_TAG]) == 64
    cli = evaluate("e0a1b2c3-0000-4000-8000-000000000002", {RANKED_INLINE_TAG: "true"})
    assert isinstance(cli, dg.SkipReason)
