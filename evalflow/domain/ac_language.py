"""Reading an acceptance criterion's wording for SPEC's decomposition rules (seed 002).

Shared by the offline drafter (`baseline_draft`) and the linter (`baseline_lint`), so the
two never disagree on what an AC says: its Given/When/Then parts, its observable clauses,
its clauses (`split_clauses`: at "; AND", a joined BMAD "And", and an "and" that opens a
clause — its subject carried when the source leaves it out; never inside parentheses,
brackets, quotes, code or a dash aside), whether it is English at all (`non_english`),
the named fields of an emitted/returned/persisted/listed artefact (conjunction/payload
rule; a list of quoted or code items, or of a modal's verb phrases, is one clause per item),
its alternatives — in a clause, or in the Given as independent paths; not two outcomes of
one presenting verb ("shows 0 or disappears"), an "or" in a condition or in a message's
wording — and whether the product controls the choice (disjunction rule), an
asynchronous ingress (wiring rule), outcome wording (T-outcome) and the test level the fixed
policy demands. Pure, deterministic regular-expression work on text evalflow itself holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

Level = Literal["unit", "e2e", "both"]

_GWT = re.compile(r"\b(given|when|then)\b", re.IGNORECASE)
_EARS = re.compile(
    r"^(?P<cond>(?:when|if|while|where)\b.*?)[,]?\s*(?:then\s+)?(?:the\s+\w+(?:\s+\w+)?\s+)?shall\b(?P<then>.*)$",
    re.IGNORECASE,
)
# EARS's ubiquitous form: "THE System SHALL document …" (no condition).
_UBIQUITOUS = re.compile(
    r"^the\s+[\w.-]+(?:\s+[\w.-]+){0,2}\s+shall\b\s*(.*)$", re.IGNORECASE
)  # a file name may be the subject: "THE requirements.md file SHALL include …"
_PROSE_WHEN = re.compile(r"^(?:when|whenever|if|once)\s+([^,]+),\s*(.+)$", re.IGNORECASE)
_ARTEFACT = re.compile(
    r"\b(emits?|emitted|returns?|returned|responds?|response|body|sends?|sent|persists?|"
    r"persisted|stores?|stored|saves?|saved|publishes?|published|payload|event|message|"
    r"record|row|notification|table|result|listed|created|inserted|object)\b",
    re.IGNORECASE,
)
# The artefact words that are nouns; a verb ("returned", "listed") names no artefact itself.
_ARTEFACT_NOUN = re.compile(
    r"(?:response|body|payload|event|message|record|row|notification|table|result|object)s?",
    re.IGNORECASE,
)
_CONNECTOR = re.compile(
    r"\b(?:with|including|containing|carrying|reporting|linked\s+to|"
    r"that\s+(?:has|have|carries|includes))\s+",
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
# Said anywhere in the AC, the product's choice covers its "or" ("…; the product chooses the
# channel (email by default)"); a bare "defaults to" only in the clause of the "or".
_PRODUCT_SAYS = re.compile(
    r"\bproduct\s+(?:chooses|decides|selects|picks)\b|\bconfigurable\b|\(\s*\w+\s+by\s+default\s*\)",
    re.IGNORECASE,
)
# A verb that starts a second behaviour after "and" in a check proposition.
BEHAVIOUR_VERBS = (
    "returns|responds|answers|emits|sends|persists|stores|saves|creates|rejects|shows|displays|"
    "records|updates|deletes|removes|publishes|writes|dispatches|grants|notifies|redirects|"
    "renders|charges|schedules|logs|changes|keeps|remains|stays"
)
_JOINED = re.compile(rf",?\s+and\s+(?:then\s+)?(?:{BEHAVIOUR_VERBS})\b", re.IGNORECASE)
# A finite verb (or a modal / negation) that makes the words after an "and" a clause of their
# own; a plain noun phrase after "and" ("goals, assists and saves") is one object's list.
_FINITE = re.compile(
    r"\b(?:is|are|was|were|be|been|becomes?|has|have|does|do|did|can|cannot|must|should|shall|"
    r"will|may|never|appears?|exists?|contains?|includes?|lists?|uses?|gets?|receives?|"
    r"prints?|outputs?|exits?|fails?|succeeds?|passes|runs?|calls?|reads?|matches|moves?|"
    r"hides?|opens?|closes?|loads?|clears?|resets?|refreshes|reflects?|navigates?|"
    r"focus(?:es)?|scrolls?|disables?|enables?|highlights?|indicates?|reports?|allows?|"
    r"prevents?|blocks?|triggers?|fires?|adds?|marks?|sets?|assigns?|increments?|decrements?|"
    r"computes?|calculates?|sorts?|filters?|groups?|validates?|generates?|produces?|"
    r"supports?|provides?|maintains?|preserves?|retains?|continues?|starts?|stops?|switch(?:es)?|"
    r"excludes?|ignores?|separates?|requires?|accepts?|ensures?|defines?|identif(?:y|ies)|"
    r"suggests?|exposes?|expands?|collapses?|reverts?|decreases?|increases?|lands?|sees?|"
    r"explains?|describes?|documents?|works?|occurs?|happens?|applies|apply|takes?|makes?|am|"
    r"queries|toggles?|meets?|recalculates?|animates?|restores?|dismiss(?:es)?|"
    r"require|identify|suggest|define|provide|use|allow|disable|enable|ensure|support|"
    r"persist|display|show|return|send|create|reject|remove|delete|update|emit|store|save|"
    r"prevent|redirect|render|record|keep|remain|stay|log|notify|grant|publish|write|"
    r"understand|include|yield|executes?|installs?|"
    rf"{BEHAVIOUR_VERBS})\b"
    # A contracted "is" ("it's removed and the totals update"): the clause has its verb.
    r"|(?:(?<=\bit)|(?<=\bthat)|(?<=\bthere))['’]s\b",
    re.IGNORECASE,
)
_AUX = re.compile(
    r"\b(?:is|are|was|were|will\s+be|must\s+be|should\s+be|shall\s+be|can\s+be|gets?|becomes?)\b",
    re.IGNORECASE,
)
# A past participle opening the words after "and": "is created … and marked as open".
_PARTICIPLE = re.compile(
    r"(?:[a-z]+ed|given|shown|set|sent|kept|made|put|held|written|hidden|taken|built|"
    r"drawn|chosen|read|cut|shut|known|seen|done|thrown|broken|frozen|bound|found|run|"
    r"split|begun|spun|laid|paid|met|lost|left|rewritten|overwritten)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"(?:does\s+not|do\s+not|doesn't|don't|did\s+not|is\s+not|are\s+not|isn't|aren't|"
    r"never|cannot|can\s+not|must\s+not|shall\s+not|should\s+not|will\s+not|won't|no\s+\w)",
    re.IGNORECASE,
)
_DETERMINER = re.compile(
    r"(?:(?:the|a|an|it|its|they|their|them|he|she|his|her|this|that|these|those|each|every|"
    r"all|any|no|none|nothing|some|both|one|only|my|our|your|i|we|you|[A-Z][\w-]*)\b|[_`\"“'])",
)
# Keyword clause markers: "; AND", a BMAD "**And**" joined into the text ("… spinner) And
# `POST` is called"), Gherkin's "But"; a semicolon ends a clause.
_MARKER = re.compile(r"\s*;\s*(?:(?i:and|but|or)\b\s*)?|\s+(?:AND|BUT|And|But)\s+(?=\S)")
# Verbs whose object may be a list of things, each observed on its own ("displays a field and
# a button": two checks; the conjunction rule).
_SHOWS = re.compile(
    r"\b(?:shows?|displays?|renders?|lists?|contains?|includes?|presents?|has|have|sees?|"
    r"listing|identifying|naming|showing)\b",
    re.I,
)
_AND = re.compile(r",?\s+(?:and|but)\s+(?:then\s+|also\s+)?", re.IGNORECASE)
# Nesting that is never split: parentheses and brackets (an aside, an example, an exclusion
# list is one thing), quotes and code spans.
_OPEN, _CLOSE = "([{", ")]}"
# An aside after a dash ("… immediately — no spinner") runs to the next dash or the end.
_DASH_ASIDE = re.compile(r"(\s)[—–]\s[^—–;()]*?(?=\s+(?:AND|And|BUT|But|OR)\s|[;()—–]|$)")


def mask_nested(text: str) -> str:
    """`text` with quoted/code spans and parenthesised/bracketed spans blanked to '_' (same
    length, same offsets): what the splitting rules may cut."""
    masked = list(
        _DASH_ASIDE.sub(
            lambda m: m.group(1) + "_" * (len(m.group(0)) - len(m.group(1))), _mask_quoted(text)
        )
    )
    depth = 0
    for i, ch in enumerate(masked):
        if ch in _OPEN:
            depth += 1
        if depth:
            masked[i] = "_"
        if ch in _CLOSE and depth:
            depth -= 1
    return "".join(masked)


_LEADING = re.compile(
    r"(?:if|when|whenever|once|unless|where|while|for\s+(?:each|every|all|any))\b[^,;:]*?,\s+(?=\S)",
    re.IGNORECASE,
)


def _subject(clause: str) -> tuple[str, str]:
    """(subject, auxiliary) of `clause`: the words before its first finite verb, and that
    verb when it is an auxiliary ("The task is created" → ("The task", "is")). A leading
    condition ("if the tier is X, the system SHALL …", "for each row, it SHALL …") is part of
    the subject: a behaviour carried to a second verb keeps its condition."""
    masked = mask_nested(clause)
    lead = _LEADING.match(masked)
    if lead:
        subject, aux = _subject(clause[lead.end() :])
        return (f"{clause[: lead.end()]}{subject}" if subject else "", aux)
    verb = _FINITE.search(masked)
    if verb and verb.start() == 0:
        # "filter state is never written": a noun that looks like a verb, then the verb.
        nxt = _FINITE.search(masked, verb.end())
        if (
            nxt
            and len(masked[verb.end() : nxt.start()].split()) <= 1
            and not re.search(r"\band\b|,", masked[: nxt.start()])
        ):
            verb = nxt
    while (
        verb
        and re.fullmatch(
            r"\s*(?:the|a|an|all|each|every|its|their|any|no)?\s*", masked[: verb.start()], re.I
        )
        and verb.start()
    ):
        verb = _FINITE.search(masked, verb.end())  # "the filters are cleared": a noun
    relative = verb and re.search(r"\b(?:that|which|who)\s+$", masked[: verb.start()], re.I)
    if relative:
        # "labels that do not meet these rules SHALL not select …": the relative clause is
        # the subject's; the clause's own verb is the modal or auxiliary after it.
        main = re.compile(r"\b(?:shall|must|should|will|can|may|is|are)\b", re.I)
        verb = main.search(masked, verb.end())  # type: ignore[union-attr]
    if verb is None or verb.start() == 0:
        return "", ""
    subject = clause[: verb.start()].strip()
    names = re.fullmatch(r"[A-Z`_][\w`.-]*\s+and\s+[\w`.-]+\s*", masked[: verb.start()])
    if (
        _NEGATION.match(masked, 0)
        or (re.search(r"\band\b|,", masked[: verb.start()]) and not names)
        or len(subject.split()) > (14 if relative else 8)
    ):
        return "", ""  # no subject of its own (an EARS "SHALL" part starts with its verb)
    aux = _AUX.match(masked, verb.start())
    modal = re.match(r"(?:shall|must|should|will|can|may)\b", masked[verb.start() :], re.I)
    if modal:
        return f"{subject} {clause[verb.start() : verb.start() + modal.end()]}", ""
    return subject, (clause[aux.start() : aux.end()] if aux else "")


def _starts_clause(right: str) -> str | None:
    """How the words after an "and" open a clause: 'subject' (they carry their own subject and
    verb), 'verb' (a verb or a negation: the left clause's subject is carried), 'participle'
    (subject and auxiliary carried), or None (a noun phrase: part of the left clause)."""
    masked = mask_nested(right)
    if re.match(r"no\s", masked, re.I):
        return "subject"  # "no API call is made": a negated subject of its own
    negated = re.match(r"(?:never|not)\s+([\w-]+)", masked, re.I)
    if negated and _PARTICIPLE.fullmatch(negated.group(1)):
        return "participle"  # "is returned once and never stored": "is" is carried
    if _NEGATION.match(masked) or re.match(rf"(?:{BEHAVIOUR_VERBS}|respond)\b", masked, re.I):
        return "verb"  # ("… that do exist and respond with HTTP 200": an EARS verb's base form)
    if _FINITE.match(masked):
        return "verb"
    first = re.match(r"[\w-]+", masked)
    if first and _PARTICIPLE.fullmatch(first.group(0)) and not _DETERMINER.match(masked):
        return "participle"
    verb = _FINITE.search(masked)
    if verb and re.fullmatch(
        r"(?:a|an|the|each|every|all|any|some|both)\s+", masked[: verb.start()], re.I
    ):
        verb = _FINITE.search(masked, verb.end())  # "a list of …": the noun after an article
    if verb and re.search(r"\band\b|,", masked[: verb.start()]):
        verb = None  # "X and Y to `/api/add` and shows …": the verb belongs to a later clause
    if verb and not masked[verb.end() :].strip(" .,;"):
        verb = None  # "… and the golfer list": a clause's last word is its noun, not its verb
    if verb and _DETERMINER.match(masked) and len(masked[: verb.start()].split()) <= 6:
        return "subject"  # a short subject: a verb within its first six words
    before = masked[: verb.start()].split() if verb else []
    # Up to four words when they are all a noun phrase's ("mypy strict type checking passes"):
    # no function word among them, and a verb in "-s" that agrees with it.
    noun_phrase = len(before) <= 4 and not any(
        re.fullmatch(r"when|if|that|which|who|where|while|as|an?|the|of|to|in|on|for|with", w, re.I)
        for w in before
    )
    agrees = bool(verb) and re.fullmatch(r"[a-z]+[^s']s", verb.group(0)) is not None
    if verb and (1 <= len(before) <= 2 or (noun_phrase and agrees)):
        return "subject"  # a bare noun subject: "… and tab refreshes"
    return None


def _listed(left: str) -> bool:
    """`left` ends in a comma list of nouns ("goals, assists"): an "and" after it closes the
    list, whatever the next word looks like ("and saves")."""
    last = re.search(r",\s*([^,]*)$", left)
    return bool(last) and not _FINITE.search(last.group(1))  # type: ignore[union-attr]


def split_clauses(then: str) -> tuple[str, ...]:
    """The observable clauses of a Then part: cut at clause markers (";", "AND", "And") and
    at an "and" that opens a new clause ("… shows an error and does not create the item"),
    never inside parentheses, brackets, quotes or code. A clause without its own subject
    carries the first one's ("The item is created with an id and marked as open" → "The item
    is created with an id" / "The item is marked as open"); a second object of a showing verb
    is its own check ("displays a field and a button")."""
    masked = mask_nested(then)
    pieces, at = [], 0
    for m in _MARKER.finditer(masked):
        pieces.append(then[at : m.start()])
        at = m.end()
    pieces.append(then[at:])
    pieces = [
        part
        for piece in pieces
        for path in _verb_paths(piece)
        for shared in _shared_object(path)
        for part in _shared_head(shared)
    ]
    out: list[str] = []
    last = ""  # the subject of the previous piece: "…; AND ignore X" is still its behaviour
    for piece in filter(None, (_strip(p) for p in pieces)):
        pm = mask_nested(piece)
        subject, aux = _subject(piece)
        start, prefix = 0, ""
        if not subject and last and _starts_clause(pm) == "verb":
            prefix, subject = f"{last} ", last
        last = subject or last
        shows = _SHOWS.search(pm)
        colon = pm.find(": ")
        fields, _, fields_at = named_fields(piece)
        fields_at = fields_at if fields else -1
        for m in _AND.finditer(pm):
            if m.start() <= start or 0 <= colon < m.start():
                continue  # what follows a colon spells out one behaviour
            right = pm[m.end() :]
            # The words the "and" opens run to the next comma ("… at `/docs` and `/redoc`, and
            # all routes are …": "`/redoc`" is an object, not the clause after it).
            how = _starts_clause(re.split(r",\s", right)[0])
            if "but" in m.group(0).lower() and how != "subject":
                continue  # "but" joins two clauses ("X remains but no Y is made"), not objects
            if how in (None, "subject") and shows and re.match(r"that\s", right):
                how = "object"  # "displays the task name and that it's due tomorrow"
            if how in ("verb", "participle") and _listed(pm[start : m.start()]):
                last_item = re.split(r",\s*", pm[start : m.start()])[-1]
                if not (how == "participle" and _PARTICIPLE.match(last_item)):
                    how = None  # "its ID, title, and completed/incomplete status": a list item
            if how == "participle" and 0 <= fields_at < m.start():
                how = None  # "saved … with the edited pattern and selected category": fields
            if how == "subject" and not _FINITE.search(pm, start, m.start()):
                how = None  # "tab bar and tab content use …": a compound subject
            if how == "participle" and not subject:
                how = None  # "suggest shared utilities and centralized management": an object
            if (
                how is None
                and shows
                and shows.end() <= m.start()
                and re.match(r"(?:a|an|the|one|two|three|four|five|six|\d+)\s", right, re.I)
            ):
                how = "object"
            lead = _FINITE.match(pm) or _modal_verb(piece, subject)  # the clause's verb
            if (
                how is None
                and lead
                and start == 0
                and not _FINITE.search(right)
                and not re.search(
                    r"\b(?:with|for|of|to|in|on|by|from|at|as)\b", pm[lead.end() : m.start()]
                )
                and len(pm[lead.end() : m.start()].split()) >= 2
                and len(right.split()) >= 2
            ):
                shows, how = lead, "object"  # "identify circular dependencies and tight coupling"
            if how is None:
                continue
            if how in ("subject", "participle"):
                # "A install …, B passes …, and C passes …", "is generated at X, injected into
                # Y, and included in Z": each comma before the "and" opens a clause as well.
                for c in re.finditer(r",\s+", pm[: m.start()]):
                    after = pm[c.end() : m.start()]
                    if c.start() <= start or _starts_clause(after) != how:
                        continue
                    if how == "subject" and not _FINITE.search(after):
                        continue
                    out.append(_strip(prefix + piece[start : c.start()]))
                    start = c.end()
                    prefix = _carried(how, subject, aux, after, piece[: c.start()])
            left = piece[start : m.start()]
            scope = _SCOPE.search(mask_nested(piece), m.end())
            if how == "object" and scope and not _PREPOSITION.search(mask_nested(left)):
                # "include creation dates and last modification times for key metrics": the
                # closing scope is both objects'.
                left = f"{left} {piece[scope.start() :].strip()}"
            out.append(_strip(prefix + left))
            start = m.end()
            said = _SAYS_THAT.search(pm, 0, m.start())
            if how == "object":
                prefix = piece[: shows.end()] + " "  # type: ignore[union-attr]
            elif how == "subject" and said:
                prefix = piece[: said.end()]  # "the ADR states that A and B": both are stated
            else:
                prefix = _carried(how, subject, aux, right, piece[: m.start()])
        out.append(_strip(prefix + piece[start:]))
    return tuple(
        item
        for c in out
        if c
        for phrase in _verb_list(c)
        for part in _span_list(phrase)
        for item in _object_list(part)
    )


# Base forms an EARS/OpenSpec verb list uses beyond `_FINITE`'s ("SHALL detect …, parse rows,
# normalize …"); only read after a modal's first verb, where a noun cannot stand.
_BASE_VERB = re.compile(
    r"(?:parse|detect|fetch|insert|upsert|convert|verify|check|map|merge|split|load|build|"
    r"export|import|[a-z]+(?:ize|ise|ify))\b|[A-Z]{3,}\b"
)


def _verb_list(clause: str) -> list[str]:
    """A modal's list of verb phrases ("it SHALL detect the CSV format, parse rows, normalize
    dates", "for each row, it SHALL run dedup check, apply merchant mapping, and INSERT"):
    one clause per verb phrase, the subject and modal carried. Every item after the first
    must open with a verb; a list of objects is `_object_list`'s."""
    subject, _ = _subject(clause)
    if not _MODAL_END.search(subject) or not clause.startswith(subject):
        return [clause]
    masked = mask_nested(clause)
    body = len(subject)
    seps = [m for m in re.finditer(r",\s*(?:and\s+)?|\s+and\s+", masked) if m.start() > body]
    if len(seps) < 2 or not all("," in m.group(0) for m in seps[:-1]):
        return [clause]
    bounds = [body, *(x for m in seps for x in (m.start(), m.end())), len(clause)]
    items = [clause[a:b].strip() for a, b in zip(bounds[::2], bounds[1::2], strict=True)]
    if not all(_FINITE.match(i) or _BASE_VERB.match(i) for i in items[1:]):
        return [clause]
    return [_strip(f"{subject} {item}") for item in items]


def _verb_at(masked: str, at: int) -> bool:
    """A verb opens `masked` at `at`: a known one, or a lowercase word then a determiner
    ("unlock the item": where an EARS part or an offered path starts, a verb and its
    object)."""
    return bool(
        _FINITE.match(masked, at)
        or _BASE_VERB.match(masked, at)
        or re.compile(r"[a-z]+\s+(?:the|a|an|all|each|every|its|their)\b").match(masked, at)
    )


# "identify and display X": two verbs of one object. Both must read as verbs, the first as
# the clause's first word (an EARS part) or right after a modal.
_TWO_VERBS = re.compile(
    r"^(?P<head>(?:.*?\b(?:shall|must|should|will|can|may)\s+)?)(?P<v1>[a-z]+)\s+and\s+"
    r"(?P<v2>[a-z]+)\s+(?P<obj>\S.*)$",
    re.IGNORECASE,
)


def _shared_object(piece: str) -> list[str]:
    """Two verbs sharing one object ("identify and display permission set assignments …"):
    one clause per verb, the object carried to both. Only where a verb must stand: an EARS
    part's first word or the word after a modal, and the second a known verb."""
    text = piece.strip()
    masked = mask_nested(text)
    m = _TWO_VERBS.match(masked)
    if not m or (m.group("head") and not _MODAL_END.search(" " + m.group("head").rstrip())):
        return [piece]
    v1, v2 = m.group("v1"), m.group("v2")
    if _DETERMINER.fullmatch(v1) or not (_FINITE.fullmatch(v1) or _BASE_VERB.fullmatch(v1)):
        return [piece]
    if not (_FINITE.fullmatch(v2) or _BASE_VERB.fullmatch(v2)) or starts_with_verb(v2):
        return [piece]
    obj = text[m.start("obj") :]
    return [f"{text[: m.end('v1')]} {obj}", f"{text[: m.start('v1')]}{v2} {obj}"]


# "JSON, CSV, and table formats", "hover and active states": single words sharing the plural
# head noun written once after the last of them.
_SHARED_HEAD = re.compile(
    r"(?P<first>\b[\w-]+)(?P<more>(?:,\s*[\w-]+)*),?\s+and\s+(?P<last>[\w-]+)\s+"
    r"(?P<head>[a-z]+s)\b(?P<tail>.*)$"
)


_MODIFIER = re.compile(r"(?:ive|al|ic|ous|ful|able|ible)$|^[A-Z]{2,}$")


def _shared_head(piece: str) -> list[str]:
    """Modifiers listed before one plural head noun ("support JSON, CSV, and table formats",
    "provide hover and active states"): one clause per modifier with the head noun. A listed
    word that is plural itself, a determiner or a verb is a noun of its own: no sharing."""
    masked = mask_nested(piece)
    m = _SHARED_HEAD.search(masked)
    if not m:
        return [piece]
    words = [m.group("first"), *re.findall(r"[\w-]+", m.group("more")), m.group("last")]
    if any(
        "_" in w
        or w.lower().endswith(("s", "tion", "ment", "ness", "ity"))
        or re.fullmatch(r"the|a|an|its|their|this|that|these|those|each|every|all|any|no", w, re.I)
        or _FINITE.fullmatch(w)
        for w in words
    ) or not (_FINITE.search(masked, 0, m.start()) or _verb_at(masked, 0)):
        return [piece]
    # Only where a listed word cannot stand alone as a noun: an adjective ("active",
    # "critical") or an acronym ("JSON, CSV") — "amount, description, and date fields" and
    # "service refactoring and consolidation strategies" name things of their own.
    if not any(_MODIFIER.search(w) for w in words):
        return [piece]
    head, tail = piece[m.start("head") : m.end("head")], piece[m.end("head") :]
    return [_strip(f"{piece[: m.start()]}{w} {head}{tail}") for w in words]


def _verb_paths(piece: str) -> list[str]:
    """An EARS part that offers two verb phrases ("add the flag … when `seen` is true, or
    remove the flag … when `seen` is false"): each is a path of its own (disjunction rule,
    independent paths), with its own condition."""
    masked = mask_nested(piece.strip())
    split = re.search(r",\s+or\s+", masked)
    if not split or not _verb_at(masked, 0) or not _verb_at(masked, split.end()):
        return [piece]
    if "," in masked[: split.start()]:
        return [piece]  # "via email, webhook, or log output": the last item of a list
    return [piece.strip()[: split.start()], piece.strip()[split.end() :]]


_SAYS_THAT = re.compile(
    r"\b(?:states?|ensures?|verif(?:y|ies)|confirms?|indicates?|says?|documents?|explains?|"
    r"asserts?|notes?)\s+that\s",
    re.IGNORECASE,
)


def _carried(how: str, subject: str, aux: str, right: str, before: str) -> str:
    """What a clause opened by "and" (or a comma) takes from the clause before it: nothing
    when it has its own subject, the subject when it opens with a verb, the subject and its
    auxiliary when it opens with a participle."""
    if subject and how == "verb":
        # "… SHALL be considered … and SHALL resolve …": the modal is said once.
        said = re.match(r"(?:shall|must|should|will|can|may)\b", right, re.I)
        return f"{_MODAL_END.sub('', subject) if said else subject} "
    if subject and how == "participle":
        # "are evenly sized and spaced": the adverb qualifies both participles.
        adverb = re.search(r"\b(\w+ly)\s+\S+\s*$", before)
        manner = f"{adverb.group(1)} " if adverb and len(right.split()) == 1 else ""
        return f"{subject} {aux or 'is'} {manner}"
    return ""


_MODAL_END = re.compile(r"\s+(?:shall|must|should|will|can|may)$", re.IGNORECASE)


def _modal_verb(piece: str, subject: str) -> re.Match[str] | None:
    """The verb after a subject that ends in a modal ("I can edit …", "it SHALL detect …"):
    the clause's own verb, whose objects may be a list."""
    if not _MODAL_END.search(subject) or not piece.startswith(subject):
        return None
    return re.compile(r"\s+(?:be\s+)?[a-z]+\b").match(mask_nested(piece), len(subject))


# One item of a list of quoted strings or code spans: the span and an aside after it
# ("`week` (`DATE_TRUNC('week', …)`)").
_SPAN_ITEM = r"(?:\"[^\"]*\"|“[^”]*”|`[^`]*`)(?:\s+\((?:`[^`]*`|[^()`])*\))?"
_SPAN_LIST = re.compile(
    rf"{_SPAN_ITEM}(?:(?:,\s*|\s+(?=and\b|or\b))(?:(?:and|or)\s+)?{_SPAN_ITEM})+"
)


_INPUTS = re.compile(
    r"\b(?:calls?|posts?|sends?|enters?|submits?|passes|types?|invokes?|requests?)\b", re.I
)


def _span_list(clause: str) -> list[str]:
    """Quoted strings or code spans listed as one verb's objects — two joined by "and"
    ("shows "Avg" and "Goal met"", "marked with `a = 1` and `b = 2`", "a distinct `id` and
    `createdAt` value"), or three or more closed by "and"/"or" ("grouping by `category`,
    `merchant`, or `month`"): one clause per span, the words around them shared. A pair
    joined by "or" is the disjunction rule's; a list the payload rule reads as an
    artefact's fields, or one the product chooses from, is left to those rules."""
    if named_fields(clause)[0] or _PRODUCT_CHOICE.search(clause):
        return [clause]
    nested = mask_nested(clause)
    for m in _SPAN_LIST.finditer(clause):
        if m.start() and nested[m.start() - 1] == "_":
            continue  # inside parentheses: an aside's list, not the clause's objects
        if _INPUTS.search(nested, 0, m.start()):
            continue  # 'calls the Add logic with "foo" and "bar"': one action's inputs
        items = list(re.finditer(_SPAN_ITEM, m.group(0)))
        joints = [m.group(0)[a.end() : b.start()] for a, b in pairwise(items)]
        closing = re.search(r"\b(and|or)\b", joints[-1])
        if not closing or any(re.search(r"\b(?:and|or)\b", j) for j in joints[:-1]):
            continue
        if len(items) == 2 and closing.group(1) == "or":
            continue  # two options: the disjunction rule reads them (`alternatives`)
        if re.search(r",\s*$", clause[: m.start()]) or re.match(r"\s*,\s*\S", clause[m.end() :]):
            continue  # part of a longer list of other words
        head, tail = clause[: m.start()], clause[m.end() :]
        return [_strip(agree(head, i.group(0)) + i.group(0) + tail) for i in items]
    return [clause]


def agree(head: str, word: str) -> str:
    """`head` with its closing article agreeing with the `word` put after it ("an" before
    a vowel sound): one option of a pair replaces both."""
    m = re.search(r"\b(an?)\s+$", head, re.IGNORECASE)
    if not m:
        return head
    letter = re.sub(r"^[\"'`“]+", "", word)[:1].lower()
    article = "an" if letter in "aeiou" and letter else "a"
    if m.group(1)[0].isupper():
        article = article.capitalize()
    return head[: m.start(1)] + article + head[m.end(1) :]


# A verb that makes a listed item a clause: an auxiliary or modal, or a verb's "-s" form
# opening it ("… and shows the total"; "log output" is a noun phrase).
_CLAUSE_VERB = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|does|do|did|can|cannot|must|should|shall|"
    r"will|may)\b",
    re.IGNORECASE,
)


