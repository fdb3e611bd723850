"""Reading an acceptance criterion's wording for SPEC's decomposition rules (seed 002).

Shared by the offline drafter (`baseline_draft`) and the linter (`baseline_lint`), so the
two never disagree on what an AC says: its Given/When/Then parts, its observable clauses,
the named fields of an emitted/returned/persisted artefact (conjunction/payload rule), its
alternatives — in a clause, or in the Given as independent paths — and whether the product
controls the choice (disjunction rule), an
asynchronous ingress (wiring rule), outcome wording (T-outcome) and the test level the fixed
policy demands. Pure, deterministic regular-expression work on text evalflow itself holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Level = Literal["unit", "e2e", "both"]

_GWT = re.compile(r"\b(given|when|then)\b", re.IGNORECASE)
_EARS = re.compile(
    r"^(?P<cond>(?:when|if|while|where)\b.*?)[,]?\s*(?:then\s+)?(?:the\s+\w+(?:\s+\w+)?\s+)?shall\b(?P<then>.*)$",
    re.IGNORECASE,
)
_PROSE_WHEN = re.compile(r"^(?:when|whenever|if|once)\s+([^,]+),\s*(.+)$", re.IGNORECASE)
_ARTEFACT = re.compile(
    r"\b(emits?|emitted|returns?|returned|responds?|response|body|sends?|sent|persists?|"
    r"persisted|stores?|stored|saves?|saved|publishes?|published|payload|event|message|"
    r"record|row|notification)\b",
    re.IGNORECASE,
)
_FIELDS = re.compile(
    r"\b(?:with|including|containing|carrying|linked\s+to|that\s+(?:has|have|carries|includes))\s+"
    r"(?P<list>[^.;]+)",
    re.IGNORECASE,
)
_STATUS_CODE = re.compile(r"^(?:a\s+|an\s+|the\s+)?(?:status\s+)?[1-5]\d\d\b", re.IGNORECASE)
_OUTCOME = re.compile(
    r"\bbecomes?\b|\bpersist(?:s|ed)?\b|\bstored\b|\bsaved\b|\bshows?\s+(?:the\s+|a\s+)?status\b"
    r"|\bstatus\s+(?:is|becomes|changes|updates)\b|\breflects?\b|\bupdates?\s+(?:the\s+|its\s+)?"
    r"(?:\w+\s+)?status\b|\bsets?\s+(?:the\s+|its\s+)?(?:\w+\s+)?status\b",
    re.IGNORECASE,
)
_INGRESS = re.compile(
    r"\bweb[\s-]?hooks?\b|\bcallbacks?\b|\binbound\b|\bincoming\s+(?:event|message|request)s?\b"
    r"|\bqueue\b|\bconsumer\b|\bsubscriber\b|\bpub/?sub\b|\bmessage\s+(?:arrives|is\s+received)\b",
    re.IGNORECASE,
)
_E2E = re.compile(
    r"\b(?:GET|POST|PUT|PATCH|DELETE)\s+/|\bendpoint\b|\bAPI\b|\bHTTP\b|\bresponse\b"
    r"|\b(?:with|returns?|answers?|responds?(?:\s+with)?|is)\s+(?:a\s+|an\s+|status\s+)?[1-5]\d\d\b"
    r"|\bweb[\s-]?hooks?\b|\bpersist(?:s|ed)?\b|\bstored\b|\bsaved\b|\bdatabase\b|\brows?\b"
    r"|\bstatus\s+(?:becomes|is\s+set|changes)\b|\bsets?\s+(?:the\s+)?(?:\w+\s+)?status\b"
    r"|\bpage\b|\bbrowser\b|\bclicks?\b|\bbutton\b|\bscreen\b",
    re.IGNORECASE,
)
_LOGIC = re.compile(
    r"\bcomput(?:e|es|ed)\b|\bcalculat\w*|\b\d+\s+(?:days?|hours?|minutes?)\s+(?:after|before)\b"
    r"|\b(?:one|two|three|four|five|seven|ten|\w+teen)\s+days?\s+(?:after|before)\b|\bsum\b"
    r"|\bconcatenat\w*|\bformat(?:s|ted)?\b|\bvalidat\w*|\btrim\w*|\bpars(?:e|es|ed)\b"
    r"|\bround(?:s|ed)?\b|\b(?:numeric\s+)?addition\b|\barithmetic\b|\bat\s+most\b|\bat\s+least\b|\bdefaults?\b",
    re.IGNORECASE,
)
_PRODUCT_CHOICE = re.compile(
    r"\bproduct\s+(?:chooses|decides|selects|picks)\b|\bconfigurable\b|\bconfigured\b"
    r"|\bby\s+default\b|\bdefaults?\s+to\b|\(\s*\w+\s+by\s+default\s*\)|\bsetting\b",
    re.IGNORECASE,
)
_OR = re.compile(r"\s+or\s+", re.IGNORECASE)
# A verb that starts a second behaviour after "and" in a check proposition.
BEHAVIOUR_VERBS = (
    "returns|responds|answers|emits|sends|persists|stores|saves|creates|rejects|shows|displays|"
    "records|updates|deletes|removes|publishes|writes|dispatches|grants|notifies|redirects|"
    "renders|charges|schedules|logs|changes|keeps|remains|stays"
)
_CLAUSE_SPLIT = re.compile(
    rf"\s*;\s*|,\s+and\s+|,?\s+and\s+(?=(?:then\s+)?(?:(?:the|a|an|it|its|they|no)\s|(?:{BEHAVIOUR_VERBS})\b))",
    re.IGNORECASE,
)
_JOINED = re.compile(rf",?\s+and\s+(?:then\s+)?(?:{BEHAVIOUR_VERBS})\b", re.IGNORECASE)


@dataclass(frozen=True)
class Reading:
    """What an AC's wording says, for the decomposition rules."""

    given: str
    when: str
    clauses: tuple[str, ...]
    fields: tuple[str, ...]
    artefact: str | None
    alternatives: tuple[str, ...]
    given_alternatives: bool  # the "or" is in the precondition: each option is its own path
    product_choice: bool
    ingress: bool
    outcome: bool
    level: Level


