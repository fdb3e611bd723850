"""Suite files: strict schema, short forms, where they are found, one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalflow.errors import InputError
from evalflow.io.suites import load_suite, suite_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_short_and_long_benchmark_forms_and_pins(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.yaml",
        "name: s\nbenchmarks:\n  - a\n  - {name: b, weight: 2, baseline_sha256: abc}\n"
        "comparability:\n  judge_id: heuristic\n  judge_model: null\n",
    )
    suite = load_suite(str(path))
    assert suite.weights == {"a": 1.0, "b": 2.0}
    assert suite.benchmarks[1].baseline_sha256 == "abc"
    # An explicit null pins "no model"; an absent field pins nothing.
    assert suite.pinned() == {"judge_id": "heuristic", "judge_model": None}


def test_suites_are_found_by_name_under_the_benchmarks_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALFLOW_BENCHMARKS", str(tmp_path))
    write(tmp_path / "_suites" / "demo.yaml", "name: demo\nbenchmarks: [a]\n")
    assert suite_path("demo") == tmp_path / "_suites" / "demo.yaml"
    assert load_suite("demo").name == "demo"
    with pytest.raises(InputError, match="known suites: demo"):
        load_suite("other")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: s\nbenchmarks: [a, a]\n", "benchmark listed twice: a"),
        ("name: s\nbenchmarks: [a]\nextra: 1\n", "extra: Extra inputs are not permitted"),
        ("name: s\nbenchmarks: []\n", "at least 1 item"),
        ("name: s\nbenchmarks: [{name: a, weight: 0}]\n", "greater than 0"),
        ("name: s\nbenchmarks: [{name: a, weight: '2'}]\n", "valid number"),
        ("name: 's/x'\nbenchmarks: [a]\n", "must be letters"),
        ("name: s\nbenchmarks: [a]\ncomparability: {judge: x}\n", "Extra inputs"),
        ("- a\n", "must be a YAML mapping"),
    ],
)
def test_bad_suite_files_are_one_line_input_errors(tmp_path: Path, text: str, problem: str):
    path = write(tmp_path / "s.yaml", text)
    with pytest.raises(InputError, match=problem) as error:
        load_suite(str(path))
    assert "\n" not in str(error.value) and str(path) in str(error.value)


def test_votes_of_a_run_whose_baseline_cannot_be_read_are_left_unmeasured(tmp_path: Path):
    import pandas as pd

    from evalflow.io.suites import check_votes

    votes = pd.DataFrame({"run_key": ["x"], "check_id": ["S1-AC1-I1"], "met_votes": [2], "k": [3]})
    manifest = pd.DataFrame({"run_key": ["x"], "manifest_path": [str(tmp_path / "gone.yaml")]})
    stories = pd.DataFrame(columns=["run_key", "ac_id", "story_id", "priority"])
    assert check_votes(votes, stories, manifest).empty
