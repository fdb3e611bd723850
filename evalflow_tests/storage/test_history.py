"""Evaluation history: one appended row per evaluation, and `final_drift` telling a changed
input from a judge whose answers changed; `evalflow history` shows both."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest
import yaml

from evalflow.cli import main
from evalflow.io.ledger import ledger_path_for, load_rubric, read_ledger_frame
from evalflow.io.registry import register_manifest
from evalflow.pipeline.assets import per_run_assets
from evalflow.pipeline.assets.partitions import evaluations
from evalflow.pipeline.io_manager import ParquetIOManagerFactory
from evalflow.pipeline.resources import EvalflowResource
from evalflow.storage.catalog import catalog_path, query, refresh_catalog
from evalflow.storage.history import HISTORY_TABLE, JUDGE_NAME_OF_SQL, record_evaluation
from evalflow.storage.migration import judge_name_of
from evalflow.storage.warehouse import Warehouse

KEY = "mini.good.r1"


def _evaluate(instance: dg.DagsterInstance, root: Path, **judge: str) -> None:
    result = dg.materialize(
        per_run_assets,
        partition_key=KEY,
        resources={
            "evalflow": EvalflowResource(warehouse=str(root), **judge),
            "warehouse_io": ParquetIOManagerFactory(warehouse=str(root)),
        },
        instance=instance,
        raise_on_error=False,
    )
    assert result.success


def _labels(path: Path, *, s2_met: bool = True) -> Path:
    """A labels file that answers S1's checks UNMET and S2's MET: Final (3·0 + 2·1)/5 = 0.4;
    with `s2_met=False` S2's UNMET too: Final 0."""

    def unmet(pattern: str) -> dict:
        return {"status": "UNMET", "searches": [{"pattern": pattern, "scope": "app/**", "hits": 0}]}

    def met(file: str, line: int, quote: str) -> dict:
        evidence = {"path": file, "start_line": line, "end_line": line, "quote": quote}
        return {"status": "MET", "evidence": [evidence], "rationale": "labelled"}

    s2 = (
        [
            {"check_id": "S2-AC1-I1", **met("app/core.py", 5, "def bye():")},
            {"check_id": "S2-AC1-T1", **met("tests/test_core.py", 9, 'assert bye() == "bye"')},
        ]
        if s2_met
        else [
            {"check_id": "S2-AC1-I1", **unmet("farewell_nowhere")},
            {"check_id": "S2-AC1-T1", **unmet("farewell_nowhere")},
        ]
    )
    verdicts = [
        {"check_id": "S1-AC1-I1", **unmet("greet")},
        {"check_id": "S1-AC1-T1", **unmet("greet")},
        *s2,
    ]
    path.write_text(yaml.safe_dump({"run_key": KEY, "verdicts": verdicts}))
    return path


