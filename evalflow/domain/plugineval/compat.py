"""`--compat public`: the static layer as the public PluginEval tool computes it.

For users who must compare with published PluginEval scores. evalflow's own parser differs
from the public tool (`wshobson/agents` `plugins/plugin-eval`, checked at commit 367cb6a) on
purpose in the places docs/plugineval.md lists; this module re-reads the decoded SKILL.md
text by the public tool's rules instead, and leaves everything else (decoding, frontmatter
fields, the sub-check formulas that agree) to the normal path:

* L = newline count + 1; the body is what follows the second `---` of the file;
* code = every run of three backticks in the file (fence lines, not blocks), its word
  suffix the language; thresholds ≥ 5 / 3 / 1 fences for structure, ≥ 2 for orchestration;
* headings, "## Example"/"## Troubleshooting" markers and `skills/…` cross-references are
  read from the body, code included; a table anywhere in the file counts;
* token_efficiency's duplicate ratio is over every non-empty line of the file, skipping lines
  starting `---`;
* references/ and assets/ bonuses need any top-level file there (an empty one too);
* anti-patterns: OVER_CONSTRAINED above 15; ORPHAN_REFERENCE per `(references/…)` occurrence
  whose file name is not a top-level file of an existing references/; DEAD_CROSS_REF per
  `skills/…` occurrence that does not resolve; `../` links are not checked.

What is approximated: a `references/` directory is taken to exist when it holds a file (the
listing has files, not directories), and the frontmatter fields are evalflow's reading.
evalflow's notes (dead local links, unlinked references) are not produced in this mode.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

from evalflow.domain.plugineval.antipatterns import (
    EMPTY_DESCRIPTION_MIN_CHARS,
    TRIGGER_RE,
    AntiPattern,
    anti_pattern_penalty,
)
from evalflow.domain.plugineval.parser import (
    CROSS_REF_RE,
    EXAMPLES_RE,
    TROUBLESHOOTING_RE,
    LinkCheck,
    ParsedSkill,
    SkillText,
    bounded_matches,
    parsed_skill,
)
from evalflow.domain.plugineval.static import (
    STATIC_TO_DIMENSION,
    StaticResult,
    disclosure_score,
    ecosystem_coherence,
    frontmatter_quality,
    orchestration_wiring,
    structural_completeness,
    token_efficiency,
)

OVER_CONSTRAINED_ABOVE = 15
BLOATED_ABOVE = 800
_FENCE_RUN_RE = re.compile(r"```(\w*)")
_TABLE_RE = re.compile(r"\|.*\|.*\|")
_REFERENCE_LINK_RE = re.compile(r"\(references/([^)]+)\)")


@dataclasses.dataclass(frozen=True, slots=True)
class PublicFacts:
    """What the public tool counts differently; `skill` is the parse with those facts swapped."""

    skill: ParsedSkill
    fence_count: int
    cross_reference_candidates: tuple[tuple[str, ...], ...]
    top_reference_names: frozenset[str]
    has_assets: bool


def _body(text: str) -> str:
    if not text.startswith("---"):
        return text
    parts = text.split("---", 2)
    return parts[2] if len(parts) == 3 else text


# Where `str.splitlines` ends a line (`\r\n` ends one line at its `\r`).
_LINE_END_RE = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _dash_lines(text: str) -> list[str]:
    """The lines of `text.splitlines()` starting `---`, found by searching for `---` (a Python
    step per line was most of this module's cost)."""
    out: list[str] = []
    at = text.find("---")
    while at >= 0:
        end_match = _LINE_END_RE.search(text, at)
        end = end_match.start() if end_match is not None else len(text)
        if not at or _LINE_END_RE.match(text, at - 1):
            out.append(text[at:end])
        at = text.find("---", end)
    return out


def _repeated_lines(text: str) -> tuple[int, int]:
    """(total, distinct) of the stripped non-empty lines not starting `---`: what the public
    tool's duplicate ratio counts."""
    kept = Counter(filter(None, map(str.strip, text.splitlines())))
    dashed = Counter(line.strip() for line in _dash_lines(text))
    gone = sum(1 for value, n in dashed.items() if kept[value] == n)
    return kept.total() - dashed.total(), len(kept) - gone


def _top_level(relpaths: list[str], folder: str) -> list[str]:
    prefix = folder + "/"
    return [
        p[len(prefix) :] for p in relpaths if p.startswith(prefix) and "/" not in p[len(prefix) :]
    ]


def public_facts(base: SkillText) -> PublicFacts:
    """Read `base.text` by the public tool's rules (module docstring)."""
    text = base.text
    body = _body(text)
    lined = "\n" + body.strip()
    fences = [m.group(1) for m in _FENCE_RUN_RE.finditer(text)]
    refs: list[str] = []
    candidates: list[tuple[str, ...]] = []
    for m in bounded_matches(CROSS_REF_RE, body, "-"):
        prefix, _, rest = m.group(0).partition("/")
        ref = rest if prefix in ("skill", "skills") else m.group(0)
        refs.append(ref)
        candidates.append((f"../{ref}", ref) if prefix == "sub-skills" else (f"../{ref}",))
    repeated, distinct = _repeated_lines(text)
    view = parsed_skill(
        base,
        line_count=len(text.split("\n")),
        h2_count=lined.count("\n## "),
        h3_count=lined.count("\n### "),
        code_languages=tuple(lang for lang in fences if lang),
        has_examples=EXAMPLES_RE.search(body) is not None,
        has_troubleshooting=TROUBLESHOOTING_RE.search(body) is not None,
        has_table=_TABLE_RE.search(text) is not None,
        cross_references=tuple(refs),
        link_checks=tuple(
            LinkCheck("cross_skill", ref, cands)
            for ref, cands in dict(zip(refs, candidates, strict=True)).items()
        ),
        mentioned_references=None,
        body_line_total=repeated,
        body_line_unique=distinct,
    )
    relpaths = [f.relpath for f in base.files.files]
    return PublicFacts(
        skill=view,
        fence_count=len(fences),
        cross_reference_candidates=tuple(candidates),
        top_reference_names=frozenset(n.lower() for n in _top_level(relpaths, "references")),
        has_assets=bool(_top_level(relpaths, "assets")),
    )


def _anti_patterns(facts: PublicFacts, existing: frozenset[str]) -> tuple[AntiPattern, ...]:
    skill = facts.skill
    found: list[AntiPattern] = []
    if skill.mna_count > OVER_CONSTRAINED_ABOVE:
        found.append(
            AntiPattern(
                "OVER_CONSTRAINED",
                f"MUST/ALWAYS/NEVER appear {skill.mna_count} times "
                f"(public tool: flagged above {OVER_CONSTRAINED_ABOVE})",
            )
        )
    desc_len = len(skill.description.strip())
    if desc_len < EMPTY_DESCRIPTION_MIN_CHARS:
        found.append(
            AntiPattern("EMPTY_DESCRIPTION", f"description is {desc_len} characters after strip")
        )
    if skill.description_triggered and not TRIGGER_RE.search(skill.description):
        found.append(AntiPattern("MISSING_TRIGGER", "description lacks a trigger phrase"))
    has_references = bool(skill.reference_files)
    if skill.line_count > BLOATED_ABOVE and not has_references:
        found.append(
            AntiPattern("BLOATED_SKILL", f"SKILL.md has {skill.line_count} lines, no references/")
        )
    if has_references:
        for m in _REFERENCE_LINK_RE.finditer(skill.text):
            if m.group(1).rsplit("/", 1)[-1].lower() not in facts.top_reference_names:
                found.append(
                    AntiPattern(
                        "ORPHAN_REFERENCE",
                        f"link to 'references/{m.group(1)}': no such file name in references/",
                    )
                )
    for ref, cands in zip(skill.cross_references, facts.cross_reference_candidates, strict=True):
        if not any(c in existing for c in cands):
            found.append(AntiPattern("DEAD_CROSS_REF", f"cross-reference '{ref}' does not resolve"))
    return tuple(found)


def analyze_static_public(facts: PublicFacts, existing: frozenset[str]) -> StaticResult:
    """The six sub-checks and the anti-patterns as the public tool computes them."""
    skill = facts.skill
    fences = facts.fence_count
    structure_blocks = 3 if fences >= 5 else 2 if fences >= 3 else 1 if fences >= 1 else 0
    sub = {
        "frontmatter_quality": frontmatter_quality(skill),
        "orchestration_wiring": orchestration_wiring(skill, code_blocks=int(fences >= 2)),
        "progressive_disclosure": disclosure_score(
            skill.line_count, bool(facts.top_reference_names), facts.has_assets
        ),
        "structural_completeness": structural_completeness(skill, code_blocks=structure_blocks),
        "token_efficiency": token_efficiency(skill),
        "ecosystem_coherence": ecosystem_coherence(skill),
    }
    anti = _anti_patterns(facts, existing)
    return StaticResult(
        sub_scores=sub,
        dimensions={STATIC_TO_DIMENSION[k]: v for k, v in sub.items()},
        anti_patterns=anti,
        penalty=anti_pattern_penalty(len(anti)),
        notes=(),
    )
