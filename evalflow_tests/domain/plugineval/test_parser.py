"""Parser: PLUGINEVAL.md §Parsing plus deliberate fixes 1–3 (never crash, never silently zero)."""

from __future__ import annotations

import random
import re

import pytest

from evalflow.domain.plugineval.model import FileEntry
from evalflow.domain.plugineval.parser import (
    CROSS_REF_RE,
    _scan_body,
    bounded_matches,
    count_lines,
    heading_text,
    mna_count,
    normalise_link_target,
    reference_mentions,
    split_frontmatter,
)
from evalflow_tests.domain.plugineval.skillfactory import parse, skill_text


def codes(p) -> set[str]:
    return {f.code for f in p.findings}


def test_frontmatter_fields_and_name_default() -> None:
    p = parse(skill_text("# T\n", name=None, description="Use when testing things."))
    assert p.name == "my-skill"  # defaults to the directory name
    assert p.description == "Use when testing things."


def test_line_count_includes_frontmatter_and_ignores_trailing_newline() -> None:
    assert count_lines("a\nb\n") == 2
    assert count_lines("a\nb") == 2
    assert count_lines("") == 0
    p = parse("---\nname: x\n---\nbody\n")
    assert p.line_count == 4


def test_bom_is_stripped_and_frontmatter_still_parsed() -> None:
    raw = b"\xef\xbb\xbf" + skill_text("body\n", description="Use when a BOM is present.").encode()
    p = parse(raw)
    assert p.description == "Use when a BOM is present."
    assert "BOM_STRIPPED" in codes(p)
    assert "FRONTMATTER_MISSING" not in codes(p)


def test_crlf_is_parsed_like_lf() -> None:
    text = skill_text("## A\n## B\n```python\nx\n```\n", description="Use when CRLF.")
    lf = parse(text)
    crlf = parse(text.replace("\n", "\r\n"))
    assert crlf.description == lf.description == "Use when CRLF."
    assert (crlf.h2_count, crlf.code_block_count, crlf.line_count) == (2, 1, lf.line_count)
    assert "CRLF_NORMALISED" in codes(crlf)


def test_utf16_with_bom_is_decoded() -> None:
    p = parse(skill_text("body\n", description="Use when UTF-16.").encode("utf-16"))
    assert p.description == "Use when UTF-16."
    assert "SKILL_MD_UTF16" in codes(p)


def test_invalid_utf8_and_nul_bytes_are_findings_not_crashes() -> None:
    raw = skill_text("caf\xe9\n", description="Use when bytes are bad.").encode("latin-1")
    p = parse(raw + b"\x00")
    assert p.description == "Use when bytes are bad."
    assert {"SKILL_MD_NOT_UTF8", "SKILL_MD_BINARY"} <= codes(p)


@pytest.mark.parametrize("fm", ["- a\n- b", "just a string", "42"])
def test_non_mapping_frontmatter_defaults_with_a_finding(fm: str) -> None:
    p = parse(f"---\n{fm}\n---\n# Body\n")
    assert p.name == "my-skill"
    assert p.description == ""
    assert "FRONTMATTER_NOT_MAPPING" in codes(p)


def test_invalid_yaml_is_read_leniently_not_zeroed() -> None:
    p = parse("---\nname: x\ndescription: Use when: colons break YAML\n---\nbody\n")
    assert "FRONTMATTER_INVALID_YAML" in codes(p)
    assert p.name == "x"
    assert p.description == "Use when: colons break YAML"


def test_unclosed_and_missing_frontmatter() -> None:
    p = parse("---\nname: x\nbody without close\n")
    assert "FRONTMATTER_UNCLOSED" in codes(p)
    assert p.name == "my-skill"
    q = parse("# no frontmatter\n")
    assert "FRONTMATTER_MISSING" in codes(q)


def test_empty_description_key_is_empty_string() -> None:
    p = parse("---\nname: x\ndescription:\n---\nbody\n")
    assert p.description == ""
    assert not {c for c in codes(p) if c.startswith("FRONTMATTER_FIELD")}


