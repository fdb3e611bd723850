"""`evalflow cache stats|prune|clear`: real counts from a scoring run against the fake API,
the three prune rules, a confirmed clear, a one-line error without a rule, no Dagster."""

from __future__ import annotations

import io
import json
import os
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest

from evalflow.cli import main
from evalflow.io.registry import REGISTRY_TABLE
from evalflow.judges.cache import ResponseCache, entry_files
from evalflow.storage.warehouse import Warehouse
from evalflow_tests.cli.test_cli_light import run_light
from evalflow_tests.judges.fake_anthropic import (
    TEST_KEY,
    FakeAnthropic,
    claude_judge,
    demo_request,
    grep_then_submit,
)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


@pytest.fixture
def scored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, float]:
    """A warehouse whose Claude cache holds one scoring run, replayed once: (root, $ saved)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    root = tmp_path / "wh"
    cache_dir = root / "cache"
    with FakeAnthropic(grep_then_submit) as fake:
        claude_judge(fake, cache_dir).score(demo_request())
        again = claude_judge(fake, cache_dir)
        again.score(demo_request())
    replayed = again.drain_usage()
    assert len(replayed) == 8 and all(r.cached for r in replayed)
    return root, sum(r.usd for r in replayed)


def _stats(capsys: pytest.CaptureFixture[str], root: Path) -> list[dict]:
    code, out, err = run_cli(capsys, "cache", "stats", "--warehouse", str(root), "--json")
    assert code == 0, err
    return json.loads(out)


def test_stats_counts_entries_hits_misses_and_dollars_saved(
    scored: tuple[Path, float], capsys: pytest.CaptureFixture[str]
) -> None:
    root, saved = scored
    files = list(entry_files(root / "cache" / "anthropic"))
    [row] = _stats(capsys, root)
    assert row["backend"] == "anthropic" and row["entries"] == len(files) == 8
    assert row["bytes"] == sum(f.stat().st_size for f in files)
    assert (row["hits"], row["misses"], row["hit_rate"]) == (8, 8, 0.5)
    assert row["saved_usd"] == pytest.approx(saved, rel=1e-12) and saved > 0
    code, out, _ = run_cli(capsys, "cache", "stats", "--warehouse", str(root))
    assert code == 0 and "anthropic" in out and "saved_usd" in out


def test_stats_of_an_empty_warehouse_is_empty_not_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _stats(capsys, tmp_path / "none") == []
    code, _, err = run_cli(capsys, "cache", "stats", "--warehouse", str(tmp_path / "none"))
    assert code == 0 and "no response cache yet" in err


def test_prune_by_prompt_version_age_and_registration(
    scored: tuple[Path, float], capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = scored
    cache = ResponseCache(root / "cache" / "anthropic")
    cache.put("ab" * 32, {"content": []}, {"prompt_version": "claude-judge-1", "run_key": "x"})
    cache.put("cd" * 32, {"content": []})  # stored before entries carried meta
    args = ("cache", "prune", "--warehouse", str(root), "--json")
    sizes = [cache.path(k).stat().st_size for k in ("ab" * 32, "cd" * 32)]
    code, out, err = run_cli(capsys, *args, "--other-prompt-versions")
    assert code == 0, err
    assert json.loads(out) == [
        {"backend": "anthropic", "removed": 2, "freed_bytes": sum(sizes), "kept": 8}
    ]
    assert "ab" * 32 not in cache and "cd" * 32 not in cache

    old = next(entry_files(cache.root))
    week_ago = time.time() - 8 * 86400
    os.utime(old, (week_ago, week_ago))
    code, out, _ = run_cli(capsys, *args, "--older-than", "7")
    assert json.loads(out)[0]["removed"] == 1 and not old.exists()

    warehouse = Warehouse(str(root))
    frame = pd.DataFrame(
        [{"run_key": "mini.good.r1", "benchmark": "mini", "framework": "good",
          "manifest_path": "/x/run.yaml"}]
    )  # fmt: skip
    warehouse.write(REGISTRY_TABLE, frame, "mini.good.r1")
    code, out, _ = run_cli(capsys, *args, "--unregistered-runs")
    assert json.loads(out)[0]["removed"] == 0  # every entry is of the registered run
    shutil.rmtree(warehouse.table_dir(REGISTRY_TABLE))  # mini.good.r1 is unregistered
    warehouse.write(REGISTRY_TABLE, frame.assign(run_key="other.run.r1"), "other.run.r1")
    code, out, _ = run_cli(capsys, *args, "--unregistered-runs")
    assert [(r["removed"], r["kept"]) for r in json.loads(out)] == [(7, 0)]


def test_prune_without_a_rule_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(capsys, "cache", "prune", "--warehouse", str(tmp_path))
    assert code == 2 and err.count("\n") == 1 and "--older-than DAYS" in err


def test_clear_asks_first_unless_yes(
    scored: tuple[Path, float], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = scored
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    code, _, err = run_cli(capsys, "cache", "clear", "--warehouse", str(root))
    assert code == 130 and "Delete 8 cached responses" in err
    assert _stats(capsys, root)[0]["entries"] == 8
    code, out, _ = run_cli(capsys, "cache", "clear", "--warehouse", str(root), "--yes")
    assert code == 0 and "cleared 8 entries" in out
    assert _stats(capsys, root) == []


def test_cache_commands_never_import_dagster(tmp_path: Path) -> None:
    env = {"EVALFLOW_WAREHOUSE": str(tmp_path / "wh"), "DAGSTER_HOME": ""}
    for args in (("cache", "stats", "--json"), ("cache", "prune", "--unregistered-runs")):
        rc, err, loaded = run_light(*args, env=env)
        assert rc == 0, err
        assert "dagster" not in loaded
