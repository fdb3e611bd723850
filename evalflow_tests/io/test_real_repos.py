"""The vendored real-world benchmark (hello_spec_kit) loads, and the safe cloner is safe.

The slow test runs `benchmarks/real_repos/validate.py` on it: the heuristic judge against the
hand-made gold labels (docs/validity.md).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from evalflow.cli import main
from evalflow.errors import InputError
from evalflow.io.inputs import load_benchmark, load_manifest
from evalflow.io.real_repos import (
    DATA_DIR,
    VENDORED,
    derived_clone,
    safe_clone,
    vendored_checkout,
)
from evalflow.judges.labels import load_labels

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "data" / "benchmarks" / "hello_spec_kit"
MANIFEST = BENCH / "runs" / "speckit-f002.yaml"
GOLD = BENCH / "gold" / "speckit-f002.labels.yaml"
BASE = "1b00f0db7faee504dbfe0a727b40397655fb975e"
HEAD = "0be8f6e7b97758bd17b71b040abe8e1905bdeb5c"


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_vendored_bundle_clones_without_a_working_tree() -> None:
    checkout = vendored_checkout("hello_spec_kit")
    # Nothing of the third-party repository is written to disk as files, only git objects.
    assert [p.name for p in checkout.iterdir()] == [".git"]
    for sha in (VENDORED["hello_spec_kit"], BASE, HEAD):
        assert _git(checkout, "cat-file", "-t", sha) == "commit"
    assert (DATA_DIR / "hello_spec_kit" / "LICENSE").read_text().startswith("MIT License")


def test_manifest_points_at_the_checkout_and_baseline_check_passes(capsys) -> None:
    checkout = vendored_checkout("hello_spec_kit")
    loaded = load_manifest(MANIFEST)
    assert loaded.manifest.repo is not None
    assert loaded.resolve(loaded.manifest.repo) == checkout.resolve()
    with pytest.raises(SystemExit) as done:
        main(["baseline", "check", str(BENCH / "_ac-baseline.yaml")])
    out, err = capsys.readouterr()
    assert done.value.code in (0, None), err
    assert out.startswith("ok: 9 ACs, 13 I-checks, 15 T-checks")


def test_gold_labels_cover_every_check_exactly_once() -> None:
    bench = load_benchmark(BENCH / "_ac-baseline.yaml")
    check_ids = sorted(c.id for ac in bench.baseline.acs for c in ac.checks)
    labels = load_labels(GOLD)
    assert sorted(v.check_id for v in labels.verdicts) == check_ids
    assert labels.run_key == "hello_spec_kit.speckit.f002"
    for verdict in labels.verdicts:
        # SPEC core rules 1 and 2: MET cites evidence, UNMET records its searches.
        assert verdict.evidence if verdict.status == "MET" else verdict.searches, verdict


def _mirror_with_a_missing_blob(tmp_path: Path) -> tuple[Path, str, str]:
    """A bare mirror whose two commits reference a blob that is absent (as the fetch tool leaves
    out a repository's largest files) and whose tree holds a symlink pointing out of it."""
    src = tmp_path / "src"
    src.mkdir()
    _git(src, "init", "--quiet")
    (src / "app").mkdir()
    (src / "app" / "main.ts").write_text("export const a = 1;\n")
    (src / "node_modules").mkdir()
    (src / "node_modules" / "big.bin").write_bytes(b"x" * 1000)
    (src / "app" / "escape").symlink_to("/etc/passwd")
    ident = ["-c", "user.name=t", "-c", "user.email=t@t"]
    _git(src, "add", "-A")
    _git(src, *ident, "commit", "--quiet", "-m", "base")
    base = _git(src, "rev-parse", "HEAD")
    (src / "app" / "main.ts").write_text("export const a = 2;\n")
    _git(src, "add", "-A")
    _git(src, *ident, "commit", "--quiet", "-m", "head")
    head = _git(src, "rev-parse", "HEAD")
    big = _git(src, "rev-parse", "HEAD:node_modules/big.bin")
    mirror = tmp_path / "mirror.git"
    subprocess.run(
        ["git", "clone", "--quiet", "--bare", str(src), str(mirror)], check=True, timeout=120
    )
    subprocess.run(["git", "-C", str(mirror), "repack", "-adq"], check=True, timeout=120)
    # Drop the big blob from the mirror: rewrite the pack without it.
    packs = list((mirror / "objects" / "pack").glob("*.pack"))
    keep = subprocess.run(
        [
            "git",
            "-C",
            str(mirror),
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname)",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split()
    pack = subprocess.run(
        ["git", "-C", str(mirror), "pack-objects", "--quiet", str(mirror / "objects/pack/pack")],
        input="\n".join(o for o in keep if o != big),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert pack.stdout.strip()
    for old in packs:
        old.unlink()
        old.with_suffix(".idx").unlink()
    return mirror, base, head


def test_derived_clone_reads_a_mirror_that_lacks_blobs_deterministically(tmp_path: Path) -> None:
    mirror, base, head = _mirror_with_a_missing_blob(tmp_path)
    # The control: a plain safe clone of this mirror fails.
    with pytest.raises(InputError):
        safe_clone(mirror, tmp_path / "plain", pin=head)
    paths = ("app", ":(exclude,glob)**/node_modules/**")
    first, commits = derived_clone(mirror, tmp_path / "one", commits=(base, head), paths=paths)
    _, again = derived_clone(mirror, tmp_path / "two", commits=(base, head), paths=paths)
    assert commits == again and len(commits) == 2  # same SHAs on every run
    files = _git(first, "ls-tree", "-r", "--name-only", commits[1]).split()
    assert files == ["app/main.ts"]  # node_modules excluded; the link out was not extracted
    assert _git(first, "show", f"{commits[1]}:app/main.ts") == "export const a = 2;"


def test_safe_clone_refuses_a_source_without_the_pinned_commit(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    _git(source, "init", "-q")
    (source / "f.txt").write_text("x\n")
    _git(source, "add", "f.txt")
    _git(source, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    with pytest.raises(InputError, match="pinned commit"):
        safe_clone(source, tmp_path / "dest", pin="0" * 40)
    assert not (tmp_path / "dest").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["src"]  # no staging directory left


def test_safe_clone_of_a_missing_source_is_one_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="real repository source not found"):
        safe_clone(tmp_path / "nowhere", tmp_path / "dest", pin="0" * 40)


def _validate_module():
    path = ROOT / "benchmarks" / "real_repos" / "validate.py"
    spec = importlib.util.spec_from_file_location("real_repos_validate", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_compare_counts_false_met_and_unscored() -> None:
    validate = _validate_module()
    ev = [{"path": "a.py", "start_line": 3, "end_line": 5}]
    gold = {
        "A": {"status": "MET", "evidence": ev},
        "B": {"status": "UNMET", "evidence": []},
        "C": {"status": "MET", "evidence": ev},
        "D": {"status": "MET", "evidence": ev},
        "E": {"status": "MET", "evidence": ev},
    }
    judge = {
        "A": {"status": "MET", "evidence": [{"path": "a.py", "start_line": 5, "end_line": 5}]},
        "B": {"status": "MET", "evidence": ev},
        "C": {"status": "UNSCORED", "evidence": []},
        "D": {"status": "MET", "evidence": [{"path": "b.py", "start_line": 4, "end_line": 4}]},
        # Proven by running: no file line to compare, so neither on nor off the gold's.
        "E": {"status": "MET", "evidence": [{"kind": "run", "command": "x", "output": "ok"}]},
    }
    result = validate.compare(judge, gold)
    assert result["decided"] == 4 and result["decided_share"] == 0.8
    assert result["false_met"] == ["B"] and result["false_unmet"] == []
    assert result["evidence_off"] == ["D"] and result["unscored"] == ["C"]
    assert result["by_running"] == ["E"]
    assert result["agreement"] == 3 / 4
    assert result["judge_evidence"] == {"B": ["a.py:3"], "D": ["b.py:4"]}


@pytest.mark.slow
def test_heuristic_judge_makes_no_false_met_on_the_vendored_repo(capsys) -> None:
    validate = _validate_module()
    # Preconditions fail the test outright (pytest.fail), never as the expected failure.
    if validate.main(["--only", "hello_spec_kit", "--json"]) != 0:
        pytest.fail(f"validate.py failed: {capsys.readouterr().err}")
    (result,) = json.loads(capsys.readouterr().out)
    if result["final"]["gold"] != 0.66 or result["final"]["gold_complete"] is not True:
        pytest.fail(f"the gold labels no longer reproduce Final 0.66: {result['final']}")
    assert result["false_met"] == [], result


def test_every_mirrored_run_has_complete_gold_against_its_benchmarks_baseline() -> None:
    # No mirror needed: manifests, baselines and gold files are our own committed files.
    validate = _validate_module()
    mirrored = [b for b in validate.BENCHMARKS if b.mirror]
    baselines: dict[str, set[Path]] = {}
    for bench in mirrored:
        loaded = load_manifest(bench.manifest)
        assert loaded.manifest.run_key == bench.run_key
        baseline = loaded.resolve(loaded.manifest.baseline)
        baselines.setdefault(loaded.manifest.benchmark, set()).add(baseline)
        benchmark = load_benchmark(baseline)
        check_ids = sorted(c.id for ac in benchmark.baseline.acs for c in ac.checks)
        labels = load_labels(bench.labels)
        assert labels.run_key == bench.run_key
        assert sorted(v.check_id for v in labels.verdicts) == check_ids, bench.name
        for verdict in labels.verdicts:
            assert verdict.evidence if verdict.status == "MET" else verdict.searches, verdict
        if bench.side_gold is not None:
            side = yaml.safe_load(bench.side_gold.read_text(encoding="utf-8"))
            assert side["scope"]["verdict"] and 0 <= side["elicitation"]["e_recall"] <= 1
    # Every run of a benchmark is judged by its one frozen baseline (one file, never a copy).
    assert len(baselines["lva_conversation_storage"]) == 1
    assert len(baselines["lva_llm_service"]) == 1
    assert len(baselines["task_planner"]) == 1
    assert len(baselines["papertrail"]) == 1
    assert {b.run_key for b in mirrored} >= {
        "lva_conversation_storage.claude-code.f006",
        "lva_conversation_storage.codex.f001",
        "lva_llm_service.claude-code.f003",
        "lva_llm_service.codex.f001",
        "lva_llm_service.gemini-cli.f003",
        "task_planner.speckit.demo",
        "task_planner.bmad.demo",
        "papertrail.copilot-gpt51codex.r1",
        "papertrail.copilot-opus45.r1",
        "papertrail.copilot-sonnet45.r1",
        "papertrail.cursor-kimik2.r1",
    }
