"""Out-of-scope items as items: their matching phrase, where they come from, and how code is
matched against them to propose (never decide) scope candidates.

An exclusion is one list item (or `;`-separated clause) of the PRD's out-of-scope section, or
of the run's spec.md "Out of Scope" / "Non-Goals" sections, or an "Assumptions" item that
states an exclusion (`EXCLUSION_STATEMENT`: "out of scope", "not supported", "does not add",
"handled upstream", …). The item's text is kept whole, parentheticals included, so a reader
sees "Cloud sync (local storage only)" as written; its *phrase* — the words it excludes — is
the text without parentheticals and without a trailing explanation (after `:`, ` — `, `;` or
the first sentence end): "Cloud sync". A parenthetical describes what *is* in scope as often
as what is not, so its words never become match terms.

Matching (`phrase_hits`): the phrase's words must appear as one contiguous run of whole
words in the code line, each word equal up to a plural `s`/`es` (`private repositories`
needs both words in order; a `Repository` class is no hit). Code words are the line split
at non-alphanumerics and underscores only — camelCase is *not* split, so `readFileSync`
never yields "sync" and `new Date()` only meets a phrase that is exactly "date". A benchmark's
frozen `out_of_scope_keywords` (operator-chosen word prefixes) are matched at the start of
those same words (`keyword_hits`). Either kind of hit is a candidate for adjudication.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from evalflow.domain.models import PRD
from evalflow.domain.side_metrics.spec_artifacts import HEADING, LIST_ITEM, SpecArtifacts

OUT_OF_SCOPE_SECTION = re.compile(
    r"out[\s-]of[\s-]scope|non[\s-]?goals?|not\s+in\s+scope|exclusions?|won'?t\s+do",
    re.IGNORECASE,
)
ASSUMPTIONS_SECTION = re.compile(r"\bassumptions?\b", re.IGNORECASE)
EXCLUSION_STATEMENT = re.compile(
    r"\bout[\s-]of[\s-]scope\b|\bnot\s+in\s+scope\b|\bnon[\s-]?goals?\b|\bexclud\w*"
    r"|\bnot\s+(?:supported|included|provided|implemented|handled|covered)\b"
    r"|\bdoes\s+not\s+(?:add|include|support|provide|handle|implement)\b"
    r"|\bhandled\s+upstream\b|\bwon'?t\s+(?:be\s+)?(?:supported|built|implemented)\b",
    re.IGNORECASE,
)
_BOLD_LABEL = re.compile(r"^\s*\*\*([^*]+)\*\*\s*:?\s*(.*)$")
_PARENTHETICAL = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_EXPLANATION = re.compile(r"\s*(?::|;|\s[—–-]\s|\.\s|\.$).*$")
_MARKUP = re.compile(r"[*_`~]")
_CODE_WORD = re.compile(r"[A-Za-z0-9]+")
_LABEL_LEVEL = 7  # deeper than any heading: the next heading of any level closes it


class Exclusion(BaseModel):
    """One out-of-scope item: its text as written, the phrase it excludes, where it is."""

    model_config = ConfigDict(frozen=True)

    text: str
    phrase: tuple[str, ...]
    ref: str
    source: str  # "prd" or "spec"

    @property
    def phrase_text(self) -> str:
        return " ".join(self.phrase)


def phrase_of(text: str) -> tuple[str, ...]:
    """The lower-cased words an item excludes (see the module docstring)."""
    head = _MARKUP.sub("", text)
    while _PARENTHETICAL.search(head):
        head = _PARENTHETICAL.sub(" ", head)
    head = _EXPLANATION.sub("", head.strip())
    return tuple(w.lower() for w in _CODE_WORD.findall(head))


def exclusion(text: str, ref: str, source: str) -> Exclusion | None:
    phrase = phrase_of(text)
    return Exclusion(text=text, phrase=phrase, ref=ref, source=source) if phrase else None


def prd_exclusions(prd: PRD) -> list[Exclusion]:
    """The PRD's out-of-scope items (parsed as items by `evalflow.domain.prd`)."""
    found = [exclusion(i.text, f"{prd.source}:{i.line}", "prd") for i in prd.out_of_scope]
    return [e for e in found if e is not None]


