"""The six static sub-checks at their thresholds (just below / at / above)."""

from __future__ import annotations

import random
import re

import pytest

from evalflow.domain.plugineval import static
from evalflow.domain.plugineval.model import FileEntry
from evalflow.domain.plugineval.static import (
    STATIC_TO_DIMENSION,
    analyze_static,
    description_pushiness,
    ecosystem_coherence,
    frontmatter_quality,
    orchestration_wiring,
    progressive_disclosure,
    structural_completeness,
    token_efficiency,
)
from evalflow_tests.domain.plugineval.skillfactory import lines_text, parse, skill_text

REF = (FileEntry("references/r.md", 10, False),)
ASSET = (FileEntry("assets/t.txt", 3, False),)


# ---- frontmatter_quality -------------------------------------------------------------


def test_name_points() -> None:
    # description "" → only the name counts
    assert frontmatter_quality(parse(skill_text(name="other", description=""))) == pytest.approx(
        0.15
    )
    assert frontmatter_quality(parse(skill_text(name="my-skill", description=""))) == pytest.approx(
        0.10
    )
    # absent name defaults to the directory name → .10
    assert frontmatter_quality(parse(skill_text(name=None, description=""))) == pytest.approx(0.10)
    assert frontmatter_quality(parse("---\nname: ''\n---\n")) == pytest.approx(0.0)


@pytest.mark.parametrize(
    ("length", "points"),
    [(9, 0.0), (10, 0.05), (29, 0.05), (30, 0.15), (59, 0.15), (60, 0.20), (99, 0.20), (100, 0.25)],
)
def test_description_length_steps(length: int, points: float) -> None:
    # "x" * n has no pushiness below 40 chars; from 40 on, pushiness adds .10 × .60 = .06
    desc = "x" * length
    push = 0.06 if length >= 40 else 0.0
    p = parse(skill_text(name="my-skill", description=desc))
    assert frontmatter_quality(p) == pytest.approx(0.10 + points + push)


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        ("Use when x", 0.25),
        ("use this skill immediately before x", 0.25),
        ("Should be used whenever x", 0.25),
        ("Use proactively", 0.25 + 0.15),
        ("Triggers on x", 0.25),  # \btrigger\b does not match "Triggers"
        ("auto-loads when x", 0.25),
        ("proactively", 0.15),
        ("automatically", 0.10),
        ("invoke it", 0.10),
        ("always use it", 0.10),
        ("x, when y", 0.10),
        ("x, when y, for z", 0.10),
        ("x, when y, for z, or debugging w", 0.20),
        ("when writing", 0.15),
        ("during testing", 0.15),
        ("a" * 39, 0.0),
        ("a" * 40, 0.10),
    ],
)
def test_pushiness_components(description: str, expected: float) -> None:
    assert description_pushiness(description) == pytest.approx(expected)


def test_pushiness_caps_at_one_and_frontmatter_clamps() -> None:
    desc = (
        "Use this skill when writing specs, when planning, for testing, "
        "or debugging plans; invoke it proactively."
    )
    assert description_pushiness(desc) == pytest.approx(0.95)
    p = parse(skill_text(name="other", description=desc))
    # .15 + .25 + .60 × .95 = 0.97
    assert frontmatter_quality(p) == pytest.approx(0.97)


# ---- orchestration_wiring ------------------------------------------------------------


def test_orchestration_baseline_and_each_bonus() -> None:
    base = orchestration_wiring(parse(skill_text("nothing here\n", description="x")))
    assert base == pytest.approx(0.70)
    assert orchestration_wiring(
        parse(skill_text("the output has this format\n", description="x"))
    ) == pytest.approx(0.70 + 0.10 + 0.05)  # "output" also matches \boutputs?\b
    assert orchestration_wiring(
        parse(skill_text("Format:\nthe output\n", description="x"))
    ) == pytest.approx(0.70 + 0.05)  # output and format on different lines
    assert orchestration_wiring(parse(skill_text("it returns\n", description="x"))) == (
        pytest.approx(0.75)
    )
    assert orchestration_wiring(parse(skill_text("takes input\n", description="x"))) == (
        pytest.approx(0.80)
    )
    assert orchestration_wiring(parse(skill_text("```\nx\n```\n", description="x"))) == (
        pytest.approx(0.75)
    )
    assert orchestration_wiring(
        parse(skill_text("we coordinate\n", description="x"))
    ) == pytest.approx(0.55)


