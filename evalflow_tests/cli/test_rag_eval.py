"""`evalflow rag-eval`: gate exit codes, JSON report, option errors."""

from __future__ import annotations

import json

from click.testing import CliRunner

from evalflow.cli.rag_eval import rag_eval

DEFAULT_DIGEST = "8c858f18ae3d70dc735650e3af3a99084f4e7825f86e0d41c053d668235c7c76"


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(rag_eval, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_default_run_passes_and_prints_a_table() -> None:
    code, out, err = _run()
    assert code == 0, err
    assert "recall@10" in out
    assert "pass" in out
    assert "nDCG@10" in out
    assert err == ""


def test_json_report() -> None:
    code, out, _ = _run("--json", "--k", "5", "--min-recall", "0.45")
    assert code == 0
    payload = json.loads(out)
    assert payload["k"] == 5
    assert payload["min_recall"] == 0.45
    assert payload["retriever"] == "exact"
    assert payload["passed"] is True
    assert payload["corpus"]["digest"] == DEFAULT_DIGEST
    assert payload["corpus"]["seed"] == 42
    assert len(payload["cases"]) == 120
    assert 0.45 <= payload["mean_recall"] <= 0.5  # 5 slots for 10 relevant chunks
    assert payload["mean_precision"] >= 0.9
    assert set(payload) >= {"mean_recall", "mean_precision", "mrr", "map", "mean_ndcg"}


def test_flipped_binary_fails_the_gate_with_one_line() -> None:
    code, _, err = _run("--retriever", "binary-flipped")
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("gate failed: mean recall@10 0.0000 < min 0.6000")


def test_flipped_binary_exit_code_without_standalone_mode() -> None:
    # evalflow.cli.main runs commands with standalone_mode=False and exits with the result.
    rc = rag_eval.main(["--retriever", "binary-flipped", "--json"], standalone_mode=False)
    assert rc == 1


def test_threshold_is_configurable() -> None:
    assert _run("--retriever", "binary", "--min-recall", "0.99")[0] == 1
    assert _run("--retriever", "binary")[0] == 0
    assert _run("--retriever", "ivf", "--json")[0] == 0


def test_other_seed_builds_another_corpus() -> None:
    code, out, _ = _run("--json", "--corpus-seed", "7")
    assert code == 0
    assert json.loads(out)["corpus"]["digest"] != DEFAULT_DIGEST


def test_bad_options_exit_2() -> None:
    code, _, err = _run("--retriever", "hnsw")
    assert code == 2
    assert "valid names: exact, binary, ivf, binary-flipped, bm25-evidence" in err
    assert _run("--min-recall", "1.5")[0] == 2
    assert _run("--k", "0")[0] == 2
    assert _run("--corpus-seed", "-1")[0] == 2


def test_evidence_retriever_gate_on_the_calibration_set() -> None:
    code, out, _ = _run("--retriever", "bm25-evidence", "--json")
    payload = json.loads(out)
    assert code == 0 and payload["passed"] and payload["mean_recall"] >= 0.6
    assert payload["retriever"] == "bm25-evidence" and len(payload["cases"]) == 38
