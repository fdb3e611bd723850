"""Ledger I/O: schema validation, atomic appends, the flat frame, comparison, human scores."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalflow.domain.rubric.models import LedgerEntry, Rubric
from evalflow.errors import InputError
from evalflow.io.ledger import (
    LEDGER_COLUMNS,
    append_entry,
    compare_ledger,
    default_ledger_path,
    load_rubric,
    now_timestamp,
    read_entries,
    read_ledger_frame,
    record_manual_score,
    validate_entry_document,
)
from evalflow_tests.domain.rubric.helpers import entry, entry_document


@pytest.fixture(scope="module")
def rubric() -> Rubric:
    return load_rubric()


def _with_score_item(**item: Any) -> dict[str, Any]:
    return entry_document(dimensionScores=[{"dimensionId": "detection_accuracy", **item}])


# --- schema validation ----------------------------------------------------------------------


def test_good_entry_validates(rubric: Rubric) -> None:
    assert validate_entry_document(entry_document(), rubric).status == "pass"


def test_null_score_is_accepted(rubric: Rubric) -> None:
    validate_entry_document(_with_score_item(score=None), rubric)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (_with_score_item(score=0.5, method="ratio"), "Additional properties"),
        (_with_score_item(scoringMethod="ratio"), "'score' is a required property"),
        (
            entry_document(
                failures=[{"category": "typo_miss", "caseRef": "c", "description": "d"}]
            ),
            "is not one of",
        ),
        (entry_document(timestamp="yesterday"), "is not a 'date-time'"),
        (entry_document(status="ok"), "is not one of"),
        (entry_document(scores={"passRate": "high"}), "is not of type 'number'"),
        (entry_document(scores={"passRate": True}), "is not of type 'number'"),
        (entry_document(description=None), "is not of type 'string'"),
        ({k: v for k, v in entry_document().items() if k != "branch"}, "'branch' is a required"),
    ],
)
def test_bad_entries_are_rejected(rubric: Rubric, document: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        validate_entry_document(document, rubric)


def test_rubric_violations_are_rejected_after_the_schema(rubric: Rubric) -> None:
    with pytest.raises(InputError, match="must be 0 or 1"):
        validate_entry_document(
            entry_document(dimensionScores=[{"dimensionId": "phase_consistency", "score": 0.5}]),
            rubric,
        )


# --- append and read ------------------------------------------------------------------------


def test_append_writes_one_compact_line_per_entry(tmp_path: Path, rubric: Rubric) -> None:
    path = tmp_path / "nested" / "ledger.jsonl"
    first, second = entry({"detection_accuracy": 0.5}), entry({"detection_accuracy": 0.7})
    append_entry(path, first, rubric)
    append_entry(path, second, rubric)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    assert lines[0] == json.dumps(first.to_document(), separators=(",", ":"))
    assert read_entries(path, rubric) == [first, second]


def test_invalid_entry_is_not_written(tmp_path: Path, rubric: Rubric) -> None:
    path = tmp_path / "ledger.jsonl"
    bad = entry({"detection_accuracy": 0.5}).model_copy(update={"status": "maybe"})
    with pytest.raises(InputError, match="invalid ledger entry"):
        append_entry(path, bad, rubric)
    unknown = entry({"made_up": 0.5})
    with pytest.raises(InputError, match="unknown dimension"):
        append_entry(path, unknown, rubric)
    assert not path.exists()


def test_concurrent_appends_never_interleave(tmp_path: Path, rubric: Rubric) -> None:
    path = tmp_path / "ledger.jsonl"
    entries = [entry({"detection_accuracy": i / 40}, commit=f"c{i}") for i in range(40)]
    threads = [threading.Thread(target=append_entry, args=(path, e, rubric)) for e in entries]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    read = read_entries(path, rubric)
    assert sorted(e.commit for e in read) == sorted(e.commit for e in entries)


def test_read_names_the_bad_line(tmp_path: Path, rubric: Rubric) -> None:
    path = tmp_path / "ledger.jsonl"
    append_entry(path, entry({}), rubric)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\n{not json\n")
    with pytest.raises(InputError, match=r"ledger\.jsonl:3: not JSON"):
        read_entries(path)
    with pytest.raises(InputError, match="ledger not found"):
        read_entries(tmp_path / "missing.jsonl")


# --- the flat frame -------------------------------------------------------------------------


def test_frame_has_one_row_per_entry_and_dimension(tmp_path: Path, rubric: Rubric) -> None:
    path = tmp_path / "ledger.jsonl"
    append_entry(
        path,
        entry(
            {"detection_accuracy": 0.8, "false_positive_rate": 0.2, "actionability": None},
            description="framework_run:demo.kit.r1",
        ),
        rubric,
    )
    append_entry(path, entry({}, description="judge_calibration:claude"), rubric)
    frame = read_ledger_frame(path, rubric)
    assert tuple(frame.columns) == LEDGER_COLUMNS
    assert len(frame) == 4
    first = frame[frame["entry_index"] == 0]
    assert list(first["dimension_id"]) == [
        "detection_accuracy",
        "false_positive_rate",
        "actionability",
    ]
    assert first["score"].isna().tolist() == [False, False, True]
    # (0.25·0.8 + 0.20·(1 − 0.2)) / 0.45
    assert first["weighted_total"].iloc[0] == pytest.approx(0.36 / 0.45)
    assert first["coverage"].iloc[0] == pytest.approx(0.45)
    assert set(first["run_key"]) == {"demo.kit.r1"}
    assert set(first["kind"]) == {"framework_run"}
    judge = frame[frame["entry_index"] == 1].iloc[0]
    assert judge["kind"] == "judge_calibration"
    assert pd.isna(judge["run_key"])
    assert pd.isna(judge["dimension_id"])
    assert pd.isna(judge["weighted_total"])
    assert judge["coverage"] == 0.0
    assert isinstance(frame["timestamp"].dtype, pd.DatetimeTZDtype)


def test_empty_ledger_gives_an_empty_frame_with_the_columns(tmp_path: Path, rubric: Rubric) -> None:
    path = tmp_path / "ledger.jsonl"
    path.write_text("\n", encoding="utf-8")
    frame = read_ledger_frame(path, rubric)
    assert frame.empty
    assert tuple(frame.columns) == LEDGER_COLUMNS


# --- compare and manual scores --------------------------------------------------------------


def test_compare_ledger_finds_regressions_and_counts(tmp_path: Path, rubric: Rubric) -> None:
    path = tmp_path / "ledger.jsonl"
    for value in (0.9, 0.6):
        append_entry(path, entry({"detection_accuracy": value}), rubric)
    append_entry(path, entry({}, description="review_eval:other"), rubric)
    comparisons, counts = compare_ledger(path, rubric)
    assert counts == {"review_eval:reviewer": 2, "review_eval:other": 1}
    assert [c.key for c in comparisons] == ["review_eval:reviewer"]
    assert [r.dimension_id for r in comparisons[0].regressions] == ["detection_accuracy"]
    with pytest.raises(InputError, match="no ledger entry has the key"):
        compare_ledger(path, rubric, "review_eval:typo")


def test_record_manual_score_appends_a_new_entry(
    tmp_path: Path, rubric: Rubric, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1738324800")
    path = tmp_path / "ledger.jsonl"
    append_entry(path, entry({"detection_accuracy": 1.0, "actionability": None}), rubric)
    recorded = record_manual_score(path, rubric, "review_eval:reviewer", "actionability", 0.4)
    entries = read_entries(path, rubric)
    assert len(entries) == 2
    assert entries[-1] == recorded
    assert recorded.timestamp == "2025-01-31T12:00:00Z"
    assert recorded.scores["weightedTotal"] == pytest.approx((0.25 + 0.1 * 0.4) / 0.35)
    with pytest.raises(InputError, match="no ledger entry has the key"):
        record_manual_score(path, rubric, "review_eval:nobody", "actionability", 0.4)


# --- small helpers --------------------------------------------------------------------------


def test_default_ledger_path_follows_the_warehouse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALFLOW_WAREHOUSE", "/srv/wh")
    assert default_ledger_path() == Path("/srv/wh/ledger/ledger.jsonl")
    monkeypatch.delenv("EVALFLOW_WAREHOUSE")
    assert default_ledger_path() == Path("data/warehouse/ledger/ledger.jsonl").resolve()


def test_now_timestamp_is_rfc3339_and_pinnable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    assert now_timestamp() == "1970-01-01T00:00:00Z"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "soon")
    with pytest.raises(InputError, match="SOURCE_DATE_EPOCH"):
        now_timestamp()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("dimensions: [", "not valid YAML"),
        ("dimensions:\n  - id: a\n    name: A\n    weight: 1\n", "'scoringMethod' is a required"),
        (
            "dimensions:\n  - {id: a, name: A, weight: 0.5, scoringMethod: ratio}\n",
            "sum to 0.5",
        ),
    ],
)
def test_load_rubric_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "rubric.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_rubric(path)


def test_load_rubric_can_skip_integrity(tmp_path: Path) -> None:
    path = tmp_path / "rubric.yaml"
    path.write_text("dimensions:\n  - {id: a, name: A, weight: 0.5, scoringMethod: ratio}\n")
    assert load_rubric(path, require_sound=False).dimensions[0].id == "a"


def test_entry_model_round_trip_through_the_file(tmp_path: Path, rubric: Rubric) -> None:
    path = tmp_path / "ledger.jsonl"
    original = LedgerEntry.model_validate(entry_document(snapshots={"x": 1}))
    append_entry(path, original, rubric)
    assert json.loads(path.read_text(encoding="utf-8")) == original.to_document()


def test_a_framework_run_entry_names_what_was_evaluated(tmp_path: Path, rubric: Rubric) -> None:
    from evalflow.io.ledger import record_evaluation

    path = tmp_path / "ledger.jsonl"
    common = {"scores": {"final": 0.5}, "results": [], "passed": True, "ledger_path": path}
    record_evaluation("framework_run", "b.f.r1", head_sha="a" * 40, fingerprint="f" * 64, **common)
    record_evaluation("plugin_score", "skill", **common)
    document = json.loads(path.read_text().splitlines()[0])
    assert document["headSha"] == "a" * 40 and document["fingerprint"] == "f" * 64
    frame = read_ledger_frame(path, rubric)
    assert list(frame.columns) == list(LEDGER_COLUMNS)
    assert frame["head_sha"].iloc[0] == "a" * 40 and frame["head_sha"].isna().iloc[1]
    assert frame["fingerprint"].iloc[0] == "f" * 64 and frame["fingerprint"].isna().iloc[1]
    assert str(frame["timestamp"].dtype).startswith("datetime64") and frame["commit"].notna().all()


def test_now_honours_source_date_epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalflow.io.ledger import now

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    assert now().isoformat() == "2026-01-01T00:00:00+00:00"
    assert now_timestamp() == "2026-01-01T00:00:00Z"
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    assert now().microsecond == 0 and now().tzinfo is not None
