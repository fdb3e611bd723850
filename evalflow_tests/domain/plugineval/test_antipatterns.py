"""The six anti-pattern flags at their thresholds, and the penalty formula."""

from __future__ import annotations

import pytest

from evalflow.domain.plugineval import static
from evalflow.domain.plugineval.antipatterns import (
    TRIGGER_RE,
    anti_pattern_penalty,
    detect_anti_patterns,
)
from evalflow.domain.plugineval.model import FileEntry
from evalflow_tests.domain.plugineval.skillfactory import lines_text, parse, skill_text

GOOD_DESC = "Use when writing specs for features, during planning."


def flags(text: str, existing: frozenset[str] = frozenset(), entries=()) -> list[str]:
    found, _ = detect_anti_patterns(parse(text, entries=entries), existing)
    return [a.flag for a in found]


@pytest.mark.parametrize(("count", "flagged"), [(14, False), (15, True), (16, True)])
def test_over_constrained_at_15_per_seed(count: int, flagged: bool) -> None:
    body = "".join(f"MUST {i}\n" for i in range(count))
    assert ("OVER_CONSTRAINED" in flags(skill_text(body, description=GOOD_DESC))) is flagged


@pytest.mark.parametrize(("length", "flagged"), [(19, True), (20, False), (21, False)])
def test_empty_description_below_20_chars(length: int, flagged: bool) -> None:
    desc = "Use when " + "x" * (length - 9)
    # padding whitespace is stripped before measuring
    text = skill_text(description=f"'  {desc}  '")
    assert ("EMPTY_DESCRIPTION" in flags(text)) is flagged


def test_empty_and_missing_description_flag_both() -> None:
    assert flags("---\nname: x\ndescription:\n---\n") == ["EMPTY_DESCRIPTION", "MISSING_TRIGGER"]


@pytest.mark.parametrize(
    ("desc", "flagged"),
    [
        ("Use when drafting specs for a product.", False),
        ("USE THIS SKILL WHEN drafting specs.", False),
        ("Use proactively for spec drafting work.", False),
        ("Trigger when a spec is being drafted.", False),
        ("Helps drafting specs when planning work.", True),
        ("Use it when drafting specs for teams.", True),
        # the trigger frontmatter_quality credits is the one MISSING_TRIGGER accepts
        ("This skill should be used when drafting specs.", False),
        ("Use after a spec has been drafted.", False),
        ("Auto-loads when a spec file is opened.", False),
    ],
)
def test_missing_trigger_phrases(desc: str, flagged: bool) -> None:
    assert ("MISSING_TRIGGER" in flags(skill_text(description=desc))) is flagged


def test_missing_trigger_and_frontmatter_quality_share_one_definition() -> None:
    assert static.TRIGGER_RE is TRIGGER_RE
    credited = "Use after a spec has been drafted."  # only the trigger earns pushiness
    assert static.description_pushiness(credited) == pytest.approx(0.25)
    assert "MISSING_TRIGGER" not in flags(skill_text(description=credited))
    uncredited = "Helps drafting specs."
    assert static.description_pushiness(uncredited) == 0.0
    assert "MISSING_TRIGGER" in flags(skill_text(description=uncredited))


@pytest.mark.parametrize(
    ("extra", "flagged"),
    [
        ("disable-model-invocation: true", False),
        ("disable-model-invocation: false", True),
        ("disable-model-invocation: 'true'", True),  # a string is not the opt-out
        ("paths: 'specs/**/*.md'", False),
        ("paths: ''", True),
    ],
)
def test_skills_not_invoked_from_their_description_get_no_missing_trigger(
    extra: str, flagged: bool
) -> None:
    text = skill_text(description="Drafts product specs for a team.", extra_frontmatter=extra)
    assert ("MISSING_TRIGGER" in flags(text)) is flagged


@pytest.mark.parametrize(("n", "refs", "flagged"), [(800, False, False), (801, False, True)])
def test_bloated_skill_over_800_lines_without_references(n: int, refs: bool, flagged: bool) -> None:
    assert ("BLOATED_SKILL" in flags(lines_text(n, description=GOOD_DESC))) is flagged


def test_bloated_skill_not_flagged_with_references() -> None:
    entries = (FileEntry("references/r.md", 5, False),)
    assert "BLOATED_SKILL" not in flags(lines_text(900, description=GOOD_DESC), entries=entries)


def test_orphan_reference_dead_link_only() -> None:
    text = skill_text(
        "[a](references/a.md#anchor) [b](references/sub/b.md) [c](references/missing.md)\n"
        "[c again](references/missing.md)\n",
        description=GOOD_DESC,
    )
    existing = frozenset({"references/a.md", "references/sub/b.md"})
    # one finding per distinct dead target
    assert flags(text, existing) == ["ORPHAN_REFERENCE"]


def test_dead_cross_ref_and_agent_links() -> None:
    text = skill_text(
        "see skills/alive and skills/dead; [judge](../../agents/judge.md)\n",
        description=GOOD_DESC,
    )
    assert flags(text, frozenset({"../alive"})) == ["DEAD_CROSS_REF", "DEAD_CROSS_REF"]
    assert flags(text, frozenset({"../alive", "../dead", "../../agents/judge.md"})) == []


@pytest.mark.parametrize(
    "link", ["[other](../../skills/other/SKILL.md)", "[other](skills/other)", "[o]: skills/other"]
)
def test_a_dead_cross_reference_inside_a_link_is_one_finding(link: str) -> None:
    text = skill_text(f"{link}\n", description=GOOD_DESC)
    found, notes = detect_anti_patterns(parse(text), frozenset())
    assert [a.flag for a in found] == ["DEAD_CROSS_REF"]
    assert notes == ()
    # either reading of the target resolving it is enough
    p = parse(text)
    (check,) = p.link_checks
    for candidate in check.candidates:
        assert flags(text, frozenset({candidate})) == []
    assert p.cross_references == ("other",)


def test_a_skills_path_inside_a_reference_link_is_only_the_reference_check() -> None:
    text = skill_text("[r](references/skills/guide.md)\n", description=GOOD_DESC)
    assert flags(text) == ["ORPHAN_REFERENCE"]


def test_dead_local_links_and_unlinked_references_are_notes() -> None:
    entries = (FileEntry("references/unlinked.md", 3, False),)
    p = parse(skill_text("[s](scripts/run.py)\n", description=GOOD_DESC), entries=entries)
    found, notes = detect_anti_patterns(p, frozenset())
    assert found == ()
    assert sorted(n.code for n in notes) == ["DEAD_LOCAL_LINK", "UNLINKED_REFERENCE"]


@pytest.mark.parametrize(
    ("count", "penalty"), [(0, 1.0), (1, 0.95), (3, 0.85), (5, 0.75), (10, 0.5), (14, 0.5)]
)
def test_penalty(count: int, penalty: float) -> None:
    assert anti_pattern_penalty(count) == pytest.approx(penalty)