# A closing phrase that scopes a whole verb phrase ("… in the PR body", "… for each
# configured provider", "… for key metrics").
_SCOPE = re.compile(
    r"\s(?:for|in|across|within|on)\s+(?:each|every|all|the|key|any)\b[^,;()]*$", re.IGNORECASE
)


def _object_list(clause: str) -> list[str]:
    """A showing verb's object that is a list of short noun phrases ("shows goals, assists
    and saves") gives one clause per item; anything else stays whole."""
    masked = mask_nested(clause)
    shows = _SHOWS.search(masked)
    # An EARS part opens with its verb ("extract A, B, and C"): a known verb, or a plain
    # lowercase word that is no determiner when nothing before the list reads as a verb.
    comma = masked.find(",")
    lead = _FINITE.match(masked) or (
        re.match(r"[a-z]+\b", masked)
        if comma > 0 and not _DETERMINER.match(masked) and not _FINITE.search(masked, 0, comma)
        else None
    )
    if lead and (not shows or shows.start() > lead.start()):
        shows = lead
    if not shows:
        return [clause]
    colon = masked.find(": ", shows.end())
    begin = (
        colon + 2 if colon >= 0 and len(masked[shows.end() : colon].split()) <= 5 else shows.end()
    )
    # "support notification via email, webhook, or log output": the list is the object of
    # the preposition after the verb's own object (each item one path of what is supported).
    via = re.match(
        r"\s*(?:[\w-]+\s+){1,3}?(?:via|by|through|over|in|to|of)\s+", masked[begin:], re.I
    )
    listed = r",\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+"
    closed = (
        via
        and re.search(r",\s*(?:and|or)\s", masked[begin + via.end() :])
        and ": " not in masked[begin:]  # "… of all five dependencies: A, B": one behaviour
    )
    if closed and not _PRODUCT_CHOICE.search(clause):
        begin += via.end()  # type: ignore[union-attr]
    elif re.search(r",\s*or\s+|\s+or\s+", masked[begin:]):
        return [clause]  # an "or" list elsewhere is the disjunction rule's
    seps = list(re.finditer(listed, masked[begin:]))
    if not seps or not any("," in sep.group(0) for sep in seps):
        return [clause]
    items, at = [], begin
    for sep in seps:
        items.append((at, begin + sep.start()))
        at = begin + sep.end()
    items.append((at, len(clause)))
    for a, b in items:
        words = masked[a:b].split()
        # An item with a verb of its own is a clause, not an object ("permission set name":
        # a noun that looks like a verb inside a name is not one).
        verb = _CLAUSE_VERB.search(masked[a:b]) or starts_with_verb(masked[a:b].strip())
        if not words or len(words) > 5 or (len(words) > 1 and verb):
            return [clause]
        if re.search(r"\b(?:with|of|for|to|in|on|by|from|that|which)\b", masked[a:b], re.I):
            return [clause]
    head = clause[:begin] if closed else clause[: shows.end()]
    # A leading "the" is every item's ("they see the type, message, and timestamp" → "the
    # message"); "a"/"an" is not carried (its form depends on the noun), nor a possessive
    # (hand decompositions keep "their name, course name" apart).
    owner = re.match(r"\s*(the)\s", masked[begin:], re.I)
    out = []
    for n, (a, b) in enumerate(items):
        item = _strip(clause[a:b])
        if n and owner and not _DETERMINER.match(item):
            item = f"{owner.group(1)} {item}"
        out.append(_strip(f"{head} {item}"))
    return out