def test_odd_field_types_are_coerced_with_findings() -> None:
    p = parse("---\nname: 12\ndescription: [Use when, lists]\n---\nb\n")
    assert p.name == "12"
    assert p.description == "Use when lists"
    assert "FRONTMATTER_FIELD_TYPE" in codes(p)
    q = parse("---\nname:\ndescription: {a: 1}\n---\nb\n")
    assert q.name == ""
    assert q.description == ""
    assert {"FRONTMATTER_EMPTY_NAME", "FRONTMATTER_FIELD_TYPE"} <= codes(q)


def test_code_blocks_are_counted_as_blocks_fix_1() -> None:
    body = "```python\nx = 1\n```\n\n~~~bash\nls\n~~~\n\n````markdown\n```js\ninner\n```\n````\n"
    p = parse(skill_text(body))
    assert p.code_block_count == 3
    assert p.code_languages == ("python", "bash", "markdown")


def test_unclosed_fence_is_a_finding() -> None:
    p = parse(skill_text("```python\nx\n## hidden\n"))
    assert p.code_block_count == 1
    assert p.h2_count == 0
    assert "UNCLOSED_CODE_FENCE" in codes(p)


def test_headings_inside_code_are_ignored_fix_2() -> None:
    body = "## Real\n### Also real\n```markdown\n## Not a heading\n### Nor this\n```\n"
    p = parse(skill_text(body))
    assert (p.h2_count, p.h3_count) == (1, 1)


def test_examples_and_troubleshooting_only_outside_code() -> None:
    p = parse(skill_text("```\n## Examples\n## Troubleshooting\n```\n"))
    assert not p.has_examples
    assert not p.has_troubleshooting
    q = parse(skill_text("## Usage\n## FAQ\n"))
    assert q.has_examples
    assert q.has_troubleshooting


def test_links_and_cross_refs_inside_code_are_ignored_fix_2() -> None:
    body = (
        "```\n[a](references/in-fence.md) skills/in-fence\n```\n"
        "Inline `[b](references/in-inline.md)` and `skills/in-inline`.\n"
        "Real [c](references/real.md) and skills/real-one.\n"
    )
    p = parse(skill_text(body))
    targets = {c.target for c in p.link_checks}
    assert "references/real.md" in targets
    assert "references/in-fence.md" not in targets
    assert "references/in-inline.md" not in targets
    assert p.cross_references == ("real-one",)


def test_anchor_query_and_encoding_are_stripped_fix_2() -> None:
    assert normalise_link_target("references/x.md#part") == "references/x.md"
    assert normalise_link_target("./references/a%20b.md?v=1") == "references/a b.md"
    assert normalise_link_target("<references/y.md>") == "references/y.md"
    assert normalise_link_target("https://example.com/references/x.md") is None
    assert normalise_link_target("#section") is None


def test_nested_reference_links_resolve_to_their_full_path() -> None:
    body = '[a](references/a/b.md#top "title") and [c][ref]\n\n[ref]: references/c.md\n'
    p = parse(skill_text(body))
    refs = sorted(c.target for c in p.link_checks if c.kind == "reference")
    assert refs == ["references/a/b.md", "references/c.md"]


def test_cross_reference_prefixes() -> None:
    p = parse(skill_text("see skills/foo, skill/bar/baz and sub-skills/qux; x-skills/no\n"))
    assert p.cross_references == ("foo", "bar/baz", "sub-skills/qux")
    cands = {c.target: c.candidates for c in p.link_checks if c.kind == "cross_skill"}
    assert cands["skills/foo"] == ("../foo",)
    assert cands["sub-skills/qux"] == ("../sub-skills/qux", "sub-skills/qux")


def test_relative_links_outside_the_skill_are_cross_skill_checks() -> None:
    p = parse(skill_text("[judge](../../agents/eval-judge.md) [s](scripts/run.py)\n"))
    kinds = {c.target: c.kind for c in p.link_checks}
    assert kinds == {"../../agents/eval-judge.md": "cross_skill", "scripts/run.py": "local"}


