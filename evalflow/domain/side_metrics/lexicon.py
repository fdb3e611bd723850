"""The heuristic lexicons and the light text normalisation every side metric shares.

Everything a side metric decides by wording lives here, so a reviewer can audit (and a
benchmark can override) one file. Matching is deterministic and case-insensitive.

Normalisation (`words`, `stem`, `content_tokens`): camelCase and snake_case identifiers
are split into words; words are lower-cased; a few number words become digits; function
words and SDD boilerplate (`given`, `when`, `then`, `shall`, `must`, `system`, …) and id-like
tokens (`s1`, `ac2`, `fr10`, `001`) are dropped; a light suffix stemmer folds plurals and
-ed/-ing forms (`cancelling` → `cancel`, `upgrades` → `upgrad`, `trials` → `trial`).
"""

from __future__ import annotations

import re
from functools import lru_cache

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[a-z0-9]+")
_ID_LIKE = re.compile(r"^(?:[a-z]{1,3}\d+|0\d+)$")
_DOUBLE = re.compile(r"([b-df-hj-kmnp-tv-z])\1$")


def _word_set(*lines: str) -> frozenset[str]:
    return frozenset(word for line in lines for word in line.split())


NUMBER_WORDS: dict[str, str] = {
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "ten": "10",
    "fourteen": "14",
    "thirty": "30",
}

STOPWORDS: frozenset[str] = _word_set(
    "a an the and or nor not no but if then else when while where which who whom whose what",
    "that this these those there here it its is are was were be been being am do does did",
    "has have had having of in on at to for from by with without into onto over under than",
    "as per via so such can could would will may might must shall should also only any all",
    "each every both either neither some same other own more most very just too up down out",
    "off again once about after before above below between through during until against",
    "i me my we our you your he she they them their his her us",
    "given system systems e g eg ie etc prd fr nfr sc ac",
)

# --- D: the main path of an AC -----------------------------------------------------------
# A T-check is on an AC's *main success path* unless its proposition (with `backticked`
# names removed: `payment.failed` names an event, it does not assert a failure) matches this
# negative/error lexicon. An AC whose T-checks all match is itself a negative-path AC.
NEGATIVE_PATH = re.compile(
    r"\b(?:reject\w*|refus\w*|invalid\w*|errors?|fails?|failure\w*|unauthori[sz]\w*|forbidden"
    r"|not found|conflict\w*|4\d\d|5\d\d|unchanged|changes nothing|no second|at most"
    r"|duplicat\w*|idempot\w*|dedup\w*|replay\w*|twice|already|unknown|malformed|tamper\w*"
    r"|bad|badly)\b",
    re.IGNORECASE,
)
_BACKTICKED = re.compile(r"`[^`]*`")

# --- R: robustness weight of an extra test --------------------------------------------------
# Matched against the test's name (snake/camel split into words) and its source lines.
ROBUST_HIGH = re.compile(
    r"pytest\.raises|assertraises|tothrow|\brejects?\b|\brejected\b|refus\w*|invalid\w*"
    r"|malformed|tamper\w*|forbidden|unauthori[sz]\w*|\b[45]\d\d\b|boundar\w*|\blimits?\b"
    r"|overflow|too large|concurren\w*|\brac(?:e|es|ing)\b|parallel|thread\w*|rollback"
    r"|integrityerror|timeout\w*|retr(?:y|ies|ied)\b|\bfails?\b|failure|failing|\berrors?\b"
    r"|exception\w*|not supported|unsupported|conflict\w*|cannot",
    re.IGNORECASE,
)
ROBUST_MED = re.compile(
    r"\bempty\b|\bnull\b|==\s*\[\]|==\s*\{\}|unknown|duplicat\w*|twice|again"
    r"|replay\w*|already|\benums?\b|mapping|status_of|\bstates?\b|transition\w*|not yet"
    r"|\blater\b|\bzero\b|nothing|missing|default\w*|idempot\w*|dedup\w*|round\w*|\bonce\b"
    r"|\bedge\b",
    re.IGNORECASE,
)
ROBUST_LOW_HINT = re.compile(
    r"helper|util|repr|__str__|getter|property|fixture|\bfake\b|\bstub\b|internal",
    re.IGNORECASE,
)

