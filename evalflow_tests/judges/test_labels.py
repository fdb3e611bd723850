"""The labels judge: verdicts from a YAML/JSON file, per-run overrides, clear errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from evalflow.errors import InputError
from evalflow.judges.labels import LABELS_ENV, LabelsJudge
from evalflow.judges.validator import validate_verdict
from evalflow_tests.judges.fake_anthropic import DEMO_CHECKS, demo_request

LABELS = {
    "run_key": "mini.good.r1",
    "verdicts": [
        {
            "check_id": "S1-AC1-I1",
            "status": "MET",
            "evidence": [
                {
                    "path": "app/core.py",
                    "start_line": 2,
                    "end_line": 2,
                    "quote": 'return f"Hello, {name}"',
                }
            ],
            "rationale": "human: greeting built from the name",
        },
        {
            "check_id": "S1-AC1-T1",
            "status": "UNMET",
            "searches": [{"pattern": "assert greet", "scope": "tests/**", "hits": 0}],
        },
        {"check_id": "S1-AC1-T1", "run": 2, "status": "UNMET"},
    ],
}


def write(tmp_path: Path, data: object, name: str = "gold.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data) if name.endswith(".yaml") else json.dumps(data))
    return path


def test_verdicts_per_run_and_missing_checks(tmp_path: Path) -> None:
    judge = LabelsJudge(write(tmp_path, LABELS))
    assert judge.judge_id == "labels:gold" and judge.deterministic is True
    request = demo_request()
    run1 = {v.check_id: v for v in judge.score(request)}
    assert run1["S1-AC1-I1"].status == "MET" and run1["S1-AC1-I1"].judge_id == "labels:gold"
    assert run1["S1-AC1-T1"].status == "UNMET"
    assert run1["S2-AC1-I1"].status == "UNSCORED"
    assert "no label for check S2-AC1-I1" in run1["S2-AC1-I1"].rationale
    run2 = {v.check_id: v for v in judge.score(demo_request(run=2))}
    assert run2["S1-AC1-T1"].status == "UNMET"
    diff = set(request.diff_paths)
    # Labels pass the shared validator too: UNMET without searches is not scored.
    assert validate_verdict(run2["S1-AC1-T1"], request.snapshot, diff).status == "UNSCORED"
    assert validate_verdict(run1["S1-AC1-I1"], request.snapshot, diff).status == "MET"


def test_json_file_from_env_and_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, {"verdicts": LABELS["verdicts"][:1]}, "other.json")
    monkeypatch.setenv(LABELS_ENV, str(path))
    judge = LabelsJudge()
    assert judge.judge_id == "labels:other"
    assert len(judge.fingerprint_fields()["labels_sha256"]) == 64
    assert judge.score(demo_request(checks=DEMO_CHECKS[:1]))[0].status == "MET"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"verdicts": [{"check_id": "C1", "status": "MAYBE"}]}, r"verdicts\[0\] status"),
        ({"verdicts": [{"check_id": "C1", "status": "MET", "extra": 1}]}, r"verdicts\[0\] extra"),
        (
            {
                "verdicts": [
                    {"check_id": "C1", "status": "MET"},
                    {"check_id": "C1", "status": "MET"},
                ]
            },
            r"verdicts\[1\].*already labelled by verdicts\[0\]",
        ),
        ({"nothing": []}, "nothing: Extra inputs"),
        ({}, "give verdicts, or runs"),
        (
            {
                "verdicts": [
                    {
                        "check_id": "C1",
                        "status": "MET",
                        "evidence": [{"path": "a", "start_line": 5, "end_line": 1}],
                    }
                ]
            },
            r"verdicts\[0\] evidence\.0",
        ),
    ],
)
def test_malformed_files_name_the_file_and_entry(
    tmp_path: Path, data: object, message: str
) -> None:
    path = write(tmp_path, data)
    with pytest.raises(InputError, match=message) as err:
        LabelsJudge(path)
    assert str(path) in str(err.value)


def test_unreadable_and_missing_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(LABELS_ENV, raising=False)
    with pytest.raises(InputError, match=LABELS_ENV):
        LabelsJudge()
    with pytest.raises(InputError, match="cannot read labels file"):
        LabelsJudge(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("verdicts: [unclosed\n")
    with pytest.raises(InputError, match="not valid YAML"):
        LabelsJudge(bad)


def test_labels_for_another_run_are_refused(tmp_path: Path) -> None:
    judge = LabelsJudge(write(tmp_path, {**LABELS, "run_key": "other.run.r9"}))
    with pytest.raises(InputError, match=r"other\.run\.r9"):
        judge.score(demo_request())


def test_a_label_citing_lines_without_a_quote_is_checked_on_those_lines(tmp_path: Path) -> None:
    request = demo_request()
    code = request.snapshot.lines("app/core.py")
    meaningful = next(i for i, line in enumerate(code, 1) if "return" in line)
    blank = code.index("") + 1
    cited = [{"path": "app/core.py", "start_line": meaningful, "end_line": meaningful}]
    labels = {"verdicts": [{"check_id": "S1-AC1-I1", "status": "MET", "evidence": cited}]}
    verdict = LabelsJudge(write(tmp_path, labels)).score(request)[0]
    assert verdict.evidence[0].quote == code[meaningful - 1]
    diff = set(request.diff_paths)
    assert validate_verdict(verdict, request.snapshot, diff).status == "MET"
    # A human pointing at a blank line proves nothing either.
    cited = [{"path": "app/core.py", "start_line": blank, "end_line": blank}]
    labels["verdicts"][0]["evidence"] = cited
    verdict = LabelsJudge(write(tmp_path, labels, "blank.yaml")).score(request)[0]
    assert validate_verdict(verdict, request.snapshot, diff).status != "MET"


def test_one_file_holds_the_labels_of_several_runs(tmp_path: Path) -> None:
    from dataclasses import replace

    good = LABELS["verdicts"][:1]
    poor = [{"check_id": "S1-AC1-I1", "status": "UNMET", "searches": []}]
    judge = LabelsJudge(write(tmp_path, {"runs": {"mini.good.r1": good, "mini.poor.r1": poor}}))
    request = demo_request()
    assert {v.check_id: v.status for v in judge.score(request)}["S1-AC1-I1"] == "MET"
    other = replace(request, run_key="mini.poor.r1")
    assert {v.check_id: v.status for v in judge.score(other)}["S1-AC1-I1"] == "UNMET"
    with pytest.raises(InputError, match=r"no verdicts for run 'mini\.new\.r1'"):
        judge.score(replace(request, run_key="mini.new.r1"))
    for bad in ({"runs": {"a.b.c": good}, "verdicts": good}, {"run_key": "a.b.c"}):
        with pytest.raises(InputError, match="invalid labels entry"):
            LabelsJudge(write(tmp_path, bad, "bad.yaml"))
    twice = {"runs": {"a.b.c": good + good}}
    with pytest.raises(InputError, match=r"runs\[a\.b\.c\]\[1\]: check S1-AC1-I1"):
        LabelsJudge(write(tmp_path, twice, "twice.yaml"))


def test_a_label_wider_than_the_line_cap_fails_the_load_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gold MET citing a whole 60-line function must not silently lose its credit to the
    validator's 40-line cap: the load fails in one line naming the label and the variable."""
    monkeypatch.delenv("EVALFLOW_EVIDENCE_MAX_LINES", raising=False)
    wide = [{"path": "app/core.py", "start_line": 1, "end_line": 60}]
    labels = {"verdicts": [{"check_id": "S1-AC1-I1", "status": "MET", "evidence": wide}]}
    path = write(tmp_path, labels)
    with pytest.raises(InputError, match="EVALFLOW_EVIDENCE_MAX_LINES") as err:
        LabelsJudge(path)
    message = str(err.value)
    assert r"verdicts[0] (S1-AC1-I1)" in message and "app/core.py:1-60 cites 60 lines" in message
    assert "\n" not in message
    monkeypatch.setenv("EVALFLOW_EVIDENCE_MAX_LINES", "60")  # documented way to allow it
    assert LabelsJudge(path).labels.verdicts[0].evidence[0].end_line == 60