def test_a_relative_link_resolves_from_the_skill_or_from_skills() -> None:
    # Seed 004: DEAD_CROSS_REF when the path "cannot be resolved from the skills/ directory";
    # a Markdown reader resolves it from the file's own directory. Both are candidates.
    p = parse(skill_text("[mcp](../../protect-mcp/) [s](../sibling/SKILL.md)\n"))
    cands = {c.target: c.candidates for c in p.link_checks}
    assert cands == {
        "../../protect-mcp": ("../../protect-mcp", "../../../protect-mcp"),
        "../sibling/SKILL.md": ("../sibling/SKILL.md", "../../sibling/SKILL.md"),
    }


def test_reference_files_binary_and_empty_are_findings_fix_3() -> None:
    entries = (
        FileEntry("references/guide.md", 120, False),
        FileEntry("references/diagram.pdf", 5000, True),
        FileEntry("references/empty.md", 0, False),
    )
    p = parse(skill_text("[g](references/guide.md)\n"), entries=entries)
    assert {"REFERENCE_BINARY", "REFERENCE_EMPTY"} <= codes(p)
    assert [f.relpath for f in p.nonempty_reference_files] == [
        "references/guide.md",
        "references/diagram.pdf",
    ]


def test_unlinked_reference_files_are_detected() -> None:
    entries = (
        FileEntry("references/linked.md", 1, False),
        FileEntry("references/mentioned.md", 1, False),
        FileEntry("references/sub/deep.md", 1, False),
        FileEntry("references/lonely.md", 1, False),
        FileEntry("references/only-in-code.md", 1, False),
    )
    body = (
        "[l](references/linked.md#x). See references/mentioned.md.\n"
        "[dir](references/sub/)\n`references/only-in-code.md`\n"
    )
    p = parse(skill_text(body), entries=entries)
    assert [f.relpath for f in p.unlinked_reference_files] == [
        "references/lonely.md",
        "references/only-in-code.md",
    ]


def test_mna_counts_whole_file_case_sensitively() -> None:
    p = parse(skill_text("MUST must ALWAYS\n```\nNEVER\n```\nMUSTARD\n", description="MUST"))
    assert p.mna_count == 4


def test_duplicate_body_lines_are_counted_on_stripped_nonempty_lines() -> None:
    p = parse(skill_text("a\n  a\n\nb\n"))
    assert (p.body_line_total, p.body_line_unique) == (3, 2)


def test_table_outside_code_only() -> None:
    assert parse(skill_text("| a | b |\n|---|---|\n")).has_table
    assert not parse(skill_text("```\n| a | b |\n```\n")).has_table


SPEC_PATTERNS = {
    "cross": (
        r"(?<![\w-])((?:skill|skills|sub-skills)/[a-z0-9-]+(?:/[a-z0-9-]+)*)",
        CROSS_REF_RE,
        "-",
    ),
}
TRICKY = (
    "MUST xMUST _MUST MUSTY éMUST -MUST NEVER,ALWAYS.MUST NEVERNEVER ALWAYSé MUSTMUST\n"
    "skills/a x-skills/b x-skills/skill/c _skills/d /skills/e sub-skills/f/g skill/h-i "
    "askill/j 9skills/k (skills/l) ßskills/m\n"
    "references/a.md ./references/b.md a./references/c x/references/d -references/e "
    ".references/f (references/g) _references/h ../references/i .//references/j "
    "./references/k./references/l references/m,./references/n"
)


@pytest.mark.parametrize("key", sorted(SPEC_PATTERNS))
def test_bounded_matches_equal_the_spec_regexes(key: str) -> None:
    spec, fast, reject = SPEC_PATTERNS[key]
    expected = [m.group(0) for m in re.finditer(spec, TRICKY)]
    assert [m.group(0) for m in bounded_matches(fast, TRICKY, reject)] == expected


def test_word_scans_equal_the_spec_regexes() -> None:
    assert mna_count(TRICKY) == len(re.findall(r"\b(MUST|NEVER|ALWAYS)\b", TRICKY)) == 5
    spec = r"(?<![\w/.-])(?:\./)?references/[^\s)\]>\"'`,;]+"
    assert list(reference_mentions(TRICKY)) == re.findall(spec, TRICKY)