_SCRIPTS = re.compile(r"[^\W\d_]")


def non_english(text: str) -> bool:
    """Wording the rules cannot read: more than a tenth of its letters (outside code and
    quotes) are not Latin. Imported verbatim and flagged for manual decomposition."""
    letters = _SCRIPTS.findall(_QUOTED.sub(" ", text))
    latin = sum(1 for ch in letters if ch.isascii() or "\u00c0" <= ch <= "\u024f")
    return bool(letters) and latin < 0.9 * len(letters)


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
    given, when, then, _ = _steps(text)
    return given, when, then


def _steps(text: str) -> tuple[str, str, str, list[tuple[str, str]]]:
    """`split_gwt` plus the (when, then) pairs after the first Then (an OpenSpec scenario
    may go on: "…; THEN the dialog opens; WHEN the user saves; THEN the row is updated")."""
    ears = _EARS.match(text.strip())
    if ears:
        return "", _strip(ears.group("cond")), _strip(ears.group("then")), []
    ubiquitous = _UBIQUITOUS.match(text.strip())
    if ubiquitous:
        return "", "", _strip(ubiquitous.group(1)), []
    masked = mask_nested(text)
    marks = [
        m for m in _GWT.finditer(masked)
        if m.group(1)[0].isupper() or re.search(r"(?:^|[,;.:])\s*$", masked[: m.start()])
    ]  # fmt: skip
    if not marks or not any(m.group(1).lower() == "then" for m in marks):
        prose = _PROSE_WHEN.match(text.strip())
        if prose:
            return "", _strip(prose.group(1)), _strip(prose.group(2)), []
        return "", "", _strip(text), []
    parts: dict[str, str] = {}
    later: list[tuple[str, str]] = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        key, words = m.group(1).lower(), _strip(text[m.end() : end])
        if "then" not in parts:
            parts.setdefault(key, words)
        elif key == "when":
            later.append((words, ""))
        elif key == "then" and later and not later[-1][1]:
            later[-1] = (later[-1][0], words)
    steps = [(w, t) for w, t in later if t]
    return parts.get("given", ""), parts.get("when", ""), parts.get("then", ""), steps


