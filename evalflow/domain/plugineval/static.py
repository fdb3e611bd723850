"""Layer 1 — static analysis: the six sub-checks with PLUGINEVAL.md's constants, exactly.

Each sub-check maps a `ParsedSkill` to [0, 1]. `STATIC_TO_DIMENSION` says which dimension
each feeds; the anti-pattern penalty is applied once, on the composite (SPEC §2), and is
reported beside the sub-scores.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from evalflow.domain.plugineval.antipatterns import (
    TRIGGER_RE,
    AntiPattern,
    anti_pattern_penalty,
    detect_anti_patterns,
)
from evalflow.domain.plugineval.model import Finding
from evalflow.domain.plugineval.parser import ParsedSkill, word_starts

STATIC_TO_DIMENSION: dict[str, str] = {
    "frontmatter_quality": "triggering_accuracy",
    "orchestration_wiring": "orchestration_fitness",
    "progressive_disclosure": "progressive_disclosure",
    "structural_completeness": "structural_completeness",
    "token_efficiency": "token_efficiency",
    "ecosystem_coherence": "ecosystem_coherence",
}

_PROACTIVE_RE = re.compile(r"\bproactively\b", re.IGNORECASE)
_EXTRA_TRIGGER_RE = re.compile(
    r"\bautomatically\b|\balways\s+use\b|\btrigger\b|\binvoke\b", re.IGNORECASE
)
USE_CASE_RE = re.compile(
    r",\s*(?:or\s+)?(?:when|for|during|implementing|building|creating|debugging|testing|"
    r"deploying|configuring|setting up)",
    re.IGNORECASE,
)
_CONTEXT_RE = re.compile(r"\b(when\s+\w+ing|for\s+\w+ing|during\s+\w+ing)\b", re.IGNORECASE)

_OUTPUT_FORMAT_RE = re.compile(r"\boutput\b.*\bformat\b|\bformat\b.*\boutput\b|\breturn.*json\b")


_Word = tuple[str, re.Pattern[str]]


def _words(*words: str, tail: str = r"s?\b") -> tuple[_Word, ...]:
    """Whole-file alternatives `\bword<tail>`, each as (word, pattern): `str.find` finds the
    word, many times faster than a regex scan of the file for the alternation."""
    return tuple((w, re.compile(re.escape(w) + tail)) for w in words)


# The PLUGINEVAL.md form of each is in its comment.
# \breturns?\b|\bproduces?\b|\boutputs?\b|\bgenerates?\b
_RETURNS = _words("return", "produce", "output", "generate")
# \binput\b|\breceives?\b|\baccepts?\b|\bparameters?\b|\bargs?\b
_INPUTS = _words("input", tail=r"\b") + _words("receive", "accept", "parameter", "arg")
# \borchestrat\w*\b|\bcoordinat\w*\b|\bdispatch\w*\b (`\w*\b` always matches)
_ORCHESTRATOR = _words("orchestrat", "coordinat", "dispatch", tail="")
# decision|when to use|comparison|tradeoff (no boundaries: a substring test)
_DECISION_WORDS = ("decision", "when to use", "comparison", "tradeoff")
# \brelated\b|\bsee also\b|\bcompanion\b|\bcomplement
_RELATED = _words("related", "see also", "companion", tail=r"\b") + _words("complement", tail="")


def _found_any(words: tuple[_Word, ...], text: str) -> bool:
    """Whether one of `words` matches with a word boundary before it."""
    return any(pattern.match(text, at) for word, pattern in words for at in word_starts(text, word))


def _clamp(x: float) -> float:
    return max(0.0, min(1.0, x))


def description_pushiness(description: str) -> float:
    """How strongly the description cues autonomous invocation, capped at 1."""
    score = 0.0
    if TRIGGER_RE.search(description):
        score += 0.25
    if _PROACTIVE_RE.search(description):
        score += 0.15
    if _EXTRA_TRIGGER_RE.search(description):
        score += 0.10
    use_cases = len(USE_CASE_RE.findall(description))
    if use_cases >= 3:
        score += 0.20
    elif use_cases >= 1:
        score += 0.10
    if _CONTEXT_RE.search(description):
        score += 0.15
    if len(description.strip()) >= 40:
        score += 0.10
    return min(1.0, score)


def frontmatter_quality(skill: ParsedSkill) -> float:
    """Name + description length + 0.60 × pushiness."""
    score = 0.0
    if skill.name and skill.name != skill.dir_name:
        score += 0.15
    elif skill.name:
        score += 0.10
    n = len(skill.description.strip())
    if n >= 100:
        score += 0.25
    elif n >= 60:
        score += 0.20
    elif n >= 30:
        score += 0.15
    elif n >= 10:
        score += 0.05
    score += 0.60 * description_pushiness(skill.description)
    return _clamp(score)


def _lines_with(text: str, needle: str) -> Iterator[str]:
    """Each line (split on `\n`) of `text` that holds `needle`, once."""
    at = text.find(needle)
    while at >= 0:
        end = text.find("\n", at)
        if end < 0:
            end = len(text)
        yield text[text.rfind("\n", 0, at) + 1 : end]
        at = text.find(needle, end)


def _has_output_format_line(text: str) -> bool:
    """One line with output…format, format…output or return…json.

    Only lines holding both keywords can match, so the regex runs on those alone, found by
    searching for one keyword; `.*` backtracking over every line of a long file, and then a
    Python step per line, is what made this check slow.
    """
    return any(
        _OUTPUT_FORMAT_RE.search(line) for line in _lines_with(text, "format") if "output" in line
    ) or any(
        _OUTPUT_FORMAT_RE.search(line) for line in _lines_with(text, "json") if "return" in line
    )


def orchestration_wiring(skill: ParsedSkill, code_blocks: int | None = None) -> float:
    """0.70 baseline for a worker, +I/O documentation, −0.15 for orchestrator language.

    `code_blocks` replaces the skill's block count (`--compat public` counts fences)."""
    text = skill.text_lower
    score = 0.70
    if _has_output_format_line(text):
        score += 0.10
    if _found_any(_RETURNS, text):
        score += 0.05
    if _found_any(_INPUTS, text):
        score += 0.10
    if (skill.code_block_count if code_blocks is None else code_blocks) >= 1:
        score += 0.05
    if _found_any(_ORCHESTRATOR, text):
        score -= 0.15
    return _clamp(score)