# --- E: spec sections, markers and the category rubric ----------------------------------
# A heading matching EXCLUDED_SECTION holds context, not requirements (checked first);
# one matching REQUIREMENT_SECTION holds requirements; any other heading inherits from its
# parent, and the top of a file counts as a requirement section.
EXCLUDED_SECTION = re.compile(
    r"success criteria|out[\s-]of[\s-]scope|non[\s-]?goals?|deferred|clarification|assumption"
    r"|\bgoals?\b|background|change\s*log|overview|introduction|component|data model|entit"
    r"|architecture|testing strategy|epic list|agent|file list|glossary|references?\b"
    r"|dependencies|open questions|notes\b",
    re.IGNORECASE,
)
REQUIREMENT_SECTION = re.compile(
    r"requirement|acceptance|criteria|scenario|functional|edge case|error|constraint|rule"
    r"|decision|user stor|\bstory\b",
    re.IGNORECASE,
)
# An item carrying one of these declares itself an addition (derived from, not stated by,
# the PRD), even when it also cites a PRD id.
DECLARED_ADDITION = re.compile(r"\b(?:implied|derived|inferred)\b", re.IGNORECASE)
# E_justified: an addition carrying an explicit rationale or traceability marker.
JUSTIFICATION = re.compile(
    r"\bbecause\b|\brationale\s*:|\bso that\b|\bimplied\b|\bderived\b|\bin order to\b"
    r"|\bto (?:prevent|avoid|guarantee|ensure)\b|\bwhy\b",
    re.IGNORECASE,
)
# A task that only concerns tests, tooling or formatting is no product requirement.
TOOLING_TASK = re.compile(
    r"\btests?\b|\bfixtures?\b|\blint\w*|\bruff\b|\bmypy\b|\bformat\w*|\bci\b|\bpolish\b"
    r"|\bdocs?\b|\breadme\b",
    re.IGNORECASE,
)
DEFERRAL = re.compile(
    r"\bdeferred\b|\bdefer\b|\blater (?:release|iteration|phase|version)\b"
    r"|\bnot in this (?:iteration|release)\b|\bnext (?:iteration|release)\b"
    r"|\bfuture (?:release|iteration)\b|\bnot part of this (?:spec|iteration|release)\b",
    re.IGNORECASE,
)

# The ten fixed categories of SPEC §1 Elicitation (a benchmark may extend or replace them
# in its frozen rubric file). Each pattern decides whether a requirement text concerns it.
DEFAULT_CATEGORIES: tuple[tuple[str, str, str], ...] = (
    (
        "input_validation",
        "input validation and ranges",
        r"\bvalidat\w*|\binvalid\w*|malformed|well-formed|\bsyntax\b|normali[sz]\w*|\btrim\w*"
        r"|lower-?cas\w*|\branges?\b|\bchars?\b|\bcharacters\b|\bmissing\b|\bno email\b"
        r"|not (?:a )?json|\bno `?@",
    ),
    (
        "error_taxonomy",
        "error taxonomy and messages",
        r"error (?:codes?|taxonomy|messages?)|stable (?:error )?codes?|\b4\d\d\b|\b5\d\d\b"
        r"|status codes?|problem\+json",
    ),
    (
        "authn_authz",
        "authn/authz",
        r"\bauth\w*|\bsignatures?\b|\bsigned\b|\bhmac\b|\btokens?\b|credential\w*|permission\w*"
        r"|\broles?\b|\badmins?\b|forbidden|unauthori[sz]\w*|\b401\b|\b403\b|\bsecrets?\b"
        r"|constant[- ]time|compare_digest",
    ),
    (
        "idempotency",
        "idempotency and dedup",
        r"idempot\w*|dedup\w*|de-duplicat\w*|duplicat\w*|replay\w*|redeliver\w*|at most once"
        r"|exactly once|only once|already processed|event ids?\b",
    ),
    (
        "concurrency",
        "concurrency and races",
        r"concurren\w*|\brac(?:e|es|ing)\b|\bparallel\b|simultaneous\w*|\block(?:s|ing)?\b"
        r"|atomic\w*|unique (?:index|constraint)|overlapping",
    ),
    (
        "data_lifecycle",
        "data lifecycle and integrity",
        r"transaction\w*|rollback|roll back|\bcommit\w*|retention|\bretain\w*|\bdelet\w*"
        r"|\bpurg\w*|archiv\w*|migrat\w*|integrity|consisten\w*|partial failure|cascad\w*"
        r"|foreign key|persists? nothing|nothing is persisted|without a migration",
    ),
    (
        "observability",
        "observability",
        r"\blog(?:s|ged|ging)?\b|\bmetrics?\b|\btrac(?:e|es|ing)\b|monitor\w*|\balert\w*"
        r"|\baudit\w*|observab\w*|telemetry",
    ),
    (
        "limits",
        "limits, pagination, rate",
        r"\blimit\w*|paginat\w*|page size|rate[- ]limit\w*|throttl\w*|\bquotas?\b|\b413\b"
        r"|\b429\b|\bkib\b|\bmib\b|too large|max(?:imum)? (?:size|length)|bodies (?:over|above)",
    ),
    (
        "external_failure",
        "external dependency failure",
        r"timeouts?|time out|\bretr(?:y|ies|ied)\b|circuit[- ]breaker|fallback|backoff"
        r"|unavailable|\b503\b|(?:notifier|delivery|provider|dependency) fails?"
        r"|failed delivery|fails for",
    ),
    (
        "state_transitions",
        "state-transition integrity",
        r"transition\w*|\bterminal\b|state machine|status machine|\billegal\b|not allowed"
        r"|disallowed|\btwice\b|\brevive\w*|only `?\w+`? (?:subscriptions?|trials?) can",
    ),
)
# Heuristic addition verdicts: an addition in one of these categories fills a gap the PRD
# leaves undefined (valid-necessary); the others are hardening (valid-defensive).
NECESSARY_CATEGORIES: frozenset[str] = frozenset(
    {"input_validation", "error_taxonomy", "idempotency", "data_lifecycle", "state_transitions"}
)