_EXCLUSION = re.compile(
    r"\b(?:except|excluding|other\s+than|but\s+not|not\s+including|without|apart\s+from)\b",
    re.IGNORECASE,
)


def named_fields(clause: str) -> tuple[tuple[str, ...], str | None, int]:
    """The named fields of an emitted/returned/persisted/listed artefact in `clause`, the
    artefact (a noun: "row", "result", or the head noun of what is returned or listed —
    "records are listed with …" → "record"), and where the field list starts (len(clause)
    when there is none). A list inside parentheses, quotes or code is not the clause's own
    list, and an exclusion list ("except A and B", "without A or B") names what the artefact
    must not carry. A UI list of several things ("I see all entries … with dates and
    calories") is an artefact too: each thing carries each field."""
    masked = mask_nested(clause)
    connectors = list(_CONNECTOR.finditer(masked))
    for n, conn in enumerate(connectors):
        stop = re.search(r"[.;]", masked[conn.end() :])
        list_end = conn.end() + stop.start() if stop else len(masked)
        if n + 1 < len(connectors) and connectors[n + 1].start() < list_end:
            continue  # "containing "chicken" with dates and calories": the later list
        name = _artefact(clause, masked, conn.start(), list_end)
        if name is None:
            continue
        start, raw = conn.end(), []
        # "with columns: `id`, …", "with fields `timestamp`, …": a label, not a field.
        label = re.match(r"\w+:\s+|(?:fields?|columns?|keys?|properties)\s+(?=\S)", masked[start:])
        start += label.end() if label else 0
        for sep in re.finditer(
            r",\s*(?:and\s+)?|\s+and\s+|\s+as\s+well\s+as\s+", masked[:list_end]
        ):
            if sep.start() < start:
                continue
            raw.append(clause[start : sep.start()])
            start = sep.end()
        raw.append(clause[start:list_end])
        fields = tuple(_strip(f) for f in raw if _strip(f) and not _STATUS_CODE.match(_strip(f)))
        if any(_ORDERED.match(f) for f in fields):
            continue  # "…, sorted by UID descending": how the artefact is ordered, not a field
        if any(len(mask_nested(f).split()) > 5 for f in fields):
            continue  # "a JSON body showing the status of …": a phrase, not a field's name
        if len(fields) >= 2:
            return fields, name, conn.start()
    return (), None, len(clause)


