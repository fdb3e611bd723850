"""Bad input: each case is one clear error (what, where, fix) or a documented downgrade."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evalflow.domain import yaml_text
from evalflow.errors import InputError
from evalflow.io import inputs
from evalflow.io.evaluation import prepare_run
from evalflow.io.inputs import load_benchmark, load_manifest


def edit_baseline(bench: Path, change) -> Path:
    path = bench / "_ac-baseline.yaml"
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_missing_prd(mini: Path) -> None:
    (mini / "prd.md").unlink()
    with pytest.raises(InputError, match=r"prd\.md: PRD not found"):
        load_benchmark(mini / "_ac-baseline.yaml")


def test_missing_baseline(mini: Path) -> None:
    with pytest.raises(InputError, match="baseline not found"):
        load_benchmark(mini / "nope.yaml")


def test_baseline_names_an_ac_the_prd_lacks(mini: Path) -> None:
    path = edit_baseline(mini, lambda d: d["acs"][0].update(id="S9-AC1"))
    with pytest.raises(InputError, match="AC S9-AC1 is not in the PRD"):
        load_benchmark(path)


def test_duplicate_check_ids(mini: Path) -> None:
    def dup(d: dict) -> None:
        d["acs"][1]["checks"][0]["id"] = d["acs"][0]["checks"][0]["id"]

    with pytest.raises(InputError, match="check id S1-AC1-I1 appears twice"):
        load_benchmark(edit_baseline(mini, dup))


def test_ac_without_a_t_check(mini: Path) -> None:
    path = edit_baseline(mini, lambda d: d["acs"][0]["checks"].pop())
    with pytest.raises(InputError, match=r"AC S1-AC1 has no test \(T\) check"):
        load_benchmark(path)


def test_invalid_level(mini: Path) -> None:
    path = edit_baseline(mini, lambda d: d["acs"][0]["checks"][1].update(level="smoke"))
    with pytest.raises(
        InputError, match=r"invalid baseline: acs\[S1-AC1\]\.checks\[S1-AC1-T1\]\.level"
    ):
        load_benchmark(path)


def test_empty_prd(mini: Path) -> None:
    (mini / "prd.md").write_text("")
    with pytest.raises(InputError, match="no user stories found"):
        load_benchmark(mini / "_ac-baseline.yaml")


def test_non_utf8_prd(mini: Path) -> None:
    (mini / "prd.md").write_bytes("## Story S1: Café (P0)\n- x\n".encode("latin-1"))
    with pytest.raises(InputError, match="PRD is not UTF-8 text"):
        load_benchmark(mini / "_ac-baseline.yaml")


def test_bad_yaml_names_the_line(mini: Path) -> None:
    (mini / "runs" / "good.yaml").write_text("benchmark: mini\nframework: [oops\n")
    with pytest.raises(InputError, match=r"good\.yaml:\d+: invalid YAML"):
        load_manifest(mini / "runs" / "good.yaml")


def test_manifest_needs_exactly_one_location(mini: Path) -> None:
    path = mini / "runs" / "good.yaml"
    data = yaml.safe_load(path.read_text())
    data["repo"] = "/somewhere"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(InputError, match="set exactly one of 'repo'"):
        load_manifest(path)


def _repo_manifest(mini: Path, repo: Path, **extra: str) -> Path:
    path = mini / "runs" / "external.yaml"
    manifest = {"benchmark": "mini", "framework": "ext", "run": "r1", "repo": str(repo),
                "base": "base", "head": "head", **extra}  # fmt: skip
    path.write_text(yaml.safe_dump(manifest))
    return path


def test_missing_repo(mini: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="repository not found"):
        prepare_run(_repo_manifest(mini, tmp_path / "gone"), tmp_path / "wh")


def test_directory_that_is_not_a_repo(mini: Path, tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(InputError, match="not a git repository"):
        prepare_run(_repo_manifest(mini, tmp_path / "plain"), tmp_path / "wh")


def test_unknown_base_commit(mini: Path, tmp_path: Path, make_repo) -> None:
    repo = make_repo({}, {"a.py": "1\n"})
    with pytest.raises(InputError, match=r"unknown commit 'v0\.0\.0'"):
        prepare_run(_repo_manifest(mini, repo, base="v0.0.0"), tmp_path / "wh")


def test_benchmark_mismatch(mini: Path, tmp_path: Path, make_repo) -> None:
    repo = make_repo({}, {"a.py": "1\n"})
    path = _repo_manifest(mini, repo)
    path.write_text(path.read_text().replace("benchmark: mini", "benchmark: other"))
    with pytest.raises(InputError, match="differs from the baseline's 'mini'"):
        prepare_run(path, tmp_path / "wh")


def test_yaml_inputs_are_read_with_libyaml_when_pyyaml_has_it(tmp_path: Path) -> None:
    # The pure-Python loader took ~10× longer on every PRD and baseline an evaluation reads.
    assert issubclass(yaml_text._StrictLoader, yaml.CSafeLoader) == yaml.__with_libyaml__
    path = tmp_path / "x.yaml"
    path.write_text("a: [1, 2.5, 'x: y']\nb: {c: null, d: 2026-12-02}\n", encoding="utf-8")
    assert inputs.read_yaml(path, "test file") == yaml.safe_load(path.read_text())
    path.write_text("a: 1\nb: 2\na: 3\n", encoding="utf-8")
    with pytest.raises(InputError, match="duplicate key 'a'"):
        inputs.read_yaml(path, "test file")
