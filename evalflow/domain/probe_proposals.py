"""Offline probe proposals, the pure part: what an AC fixes in its own words.

A PRD that names an identifier — a quoted string or code span (`trial_started`, "Invalid
input"), a route (`POST /api/tasks`, `/api/tasks/:id`), a snake_case, camelCase or PascalCase
compound name (`MockAuthProvider`) — fixes
what every run must write, whatever else it chooses. A single plain word (`status`,
"Private") is no identifier: every run writes it for many reasons. Each such identifier a check's
proposition contains is a candidate probe for that check: `impl` for an I-check,
`test-assert` for a T-check, the identifier matched literally (route parameters as any
segment). Whether a candidate is proposed is decided against the runs
(`evalflow.judges.proposals`): it must decide the check in at least two of them.
"""

from __future__ import annotations

import re

from evalflow.domain.ac_language import read
from evalflow.domain.baseline_draft import DraftCheck
from evalflow.domain.models import Probe

_SPAN = re.compile(r"`([^`\n]+)`|\"([^\"\n]+)\"|“([^”\n]+)”")
_ROUTE = re.compile(r"\b(?:GET|POST|PUT|PATCH|DELETE)\s+(?:https?://[^/\s]+)?(/[\w/:{}.\-*]*)")
_NAME = re.compile(
    r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+\b"
    # A PascalCase compound (`MockAuthProvider`, `ArchivedAt`, `NotImplementedException`,
    # `Auth0AuthProvider.ValidateTokenAsync`): a class, member or exception name the PRD
    # fixes, spelled as written in C#, Java or TypeScript code.
    r"|\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+(?:\.[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)*)?\b"
)
_PARAM = re.compile(r":\w+|\{\w+\}")
# A behaviour that claims an absence: what a name's presence cannot prove.
# Any case ("does NOT produce"), but `None` is a value, not a negation.
_NEGATIVE = re.compile(r"\b(?i:zero|no|not|never|nothing|without)\b|\bnone\b|n't\b")
_CONDITION_WORD = re.compile(r"^(?:given|when|if|while|where)\s+", re.IGNORECASE)
_META = re.compile(r"([\\.^$|?*+()\[\]{}])")
# Not an identifier a run must write: a value, a placeholder, an example, a glob.
_NOT_FIXED = re.compile(r"^[\d\s.,:;/%$+\-=<>]*$|[<>]|\.\.\.|\*")
# One plain word ("status", `Expense`, "Private") names a concept every run writes many times:
# matching it decides nothing (SPEC core rule 3), so it is never a candidate.
_PLAIN_WORD = re.compile(r"^[A-Za-z]+$")


def fixed_identifiers(text: str) -> tuple[str, ...]:
    """The identifiers `text` fixes, in order of appearance, each once."""
    found: list[tuple[int, str]] = []
    for m in _ROUTE.finditer(text):
        found.append((m.start(), m.group(1)))
    for m in _SPAN.finditer(text):
        span = next(g for g in m.groups() if g is not None).strip()
        if _ROUTE.match(span):
            continue  # the route itself was taken above
        if "{" in span or "=" in span:
            # A literal object or assignment: its quoted values and names are fixed, its
            # layout is each run's own ("{ statusCode: 401, error: \"X\" }").
            found += [(m.start() + i, ident) for i, ident in enumerate(fixed_identifiers(span))]
            continue
        if len(span) < 3 or len(span.split()) > 6 or _NOT_FIXED.search(span):
            continue
        found.append((m.start(), span))
    plain = _SPAN.sub(lambda m: " " * len(m.group(0)), text)
    for m in _NAME.finditer(plain):
        found.append((m.start(), m.group(0)))
    out: list[str] = []
    for _, ident in sorted(found):
        if ident in out or (ident.startswith("/") and len(ident) < 3):
            continue
        constant = ident.isupper() and len(ident) >= 6  # "UNAUTHORIZED", not "HTTP"
        if _PLAIN_WORD.match(ident) and not re.search(r"[a-z][A-Z]", ident) and not constant:
            continue
        out.append(ident)
    return tuple(out)