def test_orchestration_clamps_at_one() -> None:
    body = "returns json\ninput\n```\nx\n```\n"
    assert orchestration_wiring(parse(skill_text(body, description="x"))) == pytest.approx(1.0)


# ---- progressive_disclosure ----------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "score"),
    [
        (99, 0.20),
        (100, 0.50),
        (199, 0.50),
        (200, 0.60),
        (600, 0.60),
        (601, 0.40),
        (800, 0.40),
        (801, 0.15),
    ],
)
def test_line_count_buckets(n: int, score: float) -> None:
    p = parse(lines_text(n))
    assert p.line_count == n
    assert progressive_disclosure(p) == pytest.approx(score)


@pytest.mark.parametrize(("n", "bonus"), [(400, 0.15), (401, 0.25)])
def test_references_bonus_depends_on_length(n: int, bonus: float) -> None:
    p = parse(lines_text(n), entries=REF)
    assert progressive_disclosure(p) == pytest.approx(0.60 + bonus)


def test_empty_reference_files_earn_nothing_assets_earn_15() -> None:
    empty = (FileEntry("references/r.md", 0, False),)
    assert progressive_disclosure(parse(lines_text(50), entries=empty)) == pytest.approx(0.20)
    assert progressive_disclosure(parse(lines_text(50), entries=ASSET)) == pytest.approx(0.35)
    both = parse(lines_text(700), entries=REF + ASSET)
    assert progressive_disclosure(both) == pytest.approx(0.40 + 0.25 + 0.15)


def test_progressive_clamps_at_one() -> None:
    p = parse(lines_text(500), entries=REF + ASSET)
    assert progressive_disclosure(p) == pytest.approx(1.0)  # .60 + .25 + .15


# ---- structural_completeness ---------------------------------------------------------


@pytest.mark.parametrize(
    ("headings", "points"), [(1, 0.0), (2, 0.10), (3, 0.10), (4, 0.15), (5, 0.15), (6, 0.20)]
)
def test_heading_steps(headings: int, points: float) -> None:
    body = "".join(f"## H{i}\n" if i % 2 else f"### H{i}\n" for i in range(headings))
    assert structural_completeness(parse(skill_text(body))) == pytest.approx(points)


@pytest.mark.parametrize(("blocks", "points"), [(0, 0.0), (1, 0.10), (2, 0.15), (3, 0.20)])
def test_code_block_steps(blocks: int, points: float) -> None:
    body = "```\nx\n```\n" * blocks
    assert structural_completeness(parse(skill_text(body))) == pytest.approx(points)


@pytest.mark.parametrize(("langs", "points"), [(1, 0.0), (2, 0.10), (3, 0.15)])
def test_language_steps(langs: int, points: float) -> None:
    body = "".join(f"```{lang}\nx\n```\n" for lang in ("python", "bash", "json")[:langs])
    blocks = {1: 0.10, 2: 0.15, 3: 0.20}[langs]
    assert structural_completeness(parse(skill_text(body))) == pytest.approx(blocks + points)


def test_sections_table_and_decision() -> None:
    assert structural_completeness(parse(skill_text("## Examples\n"))) == pytest.approx(0.15)
    assert structural_completeness(parse(skill_text("## Troubleshooting\n"))) == pytest.approx(0.15)
    assert structural_completeness(parse(skill_text("| a | b |\n"))) == pytest.approx(0.10)
    assert structural_completeness(parse(skill_text("a tradeoff\n"))) == pytest.approx(0.05)


# ---- token_efficiency ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("mna", "lines", "penalty"),
    [
        (10, 100, 0.0),  # density .10 → not > .1
        (11, 100, 0.1),
        (20, 100, 0.1),  # .20 → not > .2
        (21, 100, 0.2),
        (50, 100, 0.2),  # .50 → not > .5
        (51, 100, 0.4),
    ],
)
def test_directive_density_steps(mna: int, lines: int, penalty: float) -> None:
    text = lines_text(lines)
    # replace the first `mna` body lines with unique lines holding one MUST each
    rows = text.splitlines()
    start = 4  # after the 4 frontmatter lines
    for i in range(mna):
        rows[start + i] = f"MUST {i}"
    p = parse("\n".join(rows) + "\n")
    assert p.mna_count == mna
    assert p.line_count == lines
    assert token_efficiency(p) == pytest.approx(1.0 - penalty)