_ORDERED = re.compile(r"(?:sorted|ordered|grouped|ranked|filtered)\s+by\b", re.IGNORECASE)
_CUT = re.compile(
    r"\b(?:in|of|on|at|from|for|to|into|by|is|are|was|were|be|been|shall|must|should|will|"
    r"can|may|containing|including|with|that|which|where)\b|[,:]",
    re.IGNORECASE,
)


_STATUS_SAID = re.compile(r"\b(?:HTTP|status)\s+[1-5]\d\d\b")


def _artefact(clause: str, masked: str, at: int, end: int) -> str | None:
    """The artefact whose fields a list at `at` names: the last artefact word before it — a
    noun as written, a verb by the head noun of its subject (or object) — or the plural
    object of a showing verb; None when nothing before `at` is an artefact."""
    found = None
    for a in _ARTEFACT.finditer(masked, 0, at):
        found = a
    if found is not None and _EXCLUSION.search(masked, found.end(), end):
        return None  # "without A or B": what the artefact must not carry
    if found is not None and _ARTEFACT_NOUN.fullmatch(found.group(1)):
        return _singular(found.group(1).lower())
    if found is not None:
        if _STATUS_SAID.search(masked, 0, at):
            return "response"  # "HTTP 429 … is returned with A and B": the response's fields
        head = _head_noun(clause[: found.start()], masked[: found.start()])
        if head is None:
            head = _head_noun(clause[found.end() : at], masked[found.end() : at])
        return head  # no noun: no artefact ("the returns carries …" named none)
    shows = None
    for m in re.finditer(r"\b(?:sees?|shows?|displays?|lists?|renders?)\s+", masked[:at], re.I):
        shows = m
    if shows is None:
        return None
    head = _head_noun(clause[shows.end() : at], masked[shows.end() : at])
    words = masked[shows.end() : at].split()
    plural = head and words and words[0].lower() in ("all", "each", "every") and head != words[0]
    return head if plural else None


