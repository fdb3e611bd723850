"""The offline, rule-based baseline drafter: PRD → a draft `_ac-baseline.yaml` (seed 002).

Each AC (P2 too: it weighs 0 and is reported as roadmap readiness) is decomposed with
`evalflow.domain.ac_language`: one I-check per observable clause — a negated clause ("does
not create the item") and a subject-less "and" clause ("… and marked as open") are clauses
of their own, parentheses, dash asides and quotes are never cut; the conjunction/payload
rule (one I-check and one T-check per named field of an emitted/returned/persisted
artefact); the disjunction rule (independent paths ⇒ one I-check per path, also for an "or"
in the Given — "empty or missing" is two paths; product-controlled ⇒ default behaviour +
switch reachable without a code change); the wiring rule (asynchronous ingress ⇒ a wiring
I-check); T-checks at the level the fixed policy demands (pure logic ⇒ unit,
HTTP/contract/persistence ⇒ e2e, both ⇒ one of each), `outcome: true` for
"becomes/persisted/shows status" ACs. Every check carries the rule that produced it as a
YAML comment (the frozen model has no field for it). An AC that is not in English is kept
verbatim as one I- and one T-check flagged for manual decomposition
(`evalflow_tests/domain/ac_corpus.yaml` measures the rules on real ACs). Deterministic: the
same PRD gives the same bytes. The offline draft has no probes and no anchors: a person adds
them before `evalflow baseline freeze` (docs/importers/).

Also the drafters' one interface (`Drafter`: this one, and `evalflow.judges.claude_drafter`,
which follows the same rules through Claude and proposes probes it verifies) and the one
renderer of a draft (`render_draft`: each check's rule as a comment, probes as single-quoted
regexes).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import yaml

from evalflow.domain.ac_language import (
    Reading,
    agree,
    has_logic,
    mask_nested,
    named_fields,
    non_english,
    or_span,
    read,
    says_outcome,
    starts_with_verb,
    test_level,
)
from evalflow.domain.models import PRD, AcceptanceCriterion, Probe


@dataclass(frozen=True)
class DraftCheck:
    id: str
    kind: str
    proposition: str
    rule: str
    level: str | None = None
    outcome: bool = False
    wiring: bool = False
    probes: tuple[Probe, ...] = ()
    note: str = ""  # written as a comment beside the rule (e.g. which probes were dropped)


@dataclass(frozen=True)
class DraftAC:
    id: str
    text: str
    interpretation: str
    checks: tuple[DraftCheck, ...]


_CONNECTOR = re.compile(
    r"\s+(?:with|including|containing|carrying|reporting|linked\s+to|"
    r"that\s+(?:has|have|carries|includes))$",
    re.IGNORECASE,
)
_ARTICLE = re.compile(r"^(?:the|a|an|its|their)\s+", re.IGNORECASE)


def _sentence(text: str) -> str:
    text = text.strip().rstrip(".")
    return (text[:1].upper() + text[1:] + ".") if text else text


def _lower_first(text: str) -> str:
    # "A webhook" → "a webhook", but an acronym ("API", "UI") and a code name the PRD fixes
    # ("CreatedAt and UpdatedAt are set", "MockAuthProvider") keep their case.
    first = text.split(maxsplit=1)[0] if text.strip() else ""
    if (len(text) > 1 and text[1].isupper()) or re.search(r"[a-z][A-Z]", first):
        return text
    return text[:1].lower() + text[1:]


# The condition word an EARS AC writes itself ("WHEN a GET request …", "IF the `limit` …"):
# kept once, in sentence case, never doubled ("When WHEN …").
_CONDITION = re.compile(r"(when|if|while|where)\b\s*", re.IGNORECASE)


def _condition(when: str, first: bool) -> str:
    """The When context of a proposition: `when` with its own condition word, or "when"."""
    m = _CONDITION.match(when)
    word, rest = (m.group(1).lower(), when[m.end() :]) if m else ("when", when)
    return f"{word.capitalize() if first else word} {rest}, "


def _behaviour(context: str, clause: str) -> str:
    if starts_with_verb(clause):
        clause = f"it {clause}"  # "... is rejected with 409 and creates no second trial"
    return _sentence(f"{context}{_lower_first(clause) if context else clause}")


@dataclass(frozen=True)
class Piece:
    """One I-check of an AC's decomposition: `core` is what the rule isolated (the clause,
    one path of it, one named field) without the Given/When context the proposition adds;
    the corpus test compares cores with hand decompositions."""

    core: str
    proposition: str
    rule: str
    wiring: bool = False
    # A named field of the clause's subject (artefact, field): its T-check is its own.
    field: tuple[str, str] | None = None


_PATH_GIVEN = "disjunction (independent paths): per path of the precondition"
_PRODUCT_DEFAULT = "disjunction (product-controlled): the default behaviour"
_CLAUSE = "clause: one I-check per observable clause"
_SHARED_VERB = "conjunction: a verb shared by a list, one check per object"
_MANUAL = "manual: not English, imported verbatim; decompose it by hand"


# The fields of a persisted artefact named in the clause's subject: "a new task with ID 1 and
# title "Buy groceries" is created" (the payload-field rule's "with [field]" before the verb).
_SUBJECT_FIELDS = re.compile(
    r"^(?P<det>an?|the)\s+(?P<new>new\s+)?(?P<noun>[a-z]+)\s+with\s+(?P<list>.+?)\s+"
    r"(?P<verb>(?:is|are)\s+(?:created|added|saved|stored|persisted|recorded|inserted))\b",
    re.IGNORECASE,
)


# An EARS response with a status and a body: "respond with HTTP 400 and an error message …".
_STATUS_AND_BODY = re.compile(
    r"^(?P<verb>(?:respond|reply|answer|fail)s?)\s+with\s+"
    # A reason phrase in capitals ("400 Bad Request") belongs to the status, case-sensitively.
    r"(?P<status>(?:(?:HTTP|status)\s+)?[1-5]\d\d(?-i:(?:\s+[A-Z][a-z]+)*))\s+and\s+(?P<body>.+)$",
    re.IGNORECASE,
)


def _subject_fields(clause: str) -> tuple[str, str, tuple[str, ...]] | None:
    """(the clause without its field list, the artefact, the fields) when the clause's subject
    lists two or more fields of the artefact it creates; None otherwise."""
    m = _SUBJECT_FIELDS.match(mask_nested(clause))
    if not m:
        return None
    masked, start, raw = m.group("list"), m.start("list"), []
    for sep in re.finditer(r",\s*(?:and\s+)?|\s+and\s+", masked):
        raw.append(clause[start : m.start("list") + sep.start()])
        start = m.start("list") + sep.end()
    raw.append(clause[start : m.end("list")])
    fields = tuple(f.strip() for f in raw if f.strip())
    if len(fields) < 2:
        return None
    head = f"{clause[: m.start('noun')]}{m.group('noun')} {clause[m.start('verb') :]}"
    return head, m.group("noun").lower(), fields


def _i_checks(r: Reading) -> list[Piece]:
    out: list[Piece] = []
    # The precondition is part of the behaviour ("fewer than 10 messages ⇒ none removed").
    given = f"Given {r.given}, " if r.given else ""
    when = _condition(r.when, first=not given) if r.when else ""
    context = given + when
    if r.ingress:
        trigger = f" ({r.when})" if r.when else ""
        out.append(Piece("wiring",
            f"The entry point of the inbound event{trigger} is routed, verifies the event's "
            "authenticity and dispatches it by type to its handler.",
            "wiring: asynchronous ingress gets its own wiring I-check", True))  # fmt: skip
    for clause in r.clauses:
        if r.given_alternatives:
            first, second = r.alternatives
            for option in (first, second):
                span = or_span(r.given, first, second)
                path_given = r.given.replace(span, option, 1) if span else r.given
                path_context = f"Given {path_given}, " + (
                    _condition(r.when, first=False) if r.when else ""
                )
                core = f"{clause} [given: {option}]"
                out.append(Piece(core, _behaviour(path_context, clause), _PATH_GIVEN))
            continue
        if r.alternatives and or_span(clause, *r.alternatives[:2]):
            first, second = r.alternatives
            if r.product_choice:
                default = clause.replace(f" or {second}", "")
                out.append(Piece(f"by default, {default}",
                                 _behaviour(context, f"by default, {_lower_first(default)}"),
                                 _PRODUCT_DEFAULT))  # fmt: skip
                out.append(Piece(f"switch: {second}",
                                 _sentence(f"the alternative ({second}) is reachable without a "
                                           "code change (configuration key, flag or environment "
                                           "variable) at the same decision point"),
                                 "disjunction (product-controlled): the switch"))  # fmt: skip
            else:
                span = or_span(clause, first, second) or f"{first} or {second}"
                at = clause.find(span)
                for option in (first, second):
                    # 'an "Access Denied" or "Join Org" page' → 'a "Join Org" page'
                    path = (
                        agree(clause[:at], option) + option + clause[at + len(span) :]
                        if at >= 0
                        else clause
                    )
                    out.append(Piece(path, _behaviour(context, path),
                                     "disjunction (independent paths): per path"))  # fmt: skip
            continue
        if r.product_choice and re.match(r"the\s+product\s+choos", clause, re.IGNORECASE):
            continue  # the product choice is the two checks above
        status = _STATUS_AND_BODY.match(clause)
        if status:
            # "respond with HTTP 400 and an error message indicating …": the verb is shared by
            # a status and a body, one check each (the message may hold its own "and").
            for part in ("status", "body"):
                core = f"{status.group('verb')} with {status.group(part)}"
                out.append(Piece(core, _behaviour(context, core), _SHARED_VERB))
            continue
        subject = _subject_fields(clause)
        if subject:
            head, artefact, fields = subject
            out.append(Piece(head, _behaviour(context, head), _CLAUSE))
            for field in fields:
                prop = _sentence(f"the {artefact} (the constructed object) carries {field}")
                out.append(Piece(f"{artefact} carries {field}", prop,
                                 "conjunction/payload: one I-check per named field",
                                 field=(artefact, field)))  # fmt: skip
            continue
        fields, artefact, at = named_fields(clause)
        if fields and fields == r.fields:
            head = _CONNECTOR.sub("", clause[:at].rstrip())
            out.append(Piece(head, _behaviour(context, head), _CLAUSE))
            for field in fields:
                prop = _sentence(f"the {artefact} (the constructed object) carries {field}")
                out.append(Piece(f"{artefact} carries {field}", prop,
                                 "conjunction/payload: one I-check per named field"))  # fmt: skip
            continue
        out.append(Piece(clause, _behaviour(context, clause), _CLAUSE))
    return out


def decomposition(text: str) -> tuple[str, ...]:
    """The cores of an AC's I-checks (see `Piece`); `("manual",)` for wording the rules
    cannot read (not English)."""
    if non_english(text):
        return ("manual",)
    return tuple(p.core for p in _i_checks(read(text)))


def _t_checks(
    r: Reading, behaviours: list[str], fields: list[tuple[str, str]]
) -> list[tuple[str, str, str, bool]]:
    """(proposition, rule, level, outcome) of each T-check: each behaviour at the level its
    own wording demands (the AC's level when the clause alone says nothing), each named
    field at the AC's contract level."""
    article = {"unit": "A unit", "e2e": "An e2e"}
    out: list[tuple[str, str, str, bool]] = []
    for behaviour in behaviours:
        own = test_level(behaviour)
        if own == "unit" and r.level != "unit" and not has_logic(behaviour):
            own = "e2e"  # the clause alone says nothing: the AC's contract level holds
        level = own
        for lvl in ("unit", "e2e") if level == "both" else (level,):
            outcome = says_outcome(behaviour) and (lvl == "e2e" or level == "unit")
            what = "the resulting state, read back (not a mock call): " if outcome else ""
            kind = "pure logic" if lvl == "unit" else "HTTP/contract/persistence"
            rule = f"level policy: {lvl} ({kind})"
            out.append((f"{article[lvl]} test asserts {what}{_lower_first(behaviour.rstrip('.'))}.",
                        rule + ("; T-outcome" if outcome else ""), lvl, outcome))  # fmt: skip
    field_level = "unit" if r.level == "unit" else "e2e"
    for artefact, field in fields:
        out.append((f"{article[field_level]} test asserts the {artefact} carries "
                    f"{_ARTICLE.sub('', field)}.",
                    f"level policy: {field_level}; conjunction/payload applies to T-checks",
                    field_level, False))  # fmt: skip
    return out


def draft_ac(ac: AcceptanceCriterion) -> DraftAC:
    if non_english(ac.text):
        # The rules read English: one check holding the AC verbatim, flagged, beats a
        # decomposition of words they cannot parse.
        checks = (
            DraftCheck(f"{ac.id}-I1", "I", ac.text.strip(), _MANUAL),
            DraftCheck(f"{ac.id}-T1", "T", f"A test asserts: {ac.text.strip()}", _MANUAL,
                       level="e2e" if test_level(ac.text) != "unit" else "unit"),
        )  # fmt: skip
        return DraftAC(ac.id, ac.text, "Not English: decompose by hand (SPEC §1 rules).", checks)
    r = read(ac.text)
    checks: list[DraftCheck] = []
    pieces = _i_checks(r)
    for n, piece in enumerate(pieces, start=1):
        checks.append(
            DraftCheck(f"{ac.id}-I{n}", "I", piece.proposition, piece.rule, wiring=piece.wiring)
        )
    behaviours = [p.proposition for p in pieces if not p.wiring and "payload" not in p.rule]
    # The reading's payload fields, but not those a status-and-body check already holds
    # ("respond with HTTP 400"), and the fields of a created artefact's subject.
    shared = " ".join(p.core for p in pieces if p.rule == _SHARED_VERB)
    fields = [(r.artefact or "", f) for f in r.fields if f not in shared]
    fields += [p.field for p in pieces if p.field]
    for n, (prop, rule, level, outcome) in enumerate(_t_checks(r, behaviours, fields), start=1):
        checks.append(DraftCheck(f"{ac.id}-T{n}", "T", prop, rule, level=level, outcome=outcome))
    notes = []
    if r.fields:
        notes.append(
            f"Conjunction/payload rule: one check per named field ({', '.join(r.fields)}), "
            f"scored on the constructed {r.artefact}."
        )
    if r.alternatives:
        kind = "product-controlled (default + switch)" if r.product_choice else "independent paths"
        notes.append(f"Disjunction rule, {kind}: {' / '.join(r.alternatives)}.")
    if r.ingress:
        notes.append("Asynchronous ingress: a wiring check on the entry point plus the outcome.")
    return DraftAC(ac.id, ac.text, " ".join(notes), tuple(checks))


def in_scope(prd: PRD) -> list[AcceptanceCriterion]:
    """The ACs that weigh in Final: those of P0/P1 stories (what the paid drafter asks about)."""
    return [ac for story in prd.stories if story.priority != "P2" for ac in story.acs]


def draft_baseline(prd: PRD, benchmark: str, prd_path: str = "prd.md") -> list[DraftAC]:
    """Draft checks for every AC with the offline rules, P2 included: a P2 story weighs 0 in
    Final but is reported as roadmap readiness (SPEC §1 roll-up), so it belongs in the
    baseline — leaving it out made `baseline check` count fewer ACs than `init` imported."""
    return [draft_ac(ac) for story in prd.stories for ac in story.acs]


class Drafter(Protocol):
    """What `evalflow baseline draft --drafter` runs: the offline rules or Claude."""

    name: str

    def draft(self, prd: PRD, benchmark: str) -> list[DraftAC]: ...


class OfflineDrafter:
    """The rule-based drafter (deterministic, no network)."""

    name = "offline rule-based drafter"

    def draft(self, prd: PRD, benchmark: str) -> list[DraftAC]:
        return draft_baseline(prd, benchmark)


def _scalar(value: str) -> str:
    return (
        yaml.safe_dump(value, default_flow_style=True, width=10**6, allow_unicode=True)
        .strip()
        .removesuffix("...")
        .strip()
    )


def render_draft(
    acs: list[DraftAC],
    benchmark: str,
    prd_path: str = "prd.md",
    priority_map: Mapping[str, str] | None = None,
    drafter: str = OfflineDrafter.name,
) -> str:
    """The draft as YAML text, each check's rule as a comment above it."""
    lines = [
        f"# DRAFT baseline written by `evalflow baseline draft` ({drafter}).",
        "# Review every check, add probes and calibration anchors, then `evalflow baseline",
        "# freeze`. Each check's comment names the decomposition rule (SPEC, seed 002) behind it.",
        f"benchmark: {_scalar(benchmark)}",
        f"prd: {_scalar(prd_path)}",
    ]
    if priority_map:
        lines.append("# The PRD's priority labels → evalflow's P0/P1/P2 (frozen with the checks).")
        lines.append("priority_map:")
        lines += [f"  {_scalar(k)}: {v}" for k, v in sorted(priority_map.items())]
    lines.append("acs:")
    for ac in acs:
        lines += [f"  - id: {_scalar(ac.id)}", f"    text: {_scalar(ac.text)}"]
        if ac.interpretation:
            lines.append(f"    interpretation: {_scalar(ac.interpretation)}")
        lines.append("    checks:")
        for c in ac.checks:
            lines.append(f"      # rule: {c.rule}")
            if c.note:
                lines.append(f"      # {c.note}")
            lines += [
                f"      - id: {_scalar(c.id)}",
                f"        kind: {c.kind}",
            ]
            if c.level:
                lines.append(f"        level: {c.level}")
            if c.outcome:
                lines.append("        outcome: true")
            if c.wiring:
                lines.append("        wiring: true")
            lines.append(f"        proposition: {_scalar(c.proposition)}")
            if c.probes:
                lines.append("        probes:")
                lines += [f"          - {_probe(p)}" for p in c.probes]
    lines.append("anchors: []  # add MET, UNMET and borderline examples with their reasons")
    return "\n".join(lines) + "\n"


def _quoted(value: str) -> str:
    # Single-quoted YAML: a regex is written as it is, no backslash doubled (docs/importers).
    return "'" + value.replace("'", "''") + "'"


def _probe(probe: Probe) -> str:
    globs = ", ".join(_quoted(g) for g in probe.path_globs)
    proposed = ", proposed: true" if probe.proposed else ""
    return (
        f"{{kind: {probe.kind}, pattern: {_quoted(probe.pattern)}, path_globs: [{globs}]"
        f"{proposed}}}"
    )
