"""PluginEval file-system adapter: discovery, reading, link resolution, manifests, corpus,
and the pinned quick composites of the demo skills."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalflow.domain.plugineval.composite import LAYERS_FOR_DEPTH
from evalflow.domain.plugineval.corpus import dump_index
from evalflow.domain.plugineval.evaluate import EvalOptions
from evalflow.errors import InputError
from evalflow.io.plugineval import (
    build_corpus,
    discover_skills,
    evaluate_path,
    load_corpus,
    read_skill_files,
    write_corpus,
)

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "skills"

SKILL = (
    "---\nname: alpha\ndescription: Use when testing the adapter, for checking links.\n---\n"
    "# Alpha\n[a](references/a.md#part) [n](references/nested/b.md) see skills/beta\n"
    "[agent](../../agents/helper.md)\n"
)


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    root = tmp_path / "plug"
    write(root / ".claude-plugin" / "plugin.json", json.dumps({"name": "demo-plugin"}))
    write(root / "agents" / "helper.md", "---\nname: helper\ndescription: Helps out.\n---\n")
    write(root / "skills" / "alpha" / "SKILL.md", SKILL)
    write(root / "skills" / "alpha" / "references" / "a.md", "# A\n")
    write(root / "skills" / "alpha" / "references" / "nested" / "b.md", "# B\n")
    write(root / "skills" / "alpha" / "references" / "blob.bin", b"\x00\x01\x02")
    write(root / "skills" / "alpha" / "references" / ".DS_Store", b"junk")
    write(root / "skills" / "alpha" / "assets" / "logo.png", b"\x89PNG\x00")
    write(root / "skills" / "beta" / "SKILL.md", "---\nname: beta\n---\nbody\n")
    write(root / "skills" / ".hidden" / "SKILL.md", "hidden\n")
    return root


def test_discover_forms(plugin: Path) -> None:
    alpha = plugin / "skills" / "alpha"
    assert discover_skills(alpha) == ([alpha], False)
    assert discover_skills(alpha / "SKILL.md") == ([alpha], False)
    dirs, batch = discover_skills(plugin)
    assert batch
    assert [d.name for d in dirs] == ["alpha", "beta"]  # hidden dirs skipped


def test_discover_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        discover_skills(tmp_path / "missing")
    with pytest.raises(InputError, match=r"no SKILL\.md found"):
        discover_skills(tmp_path)
    other = write(tmp_path / "README.md", "x")
    with pytest.raises(InputError, match=r"expected a SKILL\.md"):
        discover_skills(other)


def test_read_skill_files_lists_nested_and_binary(plugin: Path) -> None:
    f = read_skill_files(plugin / "skills" / "alpha")
    listed = {e.relpath: (e.size, e.binary) for e in f.files}
    assert listed == {
        "references/a.md": (4, False),
        "references/blob.bin": (3, True),
        "references/nested/b.md": (4, False),
        "assets/logo.png": (5, True),
    }


def test_links_resolve_plugin_and_agents_are_read(plugin: Path) -> None:
    (ev,), batch = evaluate_path(plugin / "skills" / "alpha", EvalOptions(depth="quick"))
    assert not batch
    assert ev.parsed.plugin == "demo-plugin"
    assert ev.static.anti_patterns == ()  # anchor, nested path, sibling, agent all resolve
    codes = [f.code for f in ev.findings]
    assert codes == ["REFERENCE_BINARY", "UNLINKED_REFERENCE"]


def test_dead_links_are_anti_patterns(plugin: Path) -> None:
    (plugin / "skills" / "beta").rename(plugin / "skills" / "gamma")
    (plugin / "agents" / "helper.md").unlink()
    (ev,), _ = evaluate_path(plugin / "skills" / "alpha", EvalOptions(depth="quick"))
    assert [a.flag for a in ev.static.anti_patterns] == ["DEAD_CROSS_REF", "DEAD_CROSS_REF"]


def _marketplace(tmp_path: Path, link: str) -> Path:
    """plugins/{audit,protect-mcp,notes}: audit's skill links `link`; protect-mcp is a plugin
    (it has a manifest), notes is a plain folder."""
    plugins = tmp_path / "plugins"
    write(plugins / "audit" / ".claude-plugin" / "plugin.json", json.dumps({"name": "audit"}))
    write(
        plugins / "audit" / "skills" / "recipe" / "SKILL.md",
        "---\nname: recipe\ndescription: Use when auditing signed receipts of tool calls.\n"
        f"---\nSee [it]({link}).\n",
    )
    write(plugins / "protect-mcp" / "plugin.json", json.dumps({"name": "protect-mcp"}))
    write(plugins / "protect-mcp" / "README.md", "# mcp\n")
    write(plugins / "notes" / "README.md", "# notes\n")
    return plugins / "audit" / "skills" / "recipe"


@pytest.mark.parametrize(
    ("link", "flags"),
    [
        # Resolves from skills/ (seed 004) into a sibling plugin: not dead, as in the public
        # tool (signed-audit-trails-recipe's links to ../../protect-mcp/).
        ("../../protect-mcp/", []),
        ("../../protect-mcp/README.md", []),
        ("../../protect-mcp/missing.md", ["DEAD_CROSS_REF"]),
        # Beside the plugin but not a plugin: never probed, so it does not resolve.
        ("../../notes/README.md", ["DEAD_CROSS_REF"]),
        ("../../../../../../etc/passwd", ["DEAD_CROSS_REF"]),
        # Resolves from the skill's own directory.
        ("../../.claude-plugin/plugin.json", []),
    ],
)
def test_a_relative_link_may_resolve_from_skills_into_a_sibling_plugin(
    tmp_path: Path, link: str, flags: list[str]
) -> None:
    (ev,), _ = evaluate_path(_marketplace(tmp_path, link), EvalOptions(depth="quick"))
    assert [a.flag for a in ev.static.anti_patterns] == flags


def test_a_sibling_that_is_a_symlink_elsewhere_is_not_probed(tmp_path: Path) -> None:
    skill = _marketplace(tmp_path, "../../elsewhere/plugin.json")
    outside = write(tmp_path / "host" / "plugin.json", "{}").parent
    (tmp_path / "plugins" / "elsewhere").symlink_to(outside, target_is_directory=True)
    (ev,), _ = evaluate_path(skill, EvalOptions(depth="quick"))
    assert [a.flag for a in ev.static.anti_patterns] == ["DEAD_CROSS_REF"]


def test_unreadable_manifest_is_a_finding(plugin: Path) -> None:
    write(plugin / ".claude-plugin" / "plugin.json", "{not json")
    (ev,), _ = evaluate_path(plugin / "skills" / "beta", EvalOptions(depth="quick"))
    assert ev.parsed.plugin is None
    assert "MANIFEST_UNREADABLE" in [f.code for f in ev.findings]


def test_batch_is_one_process_and_deterministic(plugin: Path) -> None:
    evs, batch = evaluate_path(plugin, EvalOptions(depth="deep", runs=10))
    again, _ = evaluate_path(plugin, EvalOptions(depth="deep", runs=10))
    assert batch
    assert [e.composite for e in evs] == [e.composite for e in again]
    assert all(e.monte_carlo is not None and e.monte_carlo.simulated for e in evs)


def test_corpus_build_write_load(plugin: Path, tmp_path: Path) -> None:
    index = build_corpus(plugin)
    assert [e.path for e in index.skills] == ["skills/alpha", "skills/beta"]
    target = write_corpus(tmp_path / "corpus", index)
    first = target.read_bytes()
    write_corpus(tmp_path / "corpus", build_corpus(plugin))
    assert target.read_bytes() == first
    assert dump_index(load_corpus(tmp_path / "corpus")) == first.decode()
    with pytest.raises(InputError, match="no corpus index"):
        load_corpus(tmp_path / "nowhere")


def test_depth_table_requests_layers() -> None:
    assert LAYERS_FOR_DEPTH["deep"] == ("static", "judge", "monte_carlo")


# Pinned quick composites of the demo skills (three frameworks, different quality).
DEMO_PINS = {
    "speckit/spec-writer": (88.73, "gold", ()),
    "speckit/plan-writer": (79.32, "silver", ()),
    "kiro/task-breakdown": (57.89, "no_badge", ()),
    "bmad/story-writer": (
        23.81,
        "no_badge",
        (
            "OVER_CONSTRAINED",
            "EMPTY_DESCRIPTION",
            "MISSING_TRIGGER",
            "ORPHAN_REFERENCE",
            "DEAD_CROSS_REF",
        ),
    ),
}


def test_demo_skills_quick_composites_are_pinned() -> None:
    evs, batch = evaluate_path(DEMO, EvalOptions(depth="quick"))
    assert batch
    got = {
        Path(e.parsed.location).relative_to(DEMO).as_posix(): (
            round(e.composite.score, 2),
            e.badge,
            tuple(a.flag for a in e.static.anti_patterns),
        )
        for e in evs
    }
    assert got == DEMO_PINS
    good, mediocre, poor = (
        got["speckit/spec-writer"][0],
        got["kiro/task-breakdown"][0],
        got["bmad/story-writer"][0],
    )
    assert good > mediocre > poor
