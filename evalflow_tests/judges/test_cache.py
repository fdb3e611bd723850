"""The content-addressed response cache: keys, layout, atomic writes, bad entries."""

from __future__ import annotations

import json
from pathlib import Path

from evalflow.judges.cache import ResponseCache, cache_key

PARAMS = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 10}


def test_key_depends_on_every_input_and_not_on_dict_order() -> None:
    base = cache_key("m", "p1", PARAMS, 1)
    assert len(base) == 64 and int(base, 16) >= 0
    assert cache_key("m", "p1", dict(reversed(list(PARAMS.items()))), 1) == base
    others = {
        cache_key("m", "p1", PARAMS, 2),
        cache_key("m", "p2", PARAMS, 1),
        cache_key("m2", "p1", PARAMS, 1),
        cache_key("m", "p1", {**PARAMS, "max_tokens": 11}, 1),
    }
    assert base not in others and len(others) == 4


def test_round_trip_layout_and_no_temp_files(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "anthropic")
    key = cache_key("m", "p1", PARAMS, 1)
    assert cache.get(key) is None and key not in cache
    cache.put(key, {"content": [{"type": "text", "text": "ok"}]})
    assert cache.path(key) == tmp_path / "anthropic" / key[:2] / f"{key}.json"
    assert cache.get(key) == {"content": [{"type": "text", "text": "ok"}]}
    assert key in cache
    assert [p.name for p in cache.path(key).parent.iterdir()] == [f"{key}.json"]
    cache.put(key, {"content": []})
    assert cache.get(key) == {"content": []}


def test_corrupt_or_foreign_entries_are_misses(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    key = cache_key("m", "p1", PARAMS, 1)
    cache.path(key).parent.mkdir(parents=True)
    cache.path(key).write_text("{not json")
    assert cache.get(key) is None
    cache.path(key).write_text(json.dumps({"key": "other", "response": {}}))
    assert cache.get(key) is None


def test_meta_travels_with_the_entry_and_entries_without_it_read_empty(tmp_path: Path) -> None:
    from evalflow.judges.cache import ResponseCache

    cache = ResponseCache(tmp_path)
    key = cache_key("m", "p1", PARAMS, 1)
    cache.put(key, {"content": []}, {"prompt_version": "p1", "batch": True})
    assert cache.get_with_meta(key) == ({"content": []}, {"prompt_version": "p1", "batch": True})
    cache.put(key, {"content": []})
    assert cache.get_with_meta(key) == ({"content": []}, {})
    assert cache.get_with_meta("0" * 64) is None


def test_counters_are_appended_and_summed_and_a_cut_line_is_dropped(tmp_path: Path) -> None:
    from evalflow.judges.cache import STATS_FILE, cache_roots, cache_stats

    cache = ResponseCache(tmp_path / "anthropic")
    cache.put("ab" * 32, {"content": []})
    uncounted = cache_stats(cache.root)  # nothing counted here: unmeasured, never 0
    assert (uncounted.entries, uncounted.hits, uncounted.misses) == (1, None, None)
    assert uncounted.saved_usd is None and uncounted.hit_rate is None
    cache.record_miss()
    cache.record_hit(0.25)
    cache.record_hit(0.5)
    with open(cache.root / STATS_FILE, "a") as handle:
        handle.write('{"event":"hi')  # a crash mid-line
    stats = cache_stats(cache.root)
    assert (stats.hits, stats.misses, stats.saved_usd, stats.entries) == (2, 1, 0.75, 1)
    assert stats.hit_rate == 2 / 3
    (tmp_path / "budgets").mkdir()  # not a cache: never listed
    assert cache_roots(tmp_path) == [cache.root]


def test_prune_rules_and_clear(tmp_path: Path) -> None:
    from evalflow.judges.cache import clear, entry_files, prune

    cache = ResponseCache(tmp_path / "anthropic")
    keys = [cache_key("m", "p1", PARAMS, run) for run in (1, 2, 3)]
    cache.put(keys[0], {"content": []}, {"prompt_version": "p1", "run_key": "a"})
    cache.put(keys[1], {"content": []}, {"prompt_version": "p0", "run_key": "a"})
    cache.put(keys[2], {"content": []}, {"prompt_version": "p1", "run_key": "gone"})
    (cache.root / "batches").mkdir()
    (cache.root / "batches" / "a.run1.json").write_text("{}")
    assert prune(cache.root, keep_prompt_versions={"p1"}).removed == 1
    assert prune(cache.root, registered_runs={"a"}).removed == 1
    assert prune(cache.root, older_than_days=1).removed == 0
    assert prune(cache.root, older_than_days=1, now=1e12).removed == 1
    assert list(entry_files(cache.root)) == []
    assert (cache.root / "batches" / "a.run1.json").exists()  # prune leaves batch state
    cache.put(keys[0], {"content": []})
    result = clear(cache.root)
    assert (result.removed, result.kept) == (1, 0) and not cache.root.exists()


def test_pruning_unregistered_runs_keeps_plugineval_and_drafter_entries(tmp_path: Path) -> None:
    from evalflow.judges.cache import prune

    cache = ResponseCache(tmp_path / "anthropic")
    for run, run_key in enumerate(
        ["plugineval:my-skill", "plugineval-elo", "draft:trialist", "old.run.r1"], start=1
    ):
        cache.put(cache_key("m", "p1", PARAMS, run), {"content": []}, {"run_key": run_key})
    result = prune(cache.root, registered_runs={"live.run.r1"})
    assert (result.removed, result.kept) == (1, 3)  # only the unregistered framework run
