"""The six anti-pattern flags of SPEC §2 and their multiplicative penalty.

`penalty = max(0.5, 1 − 0.05 × count)` where count is the number of findings (one per
dead target, so two distinct dead links are two findings; a target repeated in the text
is one). OVER_CONSTRAINED fires at 15 or more MUST/ALWAYS/NEVER, following seed 004
(the public tool uses "more than 15"). Dead links inside the skill that are not under
`references/` and reference files nothing links to are notes, not anti-patterns.

MISSING_TRIGGER and frontmatter_quality's pushiness share one trigger definition,
`TRIGGER_RE` (the public tool's current one, a superset of SPEC §2's four phrases), so a
description is never both credited with a trigger and flagged for lacking one. A skill that
is not invoked from its description (`disable-model-invocation: true`, or a `paths:` glob)
gets no MISSING_TRIGGER, as in the public tool.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evalflow.domain.plugineval.model import Finding
from evalflow.domain.plugineval.parser import ParsedSkill

OVER_CONSTRAINED_MIN = 15
EMPTY_DESCRIPTION_MIN_CHARS = 20
BLOATED_MAX_LINES = 800
PENALTY_STEP = 0.05
PENALTY_FLOOR = 0.5

FLAGS: tuple[str, ...] = (
    "OVER_CONSTRAINED",
    "EMPTY_DESCRIPTION",
    "MISSING_TRIGGER",
    "BLOATED_SKILL",
    "ORPHAN_REFERENCE",
    "DEAD_CROSS_REF",
)

# "Use when", "Use this skill when", "should be used when", "Use after/before/whenever",
# "Use proactively", "Trigger(s) when/on", "Auto-loads when/on".
TRIGGER_RE = re.compile(
    r"\b(?:should\s+be\s+)?used?\s+(?:this\s+skill\s+)?(?:immediately\s+)?"
    r"(?:when|after|before|whenever)\b"
    r"|\buse\s+proactively\b|\btrigger(?:s)?\s+(?:when|on)\b|\bauto[-\s]?loads?\s+(?:when|on)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class AntiPattern:
    """One anti-pattern finding: the flag and a one-line explanation with the evidence."""

    flag: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"flag": self.flag, "message": self.message}


def anti_pattern_penalty(count: int) -> float:
    """max(0.5, 1 − 0.05 × count)."""
    return max(PENALTY_FLOOR, 1.0 - PENALTY_STEP * count)


def detect_anti_patterns(
    skill: ParsedSkill, existing: frozenset[str]
) -> tuple[tuple[AntiPattern, ...], tuple[Finding, ...]]:
    """Return (anti-patterns, notes). `existing` holds the link candidates that exist on disk."""
    found: list[AntiPattern] = []
    notes: list[Finding] = []
    if skill.mna_count >= OVER_CONSTRAINED_MIN:
        found.append(
            AntiPattern(
                "OVER_CONSTRAINED",
                f"MUST/ALWAYS/NEVER appear {skill.mna_count} times "
                f"(flagged at ≥ {OVER_CONSTRAINED_MIN})",
            )
        )
    desc_len = len(skill.description.strip())
    if desc_len < EMPTY_DESCRIPTION_MIN_CHARS:
        found.append(
            AntiPattern(
                "EMPTY_DESCRIPTION",
                f"description is {desc_len} characters after strip "
                f"(needs ≥ {EMPTY_DESCRIPTION_MIN_CHARS})",
            )
        )
    if skill.description_triggered and not TRIGGER_RE.search(skill.description):
        found.append(
            AntiPattern(
                "MISSING_TRIGGER",
                "description lacks a trigger phrase ('use when', 'use this skill when', "
                "'should be used when', 'use after/before', 'use proactively', 'trigger when')",
            )
        )
    if skill.line_count > BLOATED_MAX_LINES and not skill.reference_files:
        found.append(
            AntiPattern(
                "BLOATED_SKILL",
                f"SKILL.md has {skill.line_count} lines (> {BLOATED_MAX_LINES}) "
                "and no file under references/",
            )
        )
    for check in skill.link_checks:
        if any(c in existing for c in check.candidates):
            continue
        if check.kind == "reference":
            found.append(
                AntiPattern("ORPHAN_REFERENCE", f"link to '{check.target}' has no such file")
            )
        elif check.kind == "cross_skill":
            found.append(
                AntiPattern(
                    "DEAD_CROSS_REF",
                    f"cross-reference '{check.target}' does not resolve "
                    f"(looked for {', '.join(check.candidates)} from the skill directory)",
                )
            )
        else:
            notes.append(
                Finding(
                    "DEAD_LOCAL_LINK",
                    "note",
                    f"link to '{check.target}' has no such file in the skill directory",
                    skill.location,
                )
            )
    for f in skill.unlinked_reference_files:
        notes.append(
            Finding(
                "UNLINKED_REFERENCE",
                "note",
                f"{f.relpath} is not linked or mentioned from SKILL.md (outside code)",
                skill.location,
            )
        )
    return tuple(found), tuple(notes)
