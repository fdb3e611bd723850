"""Reading an acceptance criterion's wording for SPEC's decomposition rules (seed 002).

Shared by the offline drafter (`baseline_draft`) and the linter (`baseline_lint`), so the
two never disagree on what an AC says: its Given/When/Then parts, its observable clauses,
its clauses (`split_clauses`: at "; AND", a joined BMAD "And", and an "and" that opens a
clause — its subject carried when the source leaves it out; never inside parentheses,
brackets, quotes, code or a dash aside), whether it is English at all (`non_english`),
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
# EARS's ubiquitous form: "THE System SHALL document …" (no condition).
_UBIQUITOUS = re.compile(
    r"^the\s+[\w.-]+(?:\s+[\w.-]+){0,2}\s+shall\b\s*(.*)$", re.IGNORECASE
)  # a file name may be the subject: "THE requirements.md file SHALL include …"
_PROSE_WHEN = re.compile(r"^(?:when|whenever|if|once)\s+([^,]+),\s*(.+)$", re.IGNORECASE)
_ARTEFACT = re.compile(
    r"\b(emits?|emitted|returns?|returned|responds?|response|body|sends?|sent|persists?|"
    r"persisted|stores?|stored|saves?|saved|publishes?|published|payload|event|message|"
    r"record|row|notification|table)\b",
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
    rf"{BEHAVIOUR_VERBS})\b",
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
    r"\b(?:shows?|displays?|renders?|lists?|contains?|includes?|presents?|has|have|sees?)\b",
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


def _subject(clause: str) -> tuple[str, str]:
    """(subject, auxiliary) of `clause`: the words before its first finite verb, and that
    verb when it is an auxiliary ("The task is created" → ("The task", "is"))."""
    masked = mask_nested(clause)
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
    if verb is None or verb.start() == 0:
        return "", ""
    subject = clause[: verb.start()].strip()
    if (
        _NEGATION.match(masked, 0)
        or re.search(r"\band\b|,", masked[: verb.start()])
        or len(subject.split()) > 8
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
    if _NEGATION.match(masked) or re.match(rf"(?:{BEHAVIOUR_VERBS})\b", masked, re.I):
        return "verb"
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
    if verb and 1 <= len(masked[: verb.start()].split()) <= 2:
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
        for m in _AND.finditer(pm):
            if m.start() <= start or 0 <= colon < m.start():
                continue  # what follows a colon spells out one behaviour
            right = pm[m.end() :]
            how = _starts_clause(right)
            if "but" in m.group(0).lower() and how != "subject":
                continue  # "but" joins two clauses ("X remains but no Y is made"), not objects
            if how is None and shows and re.match(r"that\s", right):
                how = "object"  # "displays the task name and that it's due tomorrow"
            if how == "verb" and _listed(pm[start : m.start()]):
                how = None
            if how == "subject" and not _FINITE.search(pm, start, m.start()):
                how = None  # "tab bar and tab content use …": a compound subject
            if how == "participle" and not subject:
                how = None  # "suggest shared utilities and centralized management": an object
            if (
                how is None
                and shows
                and shows.end() <= m.start()
                and re.match(r"(?:a|an|one|two|three|four|five|six|\d+)\s", right, re.I)
            ):
                how = "object"
            lead = _FINITE.match(pm)  # an EARS part: the clause opens with its verb
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
            out.append(_strip(prefix + piece[start : m.start()]))
            start = m.end()
            prefix = ""
            if how == "object":
                prefix = piece[: shows.end()] + " "  # type: ignore[union-attr]
            elif subject and how == "verb":
                prefix = f"{subject} "
            elif subject and how == "participle":
                # "are evenly sized and spaced": the adverb qualifies both participles.
                adverb = re.search(r"\b(\w+ly)\s+\S+\s*$", piece[: m.start()])
                manner = f"{adverb.group(1)} " if adverb and len(right.split()) == 1 else ""
                prefix = f"{subject} {aux or 'is'} {manner}"
        out.append(_strip(prefix + piece[start:]))
    return tuple(item for c in out if c for item in _object_list(c))


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
        colon + 2 if colon >= 0 and len(masked[shows.end() : colon].split()) <= 3 else shows.end()
    )
    seps = list(re.finditer(r",\s*(?:and\s+)?|\s+and\s+", masked[begin:]))
    if not seps or not any("," in sep.group(0) for sep in seps):
        return [clause]
    items, at = [], begin
    for sep in seps:
        items.append((at, begin + sep.start()))
        at = begin + sep.end()
    items.append((at, len(clause)))
    for a, b in items:
        words = masked[a:b].split()
        if not words or len(words) > 5 or (len(words) > 1 and _FINITE.search(masked[a:b])):
            return [clause]
        if re.search(r"\b(?:with|of|for|to|in|on|by|from|that|which)\b", masked[a:b], re.I):
            return [clause]
    head = clause[: shows.end()]
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
    """The named fields of an emitted/returned/persisted artefact in `clause`, the artefact,
    and where the field list starts (len(clause) when there is none). A list inside
    parentheses, quotes or code is not the clause's own list, and an exclusion list ("except
    A and B", "without A or B") names what the artefact must not carry."""
    masked = mask_nested(clause)
    for fields_m in _FIELDS.finditer(masked):
        artefact = None
        for a in _ARTEFACT.finditer(masked, 0, fields_m.start()):
            artefact = a
        if artefact is None or _EXCLUSION.search(masked, artefact.end(), fields_m.end("list")):
            continue
        start, raw = fields_m.start("list"), []
        label = re.match(r"\w+:\s+", masked[start:])  # "with columns: `id`, …"
        start += label.end() if label else 0
        for sep in re.finditer(
            r",\s*(?:and\s+)?|\s+and\s+|\s+as\s+well\s+as\s+", masked[: fields_m.end("list")]
        ):
            if sep.start() < start:
                continue
            raw.append(clause[start : sep.start()])
            start = sep.end()
        raw.append(clause[start : fields_m.end("list")])
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
        left, right = _LEFT.search(masked[: m.start()]), _RIGHT.match(masked, m.end())
        if left is None or right is None:
            continue
        second = _strip(re.split(r"[;,(]|\s+(?:and|but)\s", clause[right.start() : right.end()])[0])
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


def read(text: str) -> Reading:
    given, when, then, later = _steps(text)
    label = _LABEL.match(then)
    if label and _title_case(label.group(1)) and not given and not when:
        then = then[label.end() :]
    clauses = split_clauses(then) + tuple(
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
