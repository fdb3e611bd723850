"""Builders for in-memory skills used across the PluginEval tests."""

from __future__ import annotations

from evalflow.domain.plugineval.model import FileEntry, SkillFiles
from evalflow.domain.plugineval.parser import ParsedSkill, parse_skill


def skill_text(
    body: str = "",
    *,
    name: str | None = "my-skill",
    description: str | None = "A skill.",
    extra_frontmatter: str = "",
) -> str:
    """SKILL.md text with a YAML frontmatter block (fields omitted when None)."""
    fm = []
    if name is not None:
        fm.append(f"name: {name}")
    if description is not None:
        fm.append(f"description: {description}")
    if extra_frontmatter:
        fm.append(extra_frontmatter)
    return "---\n" + "\n".join(fm) + "\n---\n" + body


def files(
    text: str | bytes,
    *,
    dir_name: str = "my-skill",
    entries: tuple[FileEntry, ...] = (),
) -> SkillFiles:
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return SkillFiles(dir_name=dir_name, skill_md=raw, files=entries, location=dir_name)


def parse(
    text: str | bytes,
    *,
    dir_name: str = "my-skill",
    entries: tuple[FileEntry, ...] = (),
) -> ParsedSkill:
    return parse_skill(files(text, dir_name=dir_name, entries=entries))


def lines_text(n: int, *, description: str = "A skill.") -> str:
    """A SKILL.md of exactly n lines (frontmatter included), every body line unique."""
    head = skill_text(description=description)
    head_lines = head.count("\n")
    body = "".join(f"line {i}\n" for i in range(n - head_lines))
    return head + body