# --- S: scope tracing --------------------------------------------------------------------
# Module names that are glue every implementation needs; they trace by construction.
INFRASTRUCTURE_MODULES: frozenset[str] = _word_set(
    "init main app api server routes router urls views handlers http db database models model",
    "schema schemas store storage repository repositories repo dao config settings conf events",
    "event bus utils util helpers helper common core errors exceptions types constants logging",
    "log migrations deps dependencies services service domain clock time index",
)
ROUTE_DECLARATION = re.compile(
    r"""(?:route\(\s*["'](?:GET|POST|PUT|PATCH|DELETE)["']\s*,\s*["'](/[^"']*)["'])"""
    r"""|(?:\.(?:route|get|post|put|patch|delete)\(\s*["'](/[^"']*)["'])""",
    re.IGNORECASE,
)
DEFINITION = re.compile(
    r"^(?:async\s+def|def|class|function|export\s+(?:default\s+)?(?:async\s+)?function"
    r"|export\s+class|export\s+const)\s+([A-Za-z_]\w*)"
)
NON_CODE_LINE = re.compile(r"""^\s*(?:#|//|/\*|\*|\"\"\"|'''|"[^"]*"\s*$|'[^']*'\s*$)""")
CODE_KEYWORD = re.compile(r"`([^`]+)`|\b([A-Za-z]+_[A-Za-z0-9_]+)\b|\b([1-5]\d\d)\b")


def words(text: str) -> list[str]:
    """Lower-cased words; camelCase and snake_case are split, number words become digits."""
    return [NUMBER_WORDS.get(w, w) for w in _WORD.findall(_CAMEL.sub(" ", text).lower())]


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A light suffix stemmer: plurals, -ed, -ing, a final -e; doubled consonants undone."""
    w = word
    if w.isdigit() or len(w) <= 3:
        return w
    if w.endswith(("ies", "ied")) and len(w) > 4:
        return w[:-3] + "y"
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            return w[:-1] if _DOUBLE.search(w) else _single_l(w)
    if w.endswith("es") and w[:-2].endswith(("s", "x", "z", "ch", "sh")):
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    return _single_l(w)


def _single_l(w: str) -> str:
    """British and American spellings meet (`cancell-ing`, `cancel-ing`); short words
    such as `bill` or `spell` keep their double l."""
    return w[:-1] if w.endswith("ll") and len(w) >= 6 else w


def content_tokens(text: str) -> frozenset[str]:
    """Stemmed content words of a text (see the module docstring)."""
    return frozenset(
        stem(w)
        for w in words(text)
        if w not in STOPWORDS and not _ID_LIKE.match(w) and (len(w) > 1 or w.isdigit())
    )


def is_negative_path(proposition: str) -> bool:
    """Whether a T-check proposition asserts a negative/error path (see NEGATIVE_PATH)."""
    return NEGATIVE_PATH.search(_BACKTICKED.sub(" ", proposition)) is not None


def prefix_hits(tokens: list[str], prefixes: tuple[str, ...]) -> list[str]:
    """The prefixes some token starts with, in prefix order."""
    return [p for p in prefixes if any(t.startswith(p) for t in tokens)]
