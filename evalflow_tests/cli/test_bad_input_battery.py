"""Bad input, table-driven (issue 30 item 1): every case exits 2 with one line on stderr
naming what is wrong, and no traceback — never 0 with a silently changed meaning, never 3.

Cases cover run manifests (`register`), baselines and benchmark settings (`baseline check`),
labels files, suite files (`leaderboard --suite`), the environment and CLI options. All run
in-process and stop before any Dagster run, so the battery is fast."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evalflow.cli import main
from evalflow_tests.mini_benchmark import BASELINE

GOOD_MANIFEST = {
    "benchmark": "mini",
    "framework": "good",
    "run": "r1",
    "source": "../sources/good",
    "base": "base",
    "head": "head",
}

# key → a value that must be refused (the manifest is otherwise valid).
MANIFEST_VALUES: list[tuple[str, object]] = [
    *[(key, bad) for key in ("benchmark", "framework", "run")
      for bad in ("", "a b", "../x", "x/y", "x" * 65, "x" * 10_000, None, ["a"], "é")],
    ("base", None), ("head", None), ("base", ["a"]),
    ("repo", "/no/such/repository"),
    ("source", None),
    ("gate_limits", {"timeout_s": float("inf")}),
    ("gate_limits", {"timeout_s": float("nan")}),
    ("gate_limits", {"timeout_s": "1e309"}),
    ("gate_limits", {"timeout_s": -1}),
    ("gate_limits", {"timeout_s": 0}),
    ("gate_limits", {"timeout_s": "soon"}),
    ("gate_limits", {"memory_bytes": float("inf")}),
    ("gate_limits", {"memory_bytes": 1.5}),
    ("gate_limits", {"disk_bytes": -5}),
    ("gate_limits", {"no_such_limit": 1}),
    ("gate_limits", ["timeout_s"]),
    ("gate_env", {"1X": "a"}),
    ("gate_env", {"A-B": "a"}),
    ("gate_env", {"": "a"}),
    ("gate_env", {"A": "nul\0byte"}),
    ("gate_env", {"A": ["list"]}),
    ("gate_env", ["A"]),
    ("setup", ""),
    ("setup", []),
    ("setup", [""]),
    ("setup", ["  "]),
    ("setup", {"cmd": "x"}),
    ("framework_cost_usd", -1),
    ("framework_cost_usd", float("inf")),
    ("framework_cost_usd", float("nan")),
    ("framework_cost_usd", "1e309"),
    ("framework_cost_usd", "cheap"),
    ("judge", "nope"),
    ("judge", "panel:"),
    ("judge", "panel:heuristic"),
    ("judge", "panel:labels,heuristic"),
    ("judge", "panel:heuristic,heuristic"),
    ("judge", "HEURISTIC"),
    ("judge", 3),
    ("spec_dir", "../outside"),
    ("spec_dir", "/etc"),
    ("spec_dir", "a/../../b"),
    ("gates", {"unit": "pytest", "deploy": "x"}),
    ("gates", ["pytest"]),
    ("gates", {"unit": ["pytest"]}),
    ("require_isolation", "maybe"),
    ("unknown_key", 1),
    *[(key, bad) for key in ("baseline", "spec_dir", "skills_dir", "root")
      for bad in ("a\0b", "x" * 5_000, "d/" + "x" * 300)],
    ("source", "a\0b"), ("source", "x" * 5_000),
]  # fmt: skip

MANIFEST_TEXTS: list[tuple[str, str]] = [
    *[(f"duplicate {key}", yaml.safe_dump(GOOD_MANIFEST) + f"{key}: {value}\n")
      for key, value in GOOD_MANIFEST.items()],
    ("duplicate nested", yaml.safe_dump(GOOD_MANIFEST) + "gates:\n  unit: a\n  unit: b\n"),
    ("duplicate env", yaml.safe_dump(GOOD_MANIFEST) + "gate_env:\n  A: '1'\n  A: '2'\n"),
    ("empty", ""),
    ("a list", "- a\n- b\n"),
    ("a scalar", "hello\n"),
    ("null", "null\n"),
    ("tab indent", "benchmark: mini\n\tframework: good\n"),
    ("unclosed", "benchmark: [mini\n"),
    ("bad alias", "benchmark: *nowhere\n"),
    ("python tag", "benchmark: !!python/object/apply:os.system ['true']\n"),
    ("colon soup", "::\n"),
]  # fmt: skip

BASELINE_DOC = yaml.safe_load(BASELINE)


def _baseline_with(change) -> str:
    doc = yaml.safe_load(BASELINE)
    change(doc)
    return yaml.safe_dump(doc, sort_keys=False)


def _check(doc: dict) -> dict:
    return doc["acs"][0]["checks"][0]


BASELINE_TEXTS: list[tuple[str, str]] = [
    ("duplicate benchmark", BASELINE.replace("benchmark: mini\n", "benchmark: mini\nprd: x\n")),
    ("duplicate check key", BASELINE.replace("kind: I\n", "kind: I\n        kind: T\n", 1)),
    ("empty", ""),
    ("a list", "- a\n"),
    ("unclosed", "acs: [\n"),
    ("no acs", "benchmark: mini\nprd: prd.md\n"),
    ("missing prd", BASELINE.replace("prd: prd.md", "prd: nope.md")),
    ("prd outside", BASELINE.replace("prd: prd.md", "prd: /etc/passwd")),
    ("bad kind", _baseline_with(lambda d: _check(d).update(kind="X"))),
    ("bad level", _baseline_with(lambda d: d["acs"][0]["checks"][1].update(level="galaxy"))),
    ("no proposition", _baseline_with(lambda d: _check(d).pop("proposition"))),
    ("duplicate check id", _baseline_with(
        lambda d: d["acs"][1]["checks"][0].update(id="S1-AC1-I1"))),
    ("unknown ac", _baseline_with(lambda d: d["acs"][0].update(id="S9-AC9"))),
    ("ac text differs", _baseline_with(lambda d: d["acs"][0].update(text="Something else."))),
    ("bad probe regex", _baseline_with(
        lambda d: _check(d)["probes"][0].update(pattern="(unclosed"))),
    ("bad probe kind", _baseline_with(lambda d: _check(d)["probes"][0].update(kind="magic"))),
    ("probes not a list", _baseline_with(lambda d: _check(d).update(probes="x"))),
    ("checks not a list", _baseline_with(lambda d: d["acs"][0].update(checks={"a": 1}))),
    ("unknown key", _baseline_with(lambda d: d.update(colour="blue"))),
]  # fmt: skip

BENCHMARK_SETTINGS: list[tuple[str, str]] = [
    ("duplicate setup", "setup: a\nsetup: b\n"),
    ("inf limit", "gate_limits:\n  timeout_s: .inf\n"),
    ("nan limit", "gate_limits:\n  timeout_s: .nan\n"),
    ("unknown limit", "gate_limits:\n  colour: 1\n"),
    ("bad env name", "gate_env:\n  1X: a\n"),
    ("empty setup", "setup: ''\n"),
    ("a list", "- setup\n"),
    ("unknown key", "colour: blue\n"),
    ("unclosed", "setup: [\n"),
]

LABEL_TEXTS: list[tuple[str, bytes]] = [
    ("not utf-8", b"runs:\n  mini.good.r1: \xff\xfe\n"),
    ("duplicate key", b"runs: {}\nruns: {}\n"),
    ("unclosed", b"runs: [\n"),
    ("a list", b"- a\n"),
    ("empty", b""),
    *[
        (
            f"evidence path {where}",
            b"verdicts:\n- {check_id: C1, status: MET, evidence: "
            b"[{path: '" + where + b"', start_line: 1, end_line: 1}]}\n",
        )
        for where in (b"../x.py", b"/etc/passwd", b"a/../../x.py", b"./a/../b.py", b"..")
    ],
    ("MET without evidence", b"verdicts:\n- {check_id: C1, status: MET}\n"),
    ("MET with empty evidence", b"runs:\n  a.b.c: [{check_id: C1, status: MET, evidence: []}]\n"),
]

SUITE_TEXTS: list[tuple[str, str]] = [
    ("duplicate key", "name: s\nname: t\nbenchmarks: [mini]\n"),
    ("unclosed", "benchmarks: [\n"),
    ("a list", "- mini\n"),
    ("empty", ""),
    ("not utf-8", "\udcff"),
]


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


def assert_one_line_exit_2(code: int, err: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert len(lines) == 1 or (lines[-1].startswith("Error:") and "Usage:" in err), err
    assert "errors.pydantic.dev" not in err, err


@pytest.fixture
def bench(mini: Path, warehouse_dir: Path) -> Path:
    return mini


@pytest.mark.parametrize(("key", "value"), MANIFEST_VALUES, ids=lambda v: repr(v)[:30])
def test_a_bad_manifest_value(bench: Path, capsys, key: str, value: object) -> None:
    path = bench / "runs" / "bad.yaml"
    path.write_text(yaml.safe_dump({**GOOD_MANIFEST, key: value}), encoding="utf-8")
    assert_one_line_exit_2(*run_cli(capsys, "register", str(path))[::2])


@pytest.mark.parametrize("repo", ["a\0b", "x" * 5_000, "d/" + "x" * 300, "../prd.md", "../sources"])
def test_a_bad_repo_path(bench: Path, capsys, repo: str) -> None:
    """Not a git repository, or no path at all (a NUL byte, ENAMETOOLONG were exit 3)."""
    path = bench / "runs" / "bad.yaml"
    doc = {k: v for k, v in GOOD_MANIFEST.items() if k != "source"}
    path.write_text(yaml.safe_dump({**doc, "repo": repo}), encoding="utf-8")
    assert_one_line_exit_2(*run_cli(capsys, "register", str(path))[::2])


@pytest.mark.parametrize(("name", "text"), MANIFEST_TEXTS, ids=[c[0] for c in MANIFEST_TEXTS])
def test_a_bad_manifest_text(bench: Path, capsys, name: str, text: str) -> None:
    path = bench / "runs" / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    assert_one_line_exit_2(*run_cli(capsys, "register", str(path))[::2])


@pytest.mark.parametrize("data", [b"benchmark: \xff\n", b"\x00\x01", b"\xfe\xff\x00b"])
def test_a_manifest_that_is_not_utf_8(bench: Path, capsys, data: bytes) -> None:
    path = bench / "runs" / "bad.yaml"
    path.write_bytes(data)
    assert_one_line_exit_2(*run_cli(capsys, "register", str(path))[::2])


def test_a_missing_manifest(bench: Path, capsys) -> None:
    assert_one_line_exit_2(*run_cli(capsys, "register", str(bench / "nope.yaml"))[::2])


@pytest.mark.parametrize(("name", "text"), BASELINE_TEXTS, ids=[c[0] for c in BASELINE_TEXTS])
def test_a_bad_baseline(bench: Path, capsys, name: str, text: str) -> None:
    path = bench / "_ac-baseline.yaml"
    path.write_text(text, encoding="utf-8")
    assert_one_line_exit_2(*run_cli(capsys, "baseline", "check", str(path))[::2])


def test_an_edited_frozen_baseline(bench: Path, capsys) -> None:
    path = bench / "_ac-baseline.yaml"
    assert run_cli(capsys, "baseline", "freeze", str(path))[0] == 0
    path.write_text(BASELINE.replace("bye() exists", "bye() is defined"), encoding="utf-8")
    assert_one_line_exit_2(*run_cli(capsys, "baseline", "check", str(path))[::2])


@pytest.mark.parametrize(
    ("name", "text"), BENCHMARK_SETTINGS, ids=[c[0] for c in BENCHMARK_SETTINGS]
)
def test_bad_benchmark_settings(bench: Path, capsys, name: str, text: str) -> None:
    (bench / "_benchmark.yaml").write_text(text, encoding="utf-8")
    code, _, err = run_cli(capsys, "baseline", "check", str(bench / "_ac-baseline.yaml"))
    assert_one_line_exit_2(code, err)


@pytest.mark.parametrize(("name", "data"), LABEL_TEXTS, ids=[c[0] for c in LABEL_TEXTS])
def test_a_bad_labels_file(tmp_path: Path, name: str, data: bytes) -> None:
    from evalflow.cli.failures import exit_code_for
    from evalflow.errors import InputError
    from evalflow.judges.labels import load_labels

    path = tmp_path / "labels.yaml"
    path.write_bytes(data)
    with pytest.raises(InputError) as error:
        load_labels(path)
    assert exit_code_for(error.value) == 2
    assert "\n" not in error.value.one_line()


@pytest.mark.parametrize(("name", "text"), SUITE_TEXTS, ids=[c[0] for c in SUITE_TEXTS])
def test_a_bad_suite_file(bench: Path, capsys, name: str, text: str) -> None:
    path = bench / "suite.yaml"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    assert_one_line_exit_2(*run_cli(capsys, "leaderboard", "--suite", str(path))[::2])


CLI_CASES: list[tuple[str, ...]] = [
    ("query", ""),
    ("query", "   "),
    ("query", ";"),
    ("score", "--max-cost", "nan", "x.yaml"),
    ("score", "--max-cost", "inf", "x.yaml"),
    ("score", "--max-cost", "1e309", "x.yaml"),
    ("score", "--max-cost", "-1", "x.yaml"),
    ("score", "--max-cost", "lots", "x.yaml"),
    ("score", "--judge", "nope", "x.yaml"),
    ("score", "--judge", "panel:", "x.yaml"),
    ("score", "no-such-manifest.yaml"),
    ("materialize", "--partition", "no.such.key"),
    ("materialize", "--executor", "warp"),
    ("materialize", "--workers", "0"),
    ("leaderboard", "--suite", "no-such-suite"),
    ("leaderboard", "--suite", "x", "--benchmark", "y"),
    ("baseline", "check", "/no/such/baseline.yaml"),
    ("no-such-command",),
]


@pytest.mark.parametrize("args", CLI_CASES, ids=[" ".join(c) or "empty" for c in CLI_CASES])
def test_a_bad_command_line(bench: Path, capsys, args: tuple[str, ...]) -> None:
    assert_one_line_exit_2(*run_cli(capsys, *args)[::2])


ENV_CASES: list[tuple[str, str, tuple[str, ...]]] = [
    ("SOURCE_DATE_EPOCH", "yesterday", ("query", "SELECT 1")),
    ("SOURCE_DATE_EPOCH", "1.5", ("query", "SELECT 1")),
    ("DAGSTER_HOME", "relative/home", ("materialize",)),
    ("DAGSTER_HOME", "/no/such/home", ("materialize",)),
    ("EVALFLOW_JUDGE", "nope", ("score", "{manifest}")),
    ("EVALFLOW_MAX_COST_USD", "lots", ("score", "{manifest}")),
    *[(bound, bad, ("score", "{manifest}"))
      for bound in ("EVALFLOW_GIT_TIMEOUT_S", "EVALFLOW_PREPARE_TIMEOUT_S", "EVALFLOW_MAX_FILES",
                    "EVALFLOW_MAX_FILE_BYTES", "EVALFLOW_MAX_PATH_DEPTH", "EVALFLOW_MAX_READ_BYTES",
                    "EVALFLOW_TOOL_CALL_S", "EVALFLOW_TOOL_RE2_PROGRAM")
      for bad in ("lots", "0", "inf")],
    ("EVALFLOW_MAX_FILES", "1.5", ("register", "{manifest}")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "value", "args"), ENV_CASES, ids=[f"{c[0]}={c[1]}" for c in ENV_CASES]
)
def test_a_bad_environment_value(bench: Path, capsys, monkeypatch, name, value, args) -> None:
    monkeypatch.setenv(name, value)
    manifest = str(bench / "runs" / "good.yaml")
    args = tuple(a.replace("{manifest}", manifest) for a in args)
    assert_one_line_exit_2(*run_cli(capsys, *args)[::2])


@pytest.mark.parametrize("judge", ["anthropic", "hybrid", "panel:heuristic,anthropic", "labels"])
def test_a_judge_that_cannot_be_made_fails_before_any_run(
    bench: Path, capsys, monkeypatch, judge: str
) -> None:
    """No key (or no labels file): one line before a Dagster run starts (issue 27: the run
    and rank_runs launched, the error printed twice, "the other runs were stored")."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("EVALFLOW_LABELS", raising=False)
    manifest = str(bench / "runs" / "good.yaml")
    code, _, err = run_cli(capsys, "score", "--judge", judge, manifest)
    assert_one_line_exit_2(code, err)
    assert "materialising" not in err and "rank_runs" not in err


@pytest.mark.parametrize("debug", ["", "1"])
def test_exit_codes_do_not_depend_on_evalflow_debug(capsys, monkeypatch, debug: str) -> None:
    from evalflow.cli.failures import exit_code_for

    monkeypatch.setenv("EVALFLOW_DEBUG", debug)
    assert exit_code_for(KeyError("bug")) == 3
    assert "KeyError" in capsys.readouterr().err