def _head_noun(text: str, masked: str) -> str | None:
    """The last word of the noun phrase `text` opens with (cut at its first preposition,
    verb or relative word), singular; None when it is only a determiner or code."""
    cut = _CUT.search(masked)
    words = re.findall(r"[A-Za-z][\w-]*", text[: cut.start()] if cut else text)
    if not words or _DETERMINER.fullmatch(words[-1]) or words[-1].lower() in ("only", "all"):
        return None
    return _singular(words[-1].lower())


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "uses", "xes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


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


_PREPOSITION = re.compile(r"\b(with|to|in|on|by|from|for|at|via|as)\s+", re.IGNORECASE)
_MODAL = re.compile(r"\b(?:can|must|should|shall|will|may)\s+", re.IGNORECASE)


def _subject_or(masked: str, at: int, end: int) -> bool:
    """The "or" at `at`..`end` joins subjects ("the UI or help text documents …", "no layout
    issues or widget clipping occurs"): no verb before it, one after it."""
    return not (_VERB.search(masked, 0, at) or _FINITE.search(masked, 0, at)) and bool(
        _VERB.search(masked, end) or _FINITE.search(masked, end)
    )


def _suspended(left: str, right: str) -> str:
    """A suspended hyphen ("set- or clear-deadline call") completes the left option from the
    right one's tail ("set-deadline call")."""
    if left.endswith("-") and "-" in right:
        return left + right.split("-", 1)[1]
    return left