@pytest.mark.parametrize(
    "body",
    [
        "## Examples\n",
        "x ### EXAMPLE y\n",
        "## usagE",
        "#\u0130## example\n",
        "## \u0130xample\n## exampl",
        "## Common Issues\n",
        "## FAQ",
        "##  faq\n## troubleshooting",
        "```\n## Example\n```\n",
        "`## faq`\n",
    ],
)
def test_section_markers_equal_a_search_of_the_lowered_prose(body: str) -> None:
    p = parse(skill_text(body))
    lowered = body.lower() if "`" not in body else ""  # code is not prose
    examples = ("## example", "### example", "## usage")
    troubleshooting = ("## troubleshoot", "## common issue", "## faq")
    assert p.has_examples == any(k in lowered for k in examples)
    assert p.has_troubleshooting == any(k in lowered for k in troubleshooting)


FENCE = re.compile(r"^[ \t]*(?:>[ \t]*)*(`{3,}|~{3,})(.*)$")


def _scan_line_by_line(lines: list[str]) -> tuple[list[str], int, list[str], str]:
    """The fence scan one line at a time: the oracle for `_scan_body`'s slices."""
    prose: list[str] = []
    languages: list[str] = []
    blocks, open_fence = 0, ""
    for line in lines:
        m = FENCE.match(line)
        if open_fence:
            if m and m[1][0] == open_fence[0] and len(m[1]) >= len(open_fence) and not m[2].strip():
                open_fence = ""
            continue
        if m and not (m[1][0] == "`" and "`" in m[2].strip()):
            open_fence, blocks = m[1], blocks + 1
            if lang := (m[2].strip().split() or [""])[0].strip("{}.").lower():
                languages.append(lang)
            continue
        prose.append(line)
    return prose, blocks, languages, open_fence


def test_fence_scan_equals_a_line_by_line_scan() -> None:
    pieces = ["```", "~~~", "````", "```py", "~~~ sh", "``` `x`", "> ```", "  ~~~~", "a", " ", "`"]
    rng = random.Random(11)
    for _ in range(3_000):
        n = rng.randint(0, 8)
        lines = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 2))) for _ in range(n)]
        prose, blocks, languages, unclosed = _scan_body("\n".join(lines), "x")
        want_prose, want_blocks, want_languages, open_fence = _scan_line_by_line(lines)
        want = ("\n".join(want_prose), want_blocks, want_languages)
        assert (prose, blocks, languages) == want, lines
        assert (unclosed is not None) == bool(open_fence), lines


def test_headings_are_heading_text_of_each_prose_line() -> None:
    pieces = ["#", "##", "####", " ", "  ", "a", "#a", "\t", "\u00a0", "\n", "\n"]
    rng = random.Random(13)
    for _ in range(3_000):
        body = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        want = tuple(h for ln in body.split("\n") if (h := heading_text(ln)) is not None)
        assert parse(skill_text(body)).headings == want, repr(body)


def _frontmatter_by_lines(text: str) -> tuple[str | None, str]:
    """(YAML text or None, body) read line by line: the oracle for `split_frontmatter`."""
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return None, text
    end = next((j for j in range(1, len(lines)) if lines[j].rstrip() in ("---", "...")), None)
    if end is None:
        return None, text
    return "\n".join(lines[1:end]), "\n".join(lines[end + 1 :])


def test_frontmatter_split_equals_a_line_by_line_split() -> None:
    pieces = ["---", "--- ", "...", "a: b", "\n", "\n", " ", "x", "c:"]
    rng = random.Random(17)
    for _ in range(3_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        mapping, body, findings = split_frontmatter(text, "x")
        yaml_text, want_body = _frontmatter_by_lines(text)
        assert body == want_body, repr(text)
        if yaml_text is None:
            assert mapping == {} and findings, repr(text)
        else:
            assert not {"FRONTMATTER_MISSING", "FRONTMATTER_UNCLOSED"} & {f.code for f in findings}
            want = split_frontmatter(f"---\n{yaml_text}\n---\n", "x")[0] if yaml_text else {}
            assert mapping == want, repr(text)
