"""`evalflow rubric`, `evalflow ledger` and `evalflow review-eval` through click."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalflow.cli.review import ledger_group, review_eval_command, rubric_group
from evalflow.errors import InputError
from evalflow.io.ledger import PROJECT_ROOT, append_entry, load_rubric, read_entries
from evalflow_tests.domain.rubric.helpers import entry

FIXTURES = PROJECT_ROOT / "data" / "review_fixtures"


@pytest.fixture(autouse=True)
def _isolated_warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    warehouse = tmp_path / "warehouse"
    monkeypatch.setenv("EVALFLOW_WAREHOUSE", str(warehouse))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1738324800")
    return warehouse


def _review(*args: str) -> list[str]:
    return ["--cases", str(FIXTURES / "cases.json"), "--commit", "c0", "--branch", "main", *args]


# --- rubric -------------------------------------------------------------------------------


def test_rubric_check_accepts_the_shipped_rubric() -> None:
    result = CliRunner().invoke(rubric_group, ["check"])
    assert result.exit_code == 0, result.output
    assert "ok:" in result.output
    assert "7 dimensions" in result.output


def test_rubric_check_rejects_an_unsound_rubric_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "rubric.yaml"
    path.write_text(
        "dimensions:\n"
        "  - {id: a, name: A, weight: 0.6, scoringMethod: ratio}\n"
        "  - {id: a, name: B, weight: 0.6, scoringMethod: ratio}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(rubric_group, ["check", str(path)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert "sum to" in lines[0]
    assert "duplicate dimension ids: a" in lines[0]


def test_rubric_check_reports_schema_errors_as_json(tmp_path: Path) -> None:
    path = tmp_path / "rubric.yaml"
    path.write_text(
        "dimensions:\n  - {id: a, name: A, weight: 1, scoringMethod: ratio, method: x}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(rubric_group, ["check", str(path), "--json"])
    assert result.exit_code == 2
    payload = json.loads(result.stdout)
    assert payload["valid"] is False
    assert "Additional properties" in payload["problems"][0]


# --- review-eval --------------------------------------------------------------------------


def test_review_eval_with_findings_appends_to_the_default_ledger(_isolated_warehouse: Path) -> None:
    findings = str(FIXTURES / "findings.json")
    result = CliRunner().invoke(
        review_eval_command, _review("--findings", findings, "--reviewer", "sample", "--json")
    )
    assert result.exit_code == 1, result.output  # two shipped cases fail on purpose
    payload = json.loads(result.stdout)
    ledger = _isolated_warehouse / "ledger" / "ledger.jsonl"
    assert payload["ledger"] == str(ledger)
    assert payload["entry"]["description"] == "review_eval:sample"
    assert payload["entry"]["timestamp"] == "2025-01-31T12:00:00Z"
    assert payload["entry"]["scores"]["coverage"] == pytest.approx(0.90)
    assert payload["evaluation"]["summary"]["passRate"] == pytest.approx(4 / 6)
    [stored] = read_entries(ledger)
    assert stored.to_document() == payload["entry"]


def test_review_eval_human_output_and_no_ledger(_isolated_warehouse: Path) -> None:
    findings = str(FIXTURES / "findings.json")
    result = CliRunner().invoke(review_eval_command, _review("--findings", findings, "--no-ledger"))
    assert result.exit_code == 1
    assert "passRate 0.6667 (4/6)" in result.output
    assert "coverage 0.90" in result.output
    assert not (_isolated_warehouse / "ledger").exists()


def test_review_eval_with_a_command_hides_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_SECRET", "do-not-leak")
    (tmp_path / "a.diff").write_text("+x\n", encoding="utf-8")
    cases = tmp_path / "cases.json"
    cases.write_text(
        json.dumps([{"name": "a", "diffFile": "a.diff", "mustInclude": ["secret=absent"]}]),
        encoding="utf-8",
    )
    script = tmp_path / "reviewer.py"
    script.write_text(
        "import json, os\n"
        "leak = os.environ.get('REVIEWER_SECRET', 'absent')\n"
        "print(json.dumps([{'message': f'secret={leak}', 'file': 'x.ts', 'line': 1}]))\n",
        encoding="utf-8",
    )
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    ledger = tmp_path / "ledger.jsonl"
    result = CliRunner().invoke(
        review_eval_command,
        ["--cases", str(cases), "--command", command, "--ledger", str(ledger), "--json"],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["evaluation"]["cases"][0]["mustIncludeHits"] == ["secret=absent"]
    assert payload["entry"]["description"] == "review_eval:" + Path(sys.executable).name
    assert len(read_entries(ledger)) == 1


def test_review_eval_command_on_the_shipped_fixtures(tmp_path: Path) -> None:
    script = tmp_path / "reviewer.py"
    script.write_text(
        "import json\nprint(json.dumps([{'message': 'Finding: x'}]))\n", encoding="utf-8"
    )
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    result = CliRunner().invoke(
        review_eval_command, _review("--command", command, "--no-ledger", "--json")
    )
    assert result.exit_code == 1
    categories = [f["category"] for f in json.loads(result.stdout)["entry"]["failures"]]
    # one finding per case: both guard cases (maxFindings 0) are false positives
    assert categories.count("false_positive") == 2


def test_review_eval_needs_exactly_one_findings_source() -> None:
    result = CliRunner().invoke(review_eval_command, _review())
    assert result.exit_code == 2
    assert "exactly one of --findings and --command" in result.output


def test_review_eval_unknown_case_in_findings_is_an_input_error(tmp_path: Path) -> None:
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps({"no such case": []}), encoding="utf-8")
    result = CliRunner().invoke(review_eval_command, _review("--findings", str(findings)))
    assert isinstance(result.exception, InputError)
    assert "unknown cases" in str(result.exception)


# --- ledger ---------------------------------------------------------------------------------


def _ledger_with(tmp_path: Path, *values: float) -> Path:
    rubric = load_rubric()
    path = tmp_path / "ledger.jsonl"
    for value in values:
        append_entry(path, entry({"detection_accuracy": value, "actionability": None}), rubric)
    return path


def test_compare_exits_one_on_a_regression(tmp_path: Path) -> None:
    path = _ledger_with(tmp_path, 0.9, 0.5)
    result = CliRunner().invoke(ledger_group, ["compare", "--ledger", str(path), "--json"])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["regression"] is True
    [comparison] = payload["comparisons"]
    regressed = [r["dimension_id"] for r in comparison["rows"] if r["regression"]]
    assert regressed == ["detection_accuracy"]


def test_compare_exits_zero_on_improvement_and_reports_short_keys(tmp_path: Path) -> None:
    path = _ledger_with(tmp_path, 0.5, 0.9)
    append_entry(path, entry({}, description="plugin_score:skill"), load_rubric())
    result = CliRunner().invoke(ledger_group, ["compare", "--ledger", str(path)])
    assert result.exit_code == 0, result.output
    assert "no regression" in result.output
    assert "plugin_score:skill: 1 entry, need 2 to compare" in result.output


def test_compare_key_filter_and_unknown_key(tmp_path: Path) -> None:
    path = _ledger_with(tmp_path, 0.9, 0.5)
    args = ["compare", "--ledger", str(path), "--key"]
    assert CliRunner().invoke(ledger_group, [*args, "review_eval:reviewer"]).exit_code == 1
    missing = CliRunner().invoke(ledger_group, [*args, "review_eval:typo"])
    assert isinstance(missing.exception, InputError)


def test_record_manual_then_compare(tmp_path: Path) -> None:
    path = _ledger_with(tmp_path, 0.8)
    result = CliRunner().invoke(
        ledger_group,
        [
            "record-manual",
            "--ledger",
            str(path),
            "--key",
            "review_eval:reviewer",
            "--dimension",
            "actionability",
            "--score",
            "0.6",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "coverage 0.35" in result.output
    entries = read_entries(path)
    assert len(entries) == 2
    scores = {d.dimension_id: d.score for d in entries[-1].dimension_scores or ()}
    assert scores == {"detection_accuracy": 0.8, "actionability": 0.6}
    compare = CliRunner().invoke(ledger_group, ["compare", "--ledger", str(path)])
    assert compare.exit_code == 0


def test_record_manual_refuses_an_automatic_dimension(tmp_path: Path) -> None:
    path = _ledger_with(tmp_path, 0.8)
    result = CliRunner().invoke(
        ledger_group,
        [
            "record-manual",
            "--ledger",
            str(path),
            "--key",
            "review_eval:reviewer",
            "--dimension",
            "detection_accuracy",
            "--score",
            "1",
        ],
    )
    assert isinstance(result.exception, InputError)
    assert len(read_entries(path)) == 1