def or_span(text: str, first: str, second: str) -> str | None:
    """The words of `text` that say "first or second" (with an "either" before, or a
    suspended hyphen: "set- or clear-deadline call"), to replace by one option."""
    lead = first
    if "-" in second and first.endswith(second.split("-", 1)[1]):
        lead = first[: len(first) - len(second.split("-", 1)[1])]
    m = re.search(rf"(?:either\s+)?{re.escape(lead)}\s+or\s+{re.escape(second)}", text)
    return m.group(0) if m else None


# A verb that presents a state or shows something: "shows 0 or disappears", "is disabled or
# hidden", 'shows "5" or a badge' name two acceptable outcomes of one path, not two paths.
_PRESENTS = re.compile(r"\b(?:shows?|displays?|appears?|renders?|is|are|becomes?)\b", re.IGNORECASE)


def _either_outcome(masked: str, at: int) -> bool:
    """The "or" at `at` joins two outcomes of a presenting verb (nothing but its object or
    complement between them): either satisfies the AC, one check (ac_holdout2.yaml)."""
    verbs = list(_PRESENTS.finditer(masked, 0, at))
    if not verbs:
        return False
    between = masked[verbs[-1].end() : at]
    return (
        len(between.split()) <= 3
        and not _PREPOSITION.search(between)
        and not _NEGATION.search(masked, 0, at)
        and not re.search(r"[,;:]", between)
    )


def _in_condition(masked: str, at: int) -> bool:
    """The "or" at `at` sits in a condition ("… even when the import fails or encounters
    errors") or after a colon that spells out one behaviour: not two paths of the clause."""
    cond = list(
        re.finditer(r"\b(?:when|whenever|if|unless|before|after|until)\b", masked[:at], re.I)
    )
    if cond and not re.search(r"[,;]", masked[cond[-1].end() : at]):
        return True
    if re.search(_MESSAGE_CONTENT, masked[:at], re.IGNORECASE):
        return True
    return ": " in masked[:at]


# What a message tells ("guidance to pass an account UUID or omit `account_id`"): its
# "or" is the message's wording, not two behaviours of the clause.
_MESSAGE_CONTENT = (
    r"\b(?:guidance|message|error|hint|instructions?|suggestions?|warning|prompt)\s+"
    r"(?:to|that|saying|asking|telling|indicating)\b[^,;]*$"
)


def _quoted_pair(clause: str, at: int, end: int) -> tuple[str, str] | None:
    """The options of an "or" between two quoted strings or code spans ('accepts
    `"required"` or `"recommended"`', 'an "Access Denied" or "Join Org" page')."""
    left = next((q for q in _QUOTED.finditer(clause) if q.end() == at), None)
    right = _QUOTED.match(clause, end)
    return (left.group(0), right.group(0)) if left and right else None


def alternatives(clause: str) -> tuple[str, ...]:
    """The options of an "A or B" in `clause` (empty when there is no disjunction).

    Not a disjunction of behaviours: an "or" inside a quoted string, a code span, parentheses
    or a dash aside, "and/or" (no space before "or"), a category ("objects, arrays or other
    non-scalar types"), and an "or" in the clause's subject ("The UI or help text documents
    …": whether either place is enough or each must hold, the words do not say, so no rule
    can be proven from them). The left option has as many words as the right one (at most
    four): "activate it with Space or Enter" → Space / Enter.
    """
    masked = mask_nested(clause)
    for m in _OR.finditer(masked):
        if _CATEGORY.match(masked, m.start()) or _subject_or(masked, m.start(), m.end()):
            continue
        if _either_outcome(masked, m.start()) or _in_condition(masked, m.start()):
            continue
        quoted = _quoted_pair(clause, m.start(), m.end())
        if quoted:
            return quoted
        left, right = _LEFT.search(masked[: m.start()]), _RIGHT.match(masked, m.end())
        if left is None or right is None:
            continue
        second = _strip(re.split(r"[;,(]|\s+(?:and|but)\s", clause[right.start() : right.end()])[0])
        # "agents or documents occur": a plural noun, then the verb it agrees with.
        verb = re.search(r"(?<=s)\s+([a-z]+)\b", mask_nested(second))
        if verb and _FINITE.fullmatch(verb.group(1)) and not verb.group(1).endswith("s"):
            second = _strip(second[: verb.start()])
        words = clause[left.start(1) : left.end(1)].split()
        first = _strip(" ".join(words[-max(1, len(second.split())) :]))
        preps = list(_PREPOSITION.finditer(masked, 0, m.start()))
        if preps and len(masked[preps[-1].end() : m.start()].split()) <= 3:
            first = _strip(clause[preps[-1].end() : m.start()])  # "with Space or Enter"
            if second.lower().startswith(preps[-1].group(0).lower()):
                first = _strip(clause[preps[-1].start() : m.start()])  # "by email or by push"
            modal = list(_MODAL.finditer(masked, 0, preps[-1].start()))
            rest = second.split()
            if modal and len(rest) >= 3 and rest[1].lower() == preps[-1].group(1).lower():
                # "can submit the edit with Enter or cancel with Escape": two verb phrases.
                first = _strip(clause[modal[-1].end() : m.start()])
        first = re.sub(r"^either\s+", "", first, flags=re.IGNORECASE)
        return (_suspended(first, second), second)
    return ()


