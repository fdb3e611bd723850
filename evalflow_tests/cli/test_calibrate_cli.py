"""`evalflow calibrate` through click: exit codes 0/1/2, the table, JSON and the ledger."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from evalflow.cli.calibrate import calibrate
from evalflow.domain.models import Evidence
from evalflow.io.calibration import DEFAULT_SET, CalibrationCase, discover_cases, load_gold
from evalflow.io.ledger import read_entries


@pytest.fixture(scope="module")
def shared_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("calibrate-cli-warehouse")


@pytest.fixture(autouse=True)
def _isolated(shared_warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EVALFLOW_WAREHOUSE", str(shared_warehouse))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    monkeypatch.delenv("EVALFLOW_JUDGE", raising=False)
    return shared_warehouse


def invoke(*args: str):
    return CliRunner().invoke(calibrate, [str(a) for a in args])


def test_heuristic_passes_calibration_and_lists_its_unscored_checks() -> None:
    result = invoke("--judge", "heuristic", "--no-ledger")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "agreement 0.6600 (33/50)" in out
    assert "17 UNSCORED (no verdict, not a disagreement)" in out
    assert "false-MET rate 0.0000" in out
    assert "valid-evidence share 1.0000 (24/24)" in out
    for check_id in ("BI1-AC3-I2", "IN1-AC3-I1", "IN1-AC4-I1", "SU1-AC3-I1"):
        assert check_id in out
    assert "PASS: agrees with gold, no false MET on planted defects" in out
    assert "appended" not in out


def test_json_output_and_default_ledger(shared_warehouse: Path) -> None:
    result = invoke("--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    ledger = shared_warehouse / "ledger" / "ledger.jsonl"
    assert payload["ledger"] == str(ledger)
    assert payload["summary"]["judge_id"] == "heuristic"
    assert payload["summary"]["agreement"] == pytest.approx(33 / 50)
    assert len(payload["rows"]) == 50
    assert payload["entry"]["description"] == "judge_calibration:heuristic"
    assert payload["entry"]["timestamp"] == "2026-01-01T00:00:00Z"
    assert [e.description for e in read_entries(ledger)][-1] == "judge_calibration:heuristic"


def quoted(case: CalibrationCase, evidence: Evidence) -> str:
    """The cited lines at head (the validator requires a MET's evidence to quote them)."""
    manifest = yaml.safe_load(case.manifest.read_text())
    tree = (case.manifest.parent / manifest["source"] / "tree" / evidence.path).resolve()
    return "\n".join(tree.read_text().splitlines()[evidence.start_line - 1 : evidence.end_line])


def test_labels_judge_with_gold_labels_passes(tmp_path: Path) -> None:
    verdicts = []
    for case in discover_cases(DEFAULT_SET):
        for check_id, label in load_gold(case.gold_path).items():
            verdicts.append(
                {
                    "check_id": check_id,
                    "status": label.verdict,
                    "evidence": [
                        {**e.model_dump(exclude_none=True), "quote": quoted(case, e)}
                        for e in label.evidence
                    ],
                    "searches": [{"pattern": check_id, "scope": "diff surface", "hits": 0}],
                }
            )
    labels = tmp_path / "gold-labels.yaml"
    labels.write_text(yaml.safe_dump({"verdicts": verdicts}))
    ledger = tmp_path / "ledger.jsonl"
    result = invoke("--judge", "labels", "--labels", labels, "--ledger", ledger)
    assert result.exit_code == 0, result.output
    assert "PASS" in result.stdout
    (entry,) = read_entries(ledger)
    assert entry.description == "judge_calibration:labels:gold-labels"
    assert entry.status == "pass"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--set", "/no/such/set", "--no-ledger"), "calibration set not found"),
        (("--no-ledger", "--ledger", "x.jsonl"), "contradict"),
        (("--judge", "nope"), "Invalid value for '--judge'"),
    ],
)
def test_bad_input_exits_2(args: tuple[str, ...], message: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_help_describes_the_exit_codes() -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    assert "Exits 1 when the judge" in result.output
