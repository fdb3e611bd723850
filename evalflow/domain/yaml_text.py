"""The one YAML parser for every file evalflow reads (manifests, baselines, labels, suites,
benchmark settings, build specs, ledgers, price tables): PyYAML's safe loader, strict.

A mapping that repeats a key is refused with the key and its line: PyYAML keeps the last
value silently, so a manifest with two `head:` keys was scored against the one the operator
did not mean. Pure text in, data out; the callers read the files and name them in errors.
"""

from __future__ import annotations

from typing import Any

import yaml

# libyaml's safe loader when PyYAML was built with it (the wheels are): its C scanner and
# parser make a PRD or baseline, which every evaluation and rerun reads, ~10× faster to load.
_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_SAFE_LOADER):
    """The safe loader, refusing a key repeated in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        # Checked before merge keys (`<<: *anchor`) are flattened in: a key written beside a
        # merge overrides the merged one, as YAML allows; only the mapping's own keys count.
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:  # an unhashable key: the safe loader refuses it just below
                continue
            if first is not key_node:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"duplicate key {key!r} (first on line {first.start_mark.line + 1})",
                    key_node.start_mark,
                )
        return super().construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _StrictLoader.construct_mapping
)


def load_yaml(text: str) -> Any:
    """The document in `text`; raises yaml.YAMLError (with a problem mark) when malformed or
    when a mapping repeats a key."""
    return yaml.load(text, Loader=_StrictLoader)
