"""Hostile SKILL.md text cannot stall the PluginEval parser: the patterns that were
super-linear on Python's engine run on RE2 or a linear scanner, with identical results."""

from __future__ import annotations

import random
import re

from evalflow.domain.plugineval import parser

# The original backtracking patterns: the oracle the linear versions must agree with.
INLINE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
)
HEADING = re.compile(r"^#{1,3} +(.+?)#*\s*$")


def test_linear_versions_agree_with_the_original_patterns() -> None:
    rng = random.Random(7)
    alphabet = "`a ]([)<>\"'#\n\u00a0\u2003\x85\x1c\tx/."
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))
        line = text.replace("\n", "")
        assert parser.strip_inline_code(line) == INLINE.sub(" ", line), line
        assert [m.group(1) for m in parser._LINK_RE.finditer(text)] == [
            m.group(1) for m in LINK.finditer(text)
        ], text
        want = HEADING.match(line)
        assert parser.heading_text(line) == (want.group(1).strip() if want else None), line


def test_hostile_lines_parse() -> None:
    # Each took minutes to hours on the backtracking patterns (quadratic in the line length).
    lines = ["[a](" * 50_000, "# a" + " " * 200_000 + "b", "`a" * 50_000 + "``" * 50_000]
    for line in lines:
        assert parser._LINK_RE.search(line) is None
        parser.heading_text(line)
        parser.strip_inline_code(line)
    assert parser.strip_inline_code("x `code` y ``a`b`` z") == "x   y   z"
    assert parser.heading_text(lines[1]) == lines[1][2:]