def pattern_for(identifier: str) -> str:
    """The identifier as a literal RE2 pattern; a route parameter (`:id`, `{id}`) matches any
    one path segment, since each run names its own."""
    parts = _PARAM.split(identifier)
    escaped = [_META.sub(r"\\\1", part) for part in parts]
    return r"[^/\s'\"`]+".join(escaped)


def candidates(check: DraftCheck, ac_text: str) -> tuple[Probe, ...]:
    """The probes the AC's fixed identifiers give `check`: those its behaviour names — not its
    Given/When context (`/dev/login` in "When a developer opens `/dev/login`, the page shows
    a card" is where the card is, not the card: matching it proves nothing of the check)."""
    if check.wiring:
        return ()
    kind = "impl" if check.kind == "I" else "test-assert"
    behaviour = check.proposition
    r = read(ac_text)
    for part, words in (("given", r.given), ("when", r.when)):
        if words and part in behaviour.lower():
            # The draft writes the context in sentence case ("WHEN a GET request …" of an EARS
            # AC becomes "When a GET request …"): matched without its condition word and case.
            core = re.escape(_CONDITION_WORD.sub("", words))
            behaviour = re.sub(core, " ", behaviour, flags=re.IGNORECASE)
    if _NEGATIVE.search(behaviour):
        # "returns zero findings for `missing-raises`", "no `Finding` is returned": the name
        # is written by the positive path (or its test) and proves nothing of the negative one.
        return ()
    # Names of an object literal the AC quotes (`{ "messages": […], "nextCursor": … }`): a
    # field of a constructed object, which its type's declaration (`nextCursor: number |
    # null;`) also spells.
    literal = {
        ident
        for m in _SPAN.finditer(ac_text)
        for span in [next(g for g in m.groups() if g is not None)]
        if "{" in span
        for ident in fixed_identifiers(span)
    }
    return tuple(
        Probe(
            kind=kind,
            pattern=_assigned(ident, behaviour)
            or (_valued(ident) if ident in literal else pattern_for(ident)),
            proposed=True,
        )
        for ident in fixed_identifiers(ac_text)
        if ident in behaviour
    )


# What follows `name:` when a value is given, not a type: a literal, or an expression that
# goes on (`last.uid`, `sorted[limit - 1]`, `n > limit`, `more ? a : null`, `f(x)`). A
# declaration's `number | null;`, `boolean;` or `Cursor` does not match (RE2 has no lookahead).
_VALUE = (
    r"""["']?\s*:\s*(?:null|true|false|None|True|False|-?\d|[\[{'"`]"""
    r"|[a-z_$][\w$]*\s*(?:[.(\[?<>=!&+*/%-]|\|\|))"
)


def _valued(identifier: str) -> str:
    """A pattern for `identifier` given a value (an object literal's key, a keyword argument
    or an assignment), never its declaration alone."""
    name = pattern_for(identifier)
    return rf"{name}{_VALUE}|{name}\s*=[^=>]"


def _assigned(identifier: str, behaviour: str) -> str | None:
    """For a field the behaviour says takes a value ("`CreatedAt` and `UpdatedAt` are set to
    the current UTC time", "UpdatedAt advances"), a pattern for an assignment to it: that the
    name is declared (`public DateTime UpdatedAt { get; set; }`) proves no value is set."""
    name = re.escape(identifier)
    sets = rf"{name}(?:\W+(?:and|or)\W+\S+)?\W+(?:is|are|gets|get)\s+(?:set|updated|assigned)\b"
    if re.search(rf"\bsets?\s+\W?{name}\W?\s+to\b", behaviour, re.IGNORECASE):
        return _valued(identifier)  # "set `nextCursor` to null": a key given a value
    if not re.search(rf"{sets}|{name}\W+(?:advances|reflects)\b", behaviour):
        return None
    return pattern_for(identifier) + r"\s*=[^=>]"