def _strip(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" ,.;:")


def split_gwt(text: str) -> tuple[str, str, str]:
    """(given, when, then) of a Given/When/Then or EARS sentence; the whole text is `then`."""
    ears = _EARS.match(text.strip())
    if ears:
        return "", _strip(ears.group("cond")), _strip(ears.group("then"))
    parts: dict[str, str] = {}
    marks = list(_GWT.finditer(text))
    if not marks or not any(m.group(1).lower() == "then" for m in marks):
        prose = _PROSE_WHEN.match(text.strip())
        if prose:
            return "", _strip(prose.group(1)), _strip(prose.group(2))
        return "", "", _strip(text)
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        key = m.group(1).lower()
        parts.setdefault(key, _strip(text[m.end() : end]))
    return parts.get("given", ""), parts.get("when", ""), parts.get("then", "")


def named_fields(clause: str) -> tuple[tuple[str, ...], str | None, int]:
    """The named fields of an emitted/returned/persisted artefact in `clause`, the artefact,
    and where the field list starts (len(clause) when there is none)."""
    for fields_m in _FIELDS.finditer(clause):
        artefact = None
        for a in _ARTEFACT.finditer(clause, 0, fields_m.start()):
            artefact = a
        if artefact is None:
            continue
        raw = re.split(r",\s*(?:and\s+)?|\s+and\s+|\s+as\s+well\s+as\s+", fields_m.group("list"))
        fields = tuple(_strip(f) for f in raw if _strip(f) and not _STATUS_CODE.match(_strip(f)))
        if len(fields) >= 2:
            return fields, artefact.group(1).lower(), fields_m.start()
    return (), None, len(clause)


# Spans whose words are not the AC's own wording: quoted strings and code ("Invalid input or
# not", `a or b`). A quote opens only after a non-word character, so "user's" stays a word.
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|`[^`]*`|(?<!\w)'[^']*'(?!\w)")
# "A, B or other C" names a category (any C), not alternative behaviours.
_CATEGORY = re.compile(
    r"\s+or\s+(?:any\s+)?(?:other|similar|more|less|fewer|greater)\b", re.IGNORECASE
)
_VERB = re.compile(
    rf"\b(?:is|are|was|were|can|must|should|shall|will|may|has|have|gets?|documents?|explains?|"
    rf"describes?|lists?|mentions?|says?|tells?|states?|{BEHAVIOUR_VERBS})\b",
    re.IGNORECASE,
)
# The words around the "or": up to four before it, the option phrase after it.
_LEFT = re.compile(r"((?:\b[\w`'\"-]+\b[\s,]*){1,4})$")
_RIGHT = re.compile(r"(?:by\s+|via\s+|as\s+)?[\w`'\"-]+(?:\s+[\w`'\"-]+){0,3}")


def _mask_quoted(text: str) -> str:
    """`text` with quoted strings and code spans blanked to '_' (same length, same offsets)."""
    return _QUOTED.sub(lambda m: "_" * len(m.group(0)), text)


