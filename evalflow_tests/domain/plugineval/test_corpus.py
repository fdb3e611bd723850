"""Corpus index: deterministic bytes, round trip, clear errors."""

from __future__ import annotations

import pytest

from evalflow.domain.plugineval.corpus import (
    build_index,
    dump_index,
    load_index,
    make_entry,
    require_plugins_dir,
)
from evalflow.errors import InputError


def entry(path: str, sha: str = "a" * 64):
    return make_entry(
        name=path.rsplit("/", maxsplit=1)[-1],
        path=path,
        description="Use when testing.",
        sha256=sha,
        dimensions={"triggering_accuracy": 1 / 3, "ecosystem_coherence": 0.5},
        anti_patterns=["MISSING_TRIGGER"],
        composite_quick=61.123456789,
    )


def test_index_is_sorted_rounded_and_byte_stable() -> None:
    a = dump_index(build_index([entry("b/x"), entry("a/y", "b" * 64)]))
    b = dump_index(build_index([entry("a/y", "b" * 64), entry("b/x")]))
    assert a == b
    index = load_index(a, "index.json")
    assert [e.path for e in index.skills] == ["a/y", "b/x"]
    assert index.skills[0].dimensions["triggering_accuracy"] == 0.333333
    assert list(index.skills[0].dimensions) == ["ecosystem_coherence", "triggering_accuracy"]
    assert index.skills[0].composite_quick == 61.123457


def test_self_is_excluded_by_content_hash() -> None:
    index = build_index([entry("a", "a" * 64), entry("b", "b" * 64)])
    assert list(index.scores_by_path(exclude_sha256="a" * 64)) == ["b"]
    assert index.negatives(exclude_sha256="b" * 64) == [("a", "Use when testing.")]


@pytest.mark.parametrize("text", ["{}", "[]", "not json", '{"format": "other", "skills": []}'])
def test_invalid_index_is_an_input_error(text: str) -> None:
    with pytest.raises(InputError, match="not a PluginEval corpus index") as err:
        load_index(text, "c/index.json")
    assert err.value.where == "c/index.json"


def test_plugins_dir_is_recorded_and_an_old_index_still_loads() -> None:
    index = load_index(dump_index(build_index([entry("a/y")], "../plugins")), "index.json")
    assert require_plugins_dir(index, "c/index.json") == "../plugins"
    old = dump_index(build_index([entry("a/y")])).replace('  "plugins_dir": null,\n', "")
    assert "plugins_dir" not in old  # an index written before the field existed
    legacy = load_index(old, "c/index.json")
    assert legacy.version == 1 and legacy.skills == index.skills
    with pytest.raises(InputError) as err:
        require_plugins_dir(legacy, "c/index.json")
    assert err.value.where == "c/index.json"
    assert "re-run `evalflow plugin init" in err.value.fix
