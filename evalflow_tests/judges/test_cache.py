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