_STATE_VERB = re.compile(r"\b(?:is|are|has|have|enters?|submits?|with|without)\s+", re.IGNORECASE)


def precondition_alternatives(given: str) -> tuple[str, ...]:
    """The options of an "A or B" state in a Given ("X or Y is empty or missing" → empty /
    missing): the words between the last verb and the "or" (else the one word before it),
    and the words after it up to punctuation. Skipped like `alternatives`: quoted, code,
    parenthesised spans, categories, and an "or" in the subject ("X or Y")."""
    masked = mask_nested(given)
    for m in _OR.finditer(masked):
        if _CATEGORY.match(masked, m.start()) or _subject_or(masked, m.start(), m.end()):
            continue
        verbs = list(_STATE_VERB.finditer(masked, 0, m.start()))
        at = verbs[-1].end() if verbs else m.start()
        if len(masked[at : m.start()].split()) > 4 or at == m.start():
            word = re.search(r"[\w-]+$", masked[: m.start()])
            at = word.start() if word else m.start()
        right = re.match(r"[\w-]+(?:\s+[\w-]+){0,2}", masked[m.end() :])
        if at < m.start() and right:
            second = given[m.end() : m.end() + right.end()]
            return (_suspended(_strip(given[at : m.start()]), second), second)
    return ()


# A story file's AC title before its items ("Draft Deletion: Users can …"): not a behaviour.
_LABEL = re.compile(r"^([A-Z][\w /&'-]{0,60}):\s+(?=\S)")


def _title_case(words: str) -> bool:
    """A heading's words ("Multi-Line Item Support"), not a sentence's."""
    significant = [w for w in re.findall(r"[A-Za-z][\w'-]*", words) if len(w) > 3]
    return bool(significant) and all(w[0].isupper() for w in significant)


# EARS's keywords in capitals, as EARS writes them: a lowercase "if …, the category SHALL …"
# is a conditional clause of prose, kept whole.
_SECOND_EARS = re.compile(
    r"^(?:WHEN|IF)\s+(?P<cond>[^,]+),\s*(?:THE\s+[\w.-]+\s+)?(?:SHALL|MUST)\s+(?P<then>.+)$"
)


def _second_condition(clause: str, when: str) -> str:
    """A clause that is an EARS sentence of its own ("WHEN omitted, THE REST_API SHALL
    default to 50") as the behaviour with its condition after it ("default to 50 when the
    `limit` query parameter is omitted"); a bare participle condition borrows the first
    condition's subject."""
    m = _SECOND_EARS.match(clause)
    if not m:
        return clause
    cond = m.group("cond").strip()
    if not _FINITE.search(mask_nested(cond)):
        first = re.sub(r"^(?:when|if|while|where)\s+", "", when, flags=re.IGNORECASE)
        subject, aux = _subject(first)
        if subject and aux:
            cond = f"{subject} {aux} {cond}"
    return f"{_strip(m.group('then'))} when {cond}"


# In a When: ", <subject> SHALL|MUST <verb> …" (the normative words in capitals, as OpenSpec
# and EARS write them).
_WHEN_SHALL = re.compile(r",\s+((?:the|a|an|it|this)\b[^,;]{0,60}?\s(?:SHALL|MUST)\s.+)$")


def read(text: str) -> Reading:
    given, when, then, later = _steps(text)
    label = _LABEL.match(then)
    if label and _title_case(label.group(1)) and not given and not when:
        then = then[label.end() :]
    said = _WHEN_SHALL.search(mask_nested(when))
    if said:
        # "WHEN a debit is inserted, the system SHALL call X; THEN …": a normative clause
        # written into the When is a behaviour the AC claims, checked before the Then's.
        then = f"{when[said.start(1) :]}; {then}"
        when = _strip(when[: said.start()])
    clauses = tuple(_second_condition(c, when) for c in split_clauses(then)) + tuple(
        f"{clause} (when {step_when})"
        for step_when, step in later
        for clause in split_clauses(step)
    )
    fields: tuple[str, ...] = ()
    artefact = None
    for clause in clauses:
        fields, artefact, _ = named_fields(clause)
        if fields:
            break
    alts: tuple[str, ...] = ()
    chosen = ""  # the clause holding the "or": "by default" elsewhere is no product choice
    for clause in clauses:
        alts = alternatives(clause)
        if alts:
            chosen = clause
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
        product_choice=bool(alts)
        and bool(_PRODUCT_CHOICE.search(chosen) or _PRODUCT_SAYS.search(text)),
        ingress=bool(_INGRESS.search(text)) and bool(_OUTCOME.search(text) or fields),
        outcome=bool(_OUTCOME.search(then)),  # a scenario's title ("Persist …:") is no outcome
        level=level,
    )


# After "and", a back-reference to what the first verb produced ("… posts X and shows the
# returned result"): one behaviour observed at its end, not two.
_CHAINED = re.compile(
    r"\b(?:its|their|the)\s+(?:returned|resulting|computed)\b|\b(?:its|their|the)\s+results?\b"
    r"|\b(?:returns?|shows?|sends?|displays?|renders?|emits?)\s+(?:it|them)\b",
    re.IGNORECASE,
)


def behaviours_in(text: str) -> tuple[str, ...]:
    """The behaviours `text` states (`split_clauses`), a clause that acts on the previous one's
    result ("… and answers 200 with its result") merged into it."""
    out: list[str] = []
    for clause in split_clauses(text):
        if out and _CHAINED.search(mask_nested(clause)):
            out[-1] = f"{out[-1]} and {clause}"
        else:
            out.append(clause)
    return tuple(out)


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