def alternatives(clause: str) -> tuple[str, ...]:
    """The options of an "A or B" in `clause` (empty when there is no disjunction).

    Not a disjunction of behaviours: an "or" inside a quoted string or code span, "and/or"
    (no space before "or"), a category ("objects, arrays or other non-scalar types"), and an
    "or" in the clause's subject ("The UI or help text documents …": whether either place is
    enough or each must hold, the words do not say, so no rule can be proven from them).
    """
    masked = _mask_quoted(clause)
    for m in _OR.finditer(masked):
        if _CATEGORY.match(masked, m.start()):
            continue
        if not _VERB.search(masked, 0, m.start()) and _VERB.search(masked, m.end()):
            continue  # a subject disjunction
        left, right = _LEFT.search(masked[: m.start()]), _RIGHT.match(masked, m.end())
        if left is None or right is None:
            continue
        return (
            _strip(clause[left.start(1) : left.end(1)]),
            _strip(re.split(r"[;,(]", clause[right.start() : right.end()])[0]),
        )
    return ()


def precondition_alternatives(given: str) -> tuple[str, ...]:
    """The options of an "A or B" state in a Given ("X or Y is empty or missing" → empty /
    missing): the word before the "or" and the words after it up to punctuation. Skipped like
    `alternatives`: quoted and code spans, categories, and an "or" in the subject ("X or Y")."""
    masked = _mask_quoted(given)
    for m in _OR.finditer(masked):
        if _CATEGORY.match(masked, m.start()):
            continue
        if not _VERB.search(masked, 0, m.start()) and _VERB.search(masked, m.end()):
            continue
        left = re.search(r"([\w-]+)$", masked[: m.start()])
        right = re.match(r"[\w-]+(?:\s+[\w-]+){0,2}", masked[m.end() :])
        if left and right:
            return (given[left.start(1) : left.end(1)], given[m.end() : m.end() + right.end()])
    return ()


def read(text: str) -> Reading:
    given, when, then = split_gwt(text)
    # The field list of the payload rule is one clause's object: split only what precedes it.
    fields, artefact, at = named_fields(then)
    head, tail = then[:at], then[at:]
    parts = [_strip(c) for c in _CLAUSE_SPLIT.split(head)]
    if tail:
        parts[-1] = f"{parts[-1]} {tail.strip()}"
    clauses = tuple(c for c in (_strip(c) for c in parts) if c)
    alts: tuple[str, ...] = ()
    for clause in clauses:
        alts = alternatives(clause)
        if alts:
            break
    level = test_level(text)
    return Reading(
        given=given,
        when=when,
        clauses=clauses or (_strip(text),),
        fields=fields,
        artefact=artefact,
        alternatives=alts or precondition_alternatives(given),
        given_alternatives=not alts and bool(precondition_alternatives(given)),
        product_choice=bool(alts) and bool(_PRODUCT_CHOICE.search(text)),
        ingress=bool(_INGRESS.search(text)) and bool(_OUTCOME.search(text) or fields),
        outcome=bool(_OUTCOME.search(text)),
        level=level,
    )


# After "and", a back-reference to what the first verb produced ("… posts X and shows the
# returned result"): one behaviour observed at its end, not two.
_CHAINED = re.compile(
    r"\b(?:its|their|the)\s+(?:returned|resulting|computed)\b|\b(?:its|their|the)\s+results?\b",
    re.IGNORECASE,
)


def joins_behaviours(proposition: str) -> bool:
    """A proposition that joins two behaviours with "and" ("… returns X and emits Y"); not a
    chain whose second verb acts on the first one's result ("… is routed to the Add logic and
    answers 200 with its result": the answer cannot be observed without the routing)."""
    masked = _mask_quoted(proposition)
    return any(
        not _CHAINED.search(masked, m.end(), _next_join(masked, m.end()))
        for m in _JOINED.finditer(masked)
    )


def _next_join(text: str, start: int) -> int:
    nxt = _JOINED.search(text, start)
    return nxt.start() if nxt else len(text)


def says_outcome(text: str) -> bool:
    """Outcome wording ("becomes", "persisted", "shows status", ...): a T-outcome check."""
    return bool(_OUTCOME.search(text))


def test_level(text: str) -> Level:
    """The level the fixed policy demands for `text`: pure logic ⇒ unit, HTTP/contract/
    persistence ⇒ e2e, both ⇒ both."""
    e2e, logic = bool(_E2E.search(text)), bool(_LOGIC.search(text))
    return "both" if e2e and logic else ("e2e" if e2e else "unit")


def starts_with_verb(clause: str) -> bool:
    return bool(re.match(rf"(?:{BEHAVIOUR_VERBS})\b", clause, re.IGNORECASE))


def has_logic(text: str) -> bool:
    """Wording of pure/business logic (computed, N days after, concatenated, at most, ...)."""
    return bool(_LOGIC.search(text))
