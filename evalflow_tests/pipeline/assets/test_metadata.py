"""Dagster's metadata conventions on evalflow's assets and checks.

Every test loops over the assets of `defs` itself, so an asset added later is checked
without being named here; one test materialises the whole graph on the mini benchmark to
read the metadata each asset records when it runs.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from evalflow.io.registry import register_manifest
from evalflow.pipeline.assets import cross_run_assets, harness_assets, per_run_assets
from evalflow.pipeline.assets.checks import CHECKS
from evalflow.pipeline.assets.common import column_schema, run_output
from evalflow.pipeline.assets.partitions import evaluations
from evalflow.pipeline.assets.rollup import rollup_markdown
from evalflow.pipeline.assets.side_metrics import SIDE_METRICS_OUTPUTS
from evalflow.pipeline.definitions import defs
from evalflow.pipeline.io_manager import ParquetIOManagerFactory
from evalflow.pipeline.resources import EvalflowResource
from evalflow.storage.tables import TABLES
from evalflow.storage.warehouse import Warehouse

GRAPH = defs.resolve_asset_graph()
ASSET_KEYS = sorted(GRAPH.get_all_asset_keys())


def test_every_asset_has_a_description_and_kinds() -> None:
    assert len(ASSET_KEYS) > 30  # the loop below really walks the repository's assets
    for key in ASSET_KEYS:
        node = GRAPH.get(key)
        assert node.description, key
        assert {"python", "parquet"} <= set(node.kinds), key


@pytest.mark.slow  # 20-40 s: one mini run, the ranking and the harness, all materialised
def test_every_contract_table_records_its_row_count_and_column_schema(
    mini: Path, tmp_path: Path
) -> None:
    root = tmp_path / "wh"
    resources = {
        "evalflow": EvalflowResource(warehouse=str(root)),
        "warehouse_io": ParquetIOManagerFactory(warehouse=str(root)),
    }
    instance = dg.DagsterInstance.ephemeral()
    key = register_manifest(Warehouse(str(root)), mini / "runs" / "good.yaml")
    instance.add_dynamic_partitions(evaluations.name, [key])
    everything = [*per_run_assets, *cross_run_assets, *harness_assets]
    for selection, partition in ((per_run_assets, key), (cross_run_assets, None),
                                 (harness_assets, None)):  # fmt: skip
        result = dg.materialize(
            everything,
            selection=selection,
            partition_key=partition,
            resources=resources,
            instance=instance,
        )
        assert result.success
    tables = [k for k in ASSET_KEYS if k.path[-1] in TABLES]
    assert tables == ASSET_KEYS  # every asset is a warehouse table with a contract
    warehouse = Warehouse(str(root))
    for asset_key in tables:
        event = instance.get_latest_materialization_event(asset_key)
        assert event is not None, f"{asset_key} was not materialised by any job"
        metadata = event.asset_materialization.metadata
        table = asset_key.path[-1]
        assert "dagster/row_count" in metadata, asset_key
        assert metadata["dagster/row_count"].value == len(warehouse.read(table)), asset_key
        assert metadata["dagster/column_schema"].value == column_schema(table), asset_key


def test_per_run_tables_are_described_one_by_one_by_their_contracts() -> None:
    (evaluation,) = per_run_assets
    descriptions = {k.path[-1]: s.description for k, s in evaluation.specs_by_key.items()}
    assert descriptions == {table: TABLES[table].description for table in descriptions}
    side = {descriptions[table] for table in SIDE_METRICS_OUTPUTS}
    assert len(side) == len(SIDE_METRICS_OUTPUTS) == 12


def test_every_check_has_a_description() -> None:
    graph = defs.resolve_asset_graph()
    names = set()
    for key in graph.asset_check_keys:
        assert graph.get_check_spec(key).description, key
        names.add(key.name)
    assert {c.name for c in CHECKS} <= names


def test_per_run_assets_carry_code_versions() -> None:
    for assets_def in per_run_assets:
        assert all(assets_def.code_versions_by_key.values()), assets_def.keys


def test_the_ledger_is_downstream_of_what_it_records() -> None:
    parents = defs.resolve_asset_graph().get(dg.AssetKey("ledger_entry")).parent_keys
    assert {k.path[-1] for k in parents} == {
        "report",
        "plugin_composite",
        "retrieval_eval",
        "judge_calibration",
    }


def test_column_schema_follows_the_contract() -> None:
    schema = column_schema("final_score")
    by_name = {c.name: c for c in schema.columns}
    assert list(by_name) == TABLES["final_score"].columns
    assert by_name["final"].type == "DOUBLE" and by_name["final"].constraints.nullable
    assert by_name["complete"].type == "BOOLEAN" and not by_name["complete"].constraints.nullable
    assert {c.name: c.type for c in column_schema("test_inventory").columns}["row_lines"] == (
        "BIGINT[]"
    )
    verdicts = {c.name: c.type for c in column_schema("scoring_run_1").columns}
    assert verdicts["flags"] == "VARCHAR[]"
    assert verdicts["searches"] == 'STRUCT(pattern VARCHAR, "scope" VARCHAR, hits BIGINT)[]'
    assert {c.name: c.type for c in column_schema("gates").columns}["ran_at"] == (
        "TIMESTAMP WITH TIME ZONE"
    )


def test_a_run_output_is_versioned_by_the_fingerprint_even_when_empty() -> None:
    manifest = pd.DataFrame([{"run_key": "b.f.r", "fingerprint": "f" * 64}])
    out = run_output("diff_surface", pd.DataFrame(columns=["run_key"]), manifest)
    assert out.data_version == dg.DataVersion("f" * 64)
    assert out.metadata["dagster/row_count"].value == 0
    assert isinstance(out.metadata["dagster/column_schema"].value, dg.TableSchema)


def test_rollup_preview_shows_null_as_null() -> None:
    final = pd.Series(
        {"final": None, "band": None, "final_lower": 0.2, "final_upper": 0.9,
         "adjusted_final": None, "n_unscored": 2}
    )  # fmt: skip
    story = pd.DataFrame([{"story_id": "S1", "priority": "P0", "weight": 3, "story_score": None}])
    text = rollup_markdown(final, story)
    assert "**Final** NULL (NULL)" in text and "| S1 | P0 | 3 | NULL |" in text


def test_the_weights_check_states_the_roll_up_weights() -> None:
    """Issue 27: its description said "P2 1" while the roll-up weighs P2 at 0."""
    graph = defs.resolve_asset_graph()
    (key,) = [k for k in graph.asset_check_keys if k.name == "weights_consistent"]
    assert "(P0 3, P1 2, P2 0)" in graph.get_check_spec(key).description