def test_duplicate_line_ratio() -> None:
    # body lines: a, a, a, b → unique 2 / total 4 → ratio .5 → −.2
    p = parse(skill_text("a\na\na\nb\n"))
    assert token_efficiency(p) == pytest.approx(0.8)


@pytest.mark.parametrize("rule", ["---", "***", "___", "- - -", "-----", "  * * *  "])
def test_repeated_thematic_breaks_are_not_duplicate_lines(rule: str) -> None:
    # Section rules are markup, not repeated content (the public tool skips `---` lines too):
    # only the repeated "a" counts — body lines a, a, b → ratio 1/3.
    p = parse(skill_text(f"a\n{rule}\na\n{rule}\nb\n{rule}\n"))
    assert (p.body_line_total, p.body_line_unique) == (3, 2)
    assert token_efficiency(p) == pytest.approx(1.0 - 0.4 / 3)


def test_a_line_that_only_starts_like_a_rule_is_content() -> None:
    p = parse(skill_text("--- a/file\n--- a/file\n-- x\n"))
    assert (p.body_line_total, p.body_line_unique) == (3, 2)


# ---- ecosystem_coherence -------------------------------------------------------------


@pytest.mark.parametrize(("refs", "score"), [(0, 0.50), (1, 0.58), (3, 0.74), (4, 0.75)])
def test_cross_reference_steps(refs: int, score: float) -> None:
    body = " ".join(f"skills/s{i}" for i in range(refs)) + "\n"
    assert ecosystem_coherence(parse(skill_text(body))) == pytest.approx(score)


@pytest.mark.parametrize("word", ["related", "see also", "companion", "complements"])
def test_related_language(word: str) -> None:
    assert ecosystem_coherence(parse(skill_text(f"{word}\n"))) == pytest.approx(0.75)


def test_analyze_static_maps_to_six_dimensions() -> None:
    res = analyze_static(parse(skill_text("body\n")), frozenset())
    assert set(res.dimensions) == set(STATIC_TO_DIMENSION.values())
    assert len(res.dimensions) == 6
    assert res.sub_scores["frontmatter_quality"] == res.dimensions["triggering_accuracy"]


@pytest.mark.parametrize(
    ("pattern", "fast"),
    [
        (r"\breturns?\b|\bproduces?\b|\boutputs?\b|\bgenerates?\b", "_RETURNS"),
        (r"\binput\b|\breceives?\b|\baccepts?\b|\bparameters?\b|\bargs?\b", "_INPUTS"),
        (r"\borchestrat\w*\b|\bcoordinat\w*\b|\bdispatch\w*\b", "_ORCHESTRATOR"),
        (r"\brelated\b|\bsee also\b|\bcompanion\b|\bcomplement", "_RELATED"),
    ],
)
@pytest.mark.parametrize(
    "text",
    [
        "it returns",
        "unreturns x_input inputs argsx args",
        "reorchestrate; coordinates",
        "_dispatcher dispatcher",
        "unrelated relatedness see also complementary",
        "companions çompanion -companion",
        "nothing at all",
    ],
)
def test_fast_patterns_match_the_spec_regexes(pattern: str, fast: str, text: str) -> None:
    assert static._found_any(getattr(static, fast), text) == bool(re.search(pattern, text))


def test_word_and_line_scans_match_the_spec_regexes_on_random_text() -> None:
    spec = re.compile(r"\boutput\b.*\bformat\b|\bformat\b.*\boutput\b|\breturn.*json\b")
    words = ["output", "format", "return", "json", "related", "args", "x", "é", "_", " ", "\n"]
    rng = random.Random(3)
    for _ in range(3_000):
        text = "".join(rng.choice(words) for _ in range(rng.randint(0, 12)))
        want = any(spec.search(line) for line in text.split("\n"))
        assert static._has_output_format_line(text) == want, text
        for pattern, fast in (
            (r"\breturns?\b|\bproduces?\b|\boutputs?\b|\bgenerates?\b", static._RETURNS),
            (r"\binput\b|\breceives?\b|\baccepts?\b|\bparameters?\b|\bargs?\b", static._INPUTS),
            (r"\brelated\b|\bsee also\b|\bcompanion\b|\bcomplement", static._RELATED),
        ):
            assert static._found_any(fast, text) == bool(re.search(pattern, text)), text
