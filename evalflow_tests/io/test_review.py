"""Loading fixtures and findings, and running a reviewer command with a scrubbed environment."""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from evalflow.domain.rubric.models import Rubric
from evalflow.domain.rubric.review_fixtures import evaluate_review_fixtures
from evalflow.errors import InputError
from evalflow.io.ledger import PROJECT_ROOT, load_rubric
from evalflow.io.review import (
    LoadedCases,
    load_cases,
    load_findings,
    run_reviewer,
    scrubbed_environment,
)

FIXTURES = PROJECT_ROOT / "data" / "review_fixtures"


@pytest.fixture(scope="module")
def rubric() -> Rubric:
    return load_rubric()


def _write_cases(directory: Path, cases: list[dict[str, Any]]) -> Path:
    for case in cases:
        diff = directory / case["diffFile"]
        diff.parent.mkdir(parents=True, exist_ok=True)
        diff.write_text("--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+x\n", encoding="utf-8")
    path = directory / "cases.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    return path


def _script(directory: Path, body: str) -> str:
    script = directory / "reviewer.py"
    script.write_text(body, encoding="utf-8")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


# --- the shipped fixture set --------------------------------------------------------------


def test_shipped_fixtures_evaluate_to_hand_computed_scores(rubric: Rubric) -> None:
    loaded = load_cases(FIXTURES / "cases.json")
    outputs = load_findings(FIXTURES / "findings.json")
    result = evaluate_review_fixtures(loaded.cases, outputs, rubric)
    summary = result.summary
    assert (summary.total, summary.passed) == (6, 4)
    assert summary.pass_rate == pytest.approx(4 / 6)
    assert summary.false_positive_rate == pytest.approx(1 / 2)
    assert summary.evidence_rate == pytest.approx(3 / 5)
    assert summary.failures_by_category == {"false_positive": 1, "missing_context": 1}
    scores = {d.dimension_id: d.score for d in result.dimension_scores}
    assert scores == pytest.approx(
        {
            "detection_accuracy": 7 / 8,
            "false_positive_rate": 1 / 2,
            "evidence_quality": 3 / 5,
            "severity_alignment": 2 / 3,
            "phase_consistency": 1.0,
            "actionability": None,
            "token_efficiency": 5 / 6,
        }
    )


# --- loading --------------------------------------------------------------------------------


def test_load_cases_resolves_diffs_relative_to_the_cases_file(tmp_path: Path) -> None:
    path = _write_cases(tmp_path, [{"name": "a", "diffFile": "diffs/a.diff", "mustInclude": []}])
    loaded = load_cases(path)
    assert loaded.diff_paths["a"] == (tmp_path / "diffs" / "a.diff").resolve()
    assert loaded.cases[0].required_findings == 1


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"name": "a"}, "Input should be a valid list"),
        ([{"name": "a"}], "diffFile"),
        ([{"name": "a", "diffFile": "missing.diff"}], "not found"),
        ([{"name": "a", "diffFile": "a.diff", "maxFindings": -1}], "maxFindings"),
        ([{"name": "a", "diffFile": "a.diff", "maxFindings": "3"}], "valid integer"),
        ([{"name": "a", "diffFile": "a.diff", "mustinclude": ["x"]}], "mustinclude"),
    ],
)
def test_load_cases_errors(tmp_path: Path, document: object, message: str) -> None:
    (tmp_path / "a.diff").write_text("", encoding="utf-8")
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_cases(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[]", "must be a JSON object"),
        ('{"a": {"message": "x"}}', "must be an array"),
        ("{", "not JSON"),
    ],
)
def test_load_findings_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "findings.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_findings(path)


# --- reviewer command -----------------------------------------------------------------------


def test_scrubbed_environment_drops_credential_like_names() -> None:
    environ = {
        "PATH": "/bin",
        "ANTHROPIC_API_KEY": "k",
        "github_token": "t",
        "DB_PASSWORD": "p",
        "MY_SECRET_THING": "s",
        "KEYBOARD": "drop too",
        "HOME": "/home/x",
    }
    assert scrubbed_environment(environ) == {"PATH": "/bin", "HOME": "/home/x"}


def _cases_with_one(tmp_path: Path) -> LoadedCases:
    path = _write_cases(
        tmp_path,
        [
            {
                "name": "one",
                "phase": "midstream",
                "diffFile": "one.diff",
                "planSkills": ["s1", "s2"],
                "mustInclude": [],
            }
        ],
    )
    return load_cases(path)


def test_command_sees_the_diff_and_case_but_not_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALFLOW_TEST_API_KEY", "super-secret-value")
    monkeypatch.setenv("EVALFLOW_TEST_VISIBLE", "visible-value")
    command = _script(
        tmp_path,
        "import json, os, sys\n"
        "print(json.dumps([{'message': json.dumps({\n"
        "    'diff': sys.argv[-1],\n"
        "    'cwd': os.getcwd(),\n"
        "    'secret': os.environ.get('EVALFLOW_TEST_API_KEY'),\n"
        "    'visible': os.environ.get('EVALFLOW_TEST_VISIBLE'),\n"
        "    'case': os.environ.get('EVALFLOW_REVIEW_CASE'),\n"
        "    'phase': os.environ.get('EVALFLOW_REVIEW_PHASE'),\n"
        "    'skills': os.environ.get('EVALFLOW_REVIEW_SKILLS'),\n"
        "})}]))\n",
    )
    loaded = _cases_with_one(tmp_path)
    outputs = run_reviewer(command, loaded, timeout=30)
    assert outputs["one"].tool_error is None
    seen = json.loads(outputs["one"].findings[0]["message"])
    assert seen["secret"] is None
    assert seen["visible"] == "visible-value"
    assert seen["diff"] == str(loaded.diff_paths["one"])
    assert Path(seen["cwd"]) == tmp_path.resolve()
    assert (seen["case"], seen["phase"], seen["skills"]) == ("one", "midstream", "s1,s2")


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("import sys\nsys.stderr.write('boom')\nsys.exit(3)\n", "exit status 3: boom"),
        ("print('not json')\n", "stdout is not JSON"),
        ("print('{}')\n", "not a JSON array"),
        ("import time\ntime.sleep(5)\n", "timed out after 0.5 s"),
    ],
)
def test_command_failures_become_tool_errors(tmp_path: Path, body: str, error: str) -> None:
    outputs = run_reviewer(_script(tmp_path, body), _cases_with_one(tmp_path), timeout=0.5)
    assert outputs["one"].findings == []
    assert outputs["one"].tool_error is not None
    assert error in outputs["one"].tool_error


def test_timeout_ends_helpers_that_hold_the_pipes(tmp_path: Path) -> None:
    body = (
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    outputs = run_reviewer(_script(tmp_path, body), _cases_with_one(tmp_path), timeout=0.5)
    assert outputs["one"].tool_error == "timed out after 0.5 s"
    assert time.monotonic() - started < 10


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("", "empty"),
        ("'unbalanced", "cannot parse"),
        ("/nonexistent/reviewer --flag", "cannot run the reviewer command"),
    ],
)
def test_unusable_commands_are_input_errors(tmp_path: Path, command: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        run_reviewer(command, _cases_with_one(tmp_path))