def progressive_disclosure(skill: ParsedSkill) -> float:
    """Line count vs the 200–600 sweet spot, plus references/ and assets/ bonuses."""
    return disclosure_score(
        skill.line_count, bool(skill.nonempty_reference_files), bool(skill.asset_files)
    )


def disclosure_score(lines: int, has_references: bool, has_assets: bool) -> float:
    """The progressive_disclosure formula on its inputs (`--compat public` reads them its way)."""
    if 200 <= lines <= 600:
        score = 0.60
    elif 100 <= lines < 200:
        score = 0.50
    elif 600 < lines <= 800:
        score = 0.40
    elif lines < 100:
        score = 0.20
    else:
        score = 0.15
    if has_references:
        score += 0.25 if lines > 400 else 0.15
    if has_assets:
        score += 0.15
    return _clamp(score)


def structural_completeness(skill: ParsedSkill, code_blocks: int | None = None) -> float:
    """Headings, code blocks (counted as blocks), languages, sections, tables, decisions.

    `code_blocks` replaces the skill's block count (`--compat public` counts fences)."""
    score = 0.0
    headings = skill.h2_count + skill.h3_count
    if headings >= 6:
        score += 0.20
    elif headings >= 4:
        score += 0.15
    elif headings >= 2:
        score += 0.10
    blocks = skill.code_block_count if code_blocks is None else code_blocks
    if blocks >= 3:
        score += 0.20
    elif blocks == 2:
        score += 0.15
    elif blocks == 1:
        score += 0.10
    languages = len(set(skill.code_languages))
    if languages >= 3:
        score += 0.15
    elif languages == 2:
        score += 0.10
    if skill.has_examples:
        score += 0.15
    if skill.has_troubleshooting:
        score += 0.15
    if skill.has_table:
        score += 0.10
    if any(word in skill.text_lower for word in _DECISION_WORDS):
        score += 0.05
    return _clamp(score)


def token_efficiency(skill: ParsedSkill) -> float:
    """1.0 − directive-density step − 0.4 × duplicate-line ratio."""
    score = 1.0
    density = skill.mna_count / max(skill.line_count, 1)
    if density > 0.5:
        score -= 0.4
    elif density > 0.2:
        score -= 0.2
    elif density > 0.1:
        score -= 0.1
    if skill.body_line_total:
        score -= 0.4 * (1.0 - skill.body_line_unique / skill.body_line_total)
    return _clamp(score)


def ecosystem_coherence(skill: ParsedSkill) -> float:
    """0.50 + min(0.25, 0.08 × cross-refs) + 0.25 for related/see-also language."""
    score = 0.50 + min(0.25, 0.08 * len(skill.cross_references))
    if _found_any(_RELATED, skill.text_lower):
        score += 0.25
    return _clamp(score)


SUB_CHECKS: dict[str, Callable[[ParsedSkill], float]] = {
    "frontmatter_quality": frontmatter_quality,
    "orchestration_wiring": orchestration_wiring,
    "progressive_disclosure": progressive_disclosure,
    "structural_completeness": structural_completeness,
    "token_efficiency": token_efficiency,
    "ecosystem_coherence": ecosystem_coherence,
}


@dataclass(frozen=True, slots=True)
class StaticResult:
    """Layer-1 output: sub-scores, the six dimensions they feed, anti-patterns, penalty."""

    sub_scores: dict[str, float]
    dimensions: dict[str, float]
    anti_patterns: tuple[AntiPattern, ...]
    penalty: float
    notes: tuple[Finding, ...]


def analyze_static(skill: ParsedSkill, existing: frozenset[str]) -> StaticResult:
    """Run the six sub-checks and the anti-pattern scan on one parsed skill."""
    sub = {name: fn(skill) for name, fn in SUB_CHECKS.items()}
    anti, notes = detect_anti_patterns(skill, existing)
    return StaticResult(
        sub_scores=sub,
        dimensions={STATIC_TO_DIMENSION[k]: v for k, v in sub.items()},
        anti_patterns=anti,
        penalty=anti_pattern_penalty(len(anti)),
        notes=notes,
    )