CITED = {"path": "app/core.py", "start_line": 2, "end_line": 2}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"status": "MET", "evidence": [{**CITED, "path": "../outside.py"}]},
            "evidence ../outside.py: not a plain path inside the repository",
        ),
        (
            {"status": "MET", "evidence": [{**CITED, "path": "/etc/passwd"}]},
            "evidence /etc/passwd: not a plain path inside the repository",
        ),
        (
            {"status": "UNMET", "evidence": [{**CITED, "path": "app/../../x.py"}]},
            "evidence app/../../x.py: not a plain path",
        ),
        ({"status": "MET"}, "MET without evidence"),
        ({"status": "MET", "evidence": []}, "MET without evidence"),
    ],
)
def test_a_label_no_run_could_credit_fails_the_load_naming_it(
    tmp_path: Path, entry: dict[str, object], message: str
) -> None:
    """Evidence outside the repository, or a MET without any, is refused at load in one line
    naming the label and the file, never silently demoted by the validator."""
    path = write(tmp_path, {"runs": {"mini.good.r1": [{"check_id": "S1-AC1-I1", **entry}]}})
    with pytest.raises(InputError, match=re.escape(message)) as err:
        LabelsJudge(path)
    text = err.value.one_line()
    assert "runs[mini.good.r1][0] (S1-AC1-I1)" in text and str(path) in text
    assert "\n" not in text and err.value.fix


@pytest.mark.parametrize(
    ("cited", "reason"),
    [
        ({**CITED, "path": "app/absent.py"}, "app/absent.py: no such text file at head"),
        ({**CITED, "start_line": 900, "end_line": 900}, "beyond the end of the file"),
        ({**CITED, "quote": "return 'nothing of the kind'"}, "quoted text is not in that range"),
    ],
)
def test_a_met_label_whose_evidence_this_head_lacks_is_unscored_with_the_reason(
    tmp_path: Path, cited: dict[str, object], reason: str
) -> None:
    """A cited file or line this run's head lacks, or a quote that does not match, depends on
    the run: the MET label is UNSCORED for it with the reason, not demoted to UNMET (its
    searches would otherwise make the validator's demotion a verdict nobody gave)."""
    searches = [{"pattern": "greet", "scope": "app/**", "hits": 1}]
    label = {"check_id": "S1-AC1-I1", "status": "MET", "evidence": [cited], "searches": searches}
    request = demo_request(checks=DEMO_CHECKS[:1])
    (verdict,) = LabelsJudge(write(tmp_path, {"verdicts": [label]})).score(request)
    assert verdict.status == "UNSCORED" and "evidence-invalid" in verdict.flags
    assert reason in verdict.rationale and "gold.yaml" in verdict.rationale
    checked = validate_verdict(verdict, request.snapshot, set(request.diff_paths))
    assert checked.status == "UNSCORED"
    # One wrong citation among right ones is still a label for other code.
    label["evidence"] = [LABELS["verdicts"][0]["evidence"][0], cited]
    (verdict,) = LabelsJudge(write(tmp_path, {"verdicts": [label]}, "two.yaml")).score(request)
    assert verdict.status == "UNSCORED"