@pytest.mark.slow  # four evaluations through Dagster: ~45 s on the shared machine
def test_history_appends_and_final_drift_names_the_cause(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # every evaluated_at is one instant
    root = tmp_path / "wh"
    manifest = mini / "runs" / "good.yaml"
    instance = dg.DagsterInstance.ephemeral()
    wh = Warehouse(str(root))
    instance.add_dynamic_partitions(evaluations.name, [register_manifest(wh, manifest)])

    _evaluate(instance, root)  # 1: heuristic judge
    _evaluate(instance, root, judge="labels", labels=str(_labels(tmp_path / "l.yaml")))
    unmet = _labels(tmp_path / "u.yaml", s2_met=False)
    _evaluate(instance, root, judge="labels", labels=str(unmet))  # 3: the labels changed
    # 4: heuristic again, on another head commit (head == base is refused as an empty change)
    source = mini / "sources" / "good"
    (source / "other").mkdir()
    (source / "other" / "README.md").write_text("mini\n")
    (source / "other" / "NOTES.md").write_text("a later commit\n")
    build = yaml.safe_load((source / "build.yaml").read_text())
    build["commits"].append({"tree": "other", "message": "other", "tag": "other"})
    (source / "build.yaml").write_text(yaml.safe_dump(build))
    spec = yaml.safe_load(manifest.read_text())
    manifest.write_text(yaml.safe_dump({**spec, "head": "other"}))
    _evaluate(instance, root)

    parts = sorted(p.name for p in (root / HISTORY_TABLE / f"run_key={KEY}").iterdir())
    assert [p[:6] for p in parts] == ["000001", "000002", "000003", "000004"]
    assert all(p.endswith(".parquet") and "-20260101T000000Z-" in p for p in parts)
    _, rows = query(
        wh,
        "SELECT evaluation_number, final, complete, judge_id, fingerprint, inputs_fingerprint, "
        "head_sha, cost_usd, judge_name FROM evaluation_history ORDER BY evaluation_number",
    )
    finals = [r[1] for r in rows]
    assert finals == [1.0, 0.4, 0.0, 1.0]
    assert [r[3] for r in rows] == ["heuristic", "labels:l", "labels:u", "heuristic"]
    assert [r[8] for r in rows] == ["heuristic", "labels", "labels", "heuristic"]
    assert len({r[4] for r in rows}) == 4  # the judge is in the full fingerprint
    assert rows[0][5] == rows[1][5] == rows[2][5] != rows[3][5]  # but not in the inputs'
    assert rows[2][6] != rows[3][6] and all(r[7] == 0.0 for r in rows)  # offline: $0

    drift_sql = (
        "SELECT judge_name, from_evaluation, to_evaluation, final_before, final_after, cause, "
        "fingerprint_changed, judge_drift FROM final_drift ORDER BY to_evaluation"
    )
    # Each evaluation pairs with its own judge's previous one: labels 2 → 3 fell with the same
    # inputs (judge drift); heuristic 1 → 4 kept its Final on another head (no row), and the
    # judge switches (1 → 2, 3 → 4) are two judges' results, not changes.
    expected = [("labels", 2, 3, 0.4, 0.0, "judge", True, True)]
    assert query(wh, drift_sql)[1] == expected  # evalflow query's in-memory catalog
    refresh_catalog(wh)
    import duckdb

    with duckdb.connect(str(catalog_path(wh)), read_only=True) as con:
        assert con.execute(drift_sql).fetchall() == expected  # the analyst's file

    # The ledger entry of each evaluation names what was evaluated, not evalflow's checkout.
    ledger = read_ledger_frame(ledger_path_for(root), load_rubric())
    assert ledger["fingerprint"].tolist() == [r[4] for r in rows]
    assert ledger["head_sha"].tolist() == [r[6] for r in rows]

    with pytest.raises(SystemExit) as done:
        main(["history", KEY, "--warehouse", str(root), "--json"])
    assert done.value.code == 0
    shown = json.loads(capsys.readouterr().out)
    assert [(e["evaluation_number"], e["cause"], e["judge_drift"]) for e in shown] == [
        (1, None, None),
        (2, None, None),
        (3, "judge", True),
        (4, None, None),
    ]
    with pytest.raises(SystemExit) as done:
        main(["history", KEY, "--warehouse", str(root)])
    out = capsys.readouterr().out
    assert done.value.code == 0 and "judge drift" in out


def test_history_of_an_unknown_run_is_one_line(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["history", "mini.nope.r1", "--warehouse", str(tmp_path / "wh")])
    err = capsys.readouterr().err
    assert done.value.code == 2
    assert err.startswith("error: ") and "no evaluation of run 'mini.nope.r1'" in err
    assert len(err.strip().splitlines()) == 1


def _row(final: float | None) -> tuple[pd.Series, pd.Series]:
    manifest = pd.Series(
        {
            "run_key": KEY,
            "fingerprint": "f" * 64,
            "benchmark": "mini",
            "framework": "good",
            "judge_name": "heuristic",
            "evalflow_version": "0.1.0",
            "judge_id": "heuristic",
            "judge_model": None,
            "judge_prompt_version": "h1",
            "comparability_key": "c" * 16,
            "head_sha": "a" * 40,
        }
    )
    return manifest, pd.Series({"final": final, "adjusted_final": None, "complete": True})


def test_appends_never_rewrite_and_refuse_a_taken_name(tmp_path: Path) -> None:
    wh = Warehouse(str(tmp_path))
    when = pd.Timestamp("2026-01-01", tz="UTC").to_pydatetime()
    manifest, final = _row(0.5)
    first = record_evaluation(
        wh, manifest, final, inputs_fingerprint="i" * 64, evaluated_at=when, cost_usd=None
    )
    assert Path(first).name == "000001-20260101T000000Z-ffffffffffff.parquet"
    before = Path(first).read_bytes()
    frame = wh.read(HISTORY_TABLE, KEY)
    with pytest.raises(FileExistsError):  # what a concurrent writer of the same number gets
        wh.append(HISTORY_TABLE, frame, KEY, Path(first).stem)
    second = record_evaluation(
        wh, manifest, _row(0.7)[1], inputs_fingerprint="i" * 64, evaluated_at=when, cost_usd=1.5
    )
    assert Path(second).name.startswith("000002-") and Path(first).read_bytes() == before
    frame = wh.read(HISTORY_TABLE, KEY)
    assert frame["evaluation_number"].tolist() == [1, 2]
    assert frame["final"].tolist() == [0.5, 0.7] and frame["judge_model"].isna().all()
    assert frame["cost_usd"].isna().tolist() == [True, False]
    assert not list(tmp_path.rglob("*.tmp"))
    with pytest.raises(ValueError, match="append-only"):
        wh.write(HISTORY_TABLE, frame.iloc[:1], KEY)


def test_final_drift_cause_from_synthetic_history(tmp_path: Path) -> None:
    """Each cause on its own: unchanged (no row), judge answers only, judge settings,
    evalflow version, inputs; a rise with the judge as cause is not drift."""
    wh = Warehouse(str(tmp_path))
    when = pd.Timestamp("2026-01-01", tz="UTC").to_pydatetime()
    steps = [  # (final, fingerprint, inputs, evalflow version)
        (0.8, "a", "i", "0.1.0"),
        (0.8, "a", "i", "0.1.0"),  # re-evaluated, nothing changed: no drift row
        (0.7, "a", "i", "0.1.0"),  # same fingerprint, lower Final: the answers drifted
        (0.9, "b", "i", "0.1.0"),  # judge settings changed, Final rose: cause judge, no drift
        (0.6, "c", "i", "0.2.0"),  # evalflow changed
        (None, "d", "j", "0.2.0"),  # inputs changed, Final undetermined
    ]
    for final, fingerprint, inputs, version in steps:
        manifest, row = _row(final)
        manifest["fingerprint"] = fingerprint * 64
        manifest["evalflow_version"] = version
        record_evaluation(
            wh, manifest, row, inputs_fingerprint=inputs * 64, evaluated_at=when, cost_usd=0.0
        )
    _, rows = query(
        wh,
        "SELECT from_evaluation, to_evaluation, final_before, final_after, final_change, cause, "
        "fingerprint_changed, judge_drift FROM final_drift",
    )
    assert rows == [
        (2, 3, 0.8, 0.7, -0.1, "judge", False, True),
        (3, 4, 0.7, 0.9, 0.2, "judge", True, False),
        (4, 5, 0.9, 0.6, -0.3, "evalflow", True, False),
        (5, 6, 0.6, None, None, "inputs", True, False),
    ]


def test_final_drift_pairs_evaluations_of_one_judge(tmp_path: Path) -> None:
    """A run judged by two judges in turn: each evaluation pairs with its own judge's previous
    one, so a switch of judge is never drift (heuristic 0.8 → anthropic 0.5 is two results)."""
    wh = Warehouse(str(tmp_path))
    when = pd.Timestamp("2026-01-01", tz="UTC").to_pydatetime()
    steps = [  # (judge id, final)
        ("heuristic", 0.8),
        ("anthropic:claude-x", 0.5),
        ("heuristic", 0.8),  # the heuristic's previous is evaluation 1: unchanged
        ("anthropic:claude-x", 0.4),  # anthropic's previous is evaluation 2: it fell
    ]
    for judge_id, final in steps:
        manifest, row = _row(final)
        manifest["judge_id"] = judge_id
        manifest["judge_name"] = judge_id.split(":")[0]
        record_evaluation(
            wh, manifest, row, inputs_fingerprint="i" * 64, evaluated_at=when, cost_usd=0.0
        )
    assert wh.read(HISTORY_TABLE, KEY)["judge_name"].tolist() == [
        "heuristic",
        "anthropic",
        "heuristic",
        "anthropic",
    ]
    drift_sql = (
        "SELECT judge_name, from_evaluation, to_evaluation, final_before, final_after, cause, "
        "judge_drift FROM final_drift"
    )
    expected = [("anthropic", 2, 4, 0.5, 0.4, "judge", True)]
    assert query(wh, drift_sql)[1] == expected
    import duckdb
    import pyarrow.parquet as pq

    # Parts written before history rows named their judge (the first two, then all four):
    # evalflow upgrades them as it reads, the catalog file names their judge in SQL.
    for old in ([], wh.parts(HISTORY_TABLE)[:2], wh.parts(HISTORY_TABLE)[2:]):
        for path in old:
            pq.write_table(pq.read_table(path).drop_columns("judge_name"), path)
        assert query(wh, drift_sql)[1] == expected
        refresh_catalog(wh)
        with duckdb.connect(str(catalog_path(wh)), read_only=True) as con:
            assert con.execute(drift_sql).fetchall() == expected


def test_the_judge_name_of_an_old_history_row_is_the_same_in_sql() -> None:
    """A history part written before rows named their judge pairs, in the catalog file, by
    the name `judge_name_of` gives its judge_id (evalflow itself upgrades it in Python)."""
    import duckdb

    ids = ["heuristic", "labels:l", "anthropic:claude-x", "hybrid:m", "panel:anthropic:a+openai:b"]
    with duckdb.connect() as con:
        named = con.execute(
            f"SELECT {JUDGE_NAME_OF_SQL} FROM unnest($ids) AS t(judge_id)", {"ids": ids}
        ).fetchall()
    assert [n for (n,) in named] == [judge_name_of(i) for i in ids]
