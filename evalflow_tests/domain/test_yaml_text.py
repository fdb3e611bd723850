"""The strict YAML parser: duplicate keys refused with their lines; the rest as safe_load."""

from __future__ import annotations

import pytest
import yaml

from evalflow.domain.yaml_text import load_yaml


def test_a_repeated_key_is_refused_with_both_lines() -> None:
    with pytest.raises(yaml.YAMLError) as error:
        load_yaml("run: r1\nhead: a\nbase: b\nhead: c\n")
    assert "duplicate key 'head' (first on line 2)" in str(error.value)
    assert error.value.problem_mark.line == 3


def test_nested_and_anchored_mappings() -> None:
    with pytest.raises(yaml.YAMLError):
        load_yaml("gates:\n  unit: a\n  unit: b\n")
    # A merge key brings keys in without repeating them in the mapping's own text.
    merged = load_yaml("a: &x {k: 1, j: 1}\nb:\n  <<: *x\n  j: 2\n")
    assert merged == {"a": {"k": 1, "j": 1}, "b": {"k": 1, "j": 2}}


@pytest.mark.parametrize("text", ["a: 1\nb: [1, 2]\n", "- x\n- {y: 1}\n", "", "1e3\n", "x: 1"])
def test_otherwise_as_the_safe_loader(text: str) -> None:
    assert load_yaml(text) == yaml.safe_load(text)


def test_no_python_objects() -> None:
    with pytest.raises(yaml.YAMLError):
        load_yaml("!!python/object/apply:os.system ['true']\n")