def spec_exclusions(artifacts: SpecArtifacts) -> list[Exclusion]:
    """Exclusions the run's spec files declare (sections in the module docstring)."""
    found: list[Exclusion] = []
    for spec_file in artifacts.files:
        if spec_file.role != "spec":
            continue
        section: str | None = None
        level = 0
        for number, raw in enumerate(spec_file.text.split("\n"), start=1):
            heading = HEADING.match(raw)
            label = _BOLD_LABEL.match(raw) if heading is None else None
            line = raw
            if heading is not None:
                depth, title = len(heading.group(1)), heading.group(2)
                kind = _section_kind(title)
                if kind is not None:
                    section, level = kind, depth
                elif section is not None and depth <= level:
                    section = None
                continue
            if label is not None:
                # A bold label (`**Out of Scope**: …`) opens a section until the next label.
                labelled = _section_kind(label.group(1))
                if labelled is not None:
                    section, level, line = labelled, _LABEL_LEVEL, label.group(2)
                elif level == _LABEL_LEVEL:
                    section = None
            if section is None or not line.strip():
                continue
            item = LIST_ITEM.match(line)
            clauses = [item.group(3)] if item else _clauses(line.strip())
            for clause in clauses:
                if section == "assumptions" and not EXCLUSION_STATEMENT.search(clause):
                    continue
                made = exclusion(clause, f"{spec_file.path}:{number}", "spec")
                if made is not None:
                    found.append(made)
    return found


def _section_kind(title: str) -> str | None:
    if OUT_OF_SCOPE_SECTION.search(title):
        return "out_of_scope"
    if ASSUMPTIONS_SECTION.search(title):
        return "assumptions"
    return None


def _clauses(paragraph: str) -> list[str]:
    """A paragraph split at `;` outside parentheses: "a; b (c; d)" → ["a", "b (c; d)"]."""
    parts, depth, current = [], 0, []
    for char in paragraph:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == ";" and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    parts.append("".join(current).strip())
    return [p for p in parts if p]


def code_words(line: str) -> list[str]:
    """Lower-cased words of a code line; camelCase is deliberately not split."""
    return [w.lower() for w in _CODE_WORD.findall(line)]


def _same_word(code: str, wanted: str) -> bool:
    return code in (wanted, f"{wanted}s", f"{wanted}es") or wanted in (f"{code}s", f"{code}es")


def phrase_hits(line: str, exclusions: Iterable[Exclusion]) -> list[Exclusion]:
    """The exclusions whose whole phrase occurs as contiguous whole words in the line."""
    words = code_words(line)
    hits: list[Exclusion] = []
    for item in exclusions:
        n = len(item.phrase)
        if any(
            all(_same_word(words[i + k], item.phrase[k]) for k in range(n))
            for i in range(len(words) - n + 1)
        ):
            hits.append(item)
    return hits


def keyword_hits(line: str, keywords: Sequence[str]) -> list[str]:
    """The benchmark's frozen keywords some code word of the line starts with."""
    words = code_words(line)
    return [k for k in keywords if any(w.startswith(k) for w in words)]


class OutOfScope(BaseModel):
    """What a run must not build: the PRD's exclusions (S, R), the benchmark's frozen
    keywords, and the exclusions the run's own spec declares (E category proposals only)."""

    model_config = ConfigDict(frozen=True)

    prd: tuple[Exclusion, ...] = ()
    keywords: tuple[str, ...] = ()
    spec: tuple[Exclusion, ...] = ()

    def hits(self, line: str) -> list[str]:
        """Labels of what the line matches: exclusion phrases, then frozen keywords."""
        return [e.phrase_text for e in phrase_hits(line, self.prd)] + keyword_hits(
            line, self.keywords
        )

    def source(self, label: str) -> str:
        """The PRD item a hit label comes from (its text as written)."""
        for item in self.prd:
            if item.phrase_text == label or any(label == w[: len(label)] for w in item.phrase):
                return item.text
        return "the benchmark's frozen out-of-scope keywords"


def out_of_scope(
    prd: PRD, keywords: Sequence[str] | None, artifacts: SpecArtifacts | None = None
) -> OutOfScope:
    """The PRD's exclusions, the frozen keywords (lower-cased) and the spec's exclusions."""
    return OutOfScope(
        prd=tuple(prd_exclusions(prd)),
        keywords=tuple(k.lower() for k in keywords or ()),
        spec=tuple(spec_exclusions(artifacts)) if artifacts is not None else (),
    )
