"""`evalflow baseline lint`: warnings for violations of SPEC's decomposition rules (seed 002).

A baseline can be structurally valid (`baseline check`) and still collapse what SPEC says to
keep apart. Each rule reads the AC's wording with `evalflow.domain.ac_language` — the same
reading the drafter uses — and compares it with the checks: payload fields vs I-checks, "or"
without per-path or default+switch checks, asynchronous ingress without a wiring check,
outcome wording without an `outcome: true` T-check, T levels below the policy, a proposition
joining two behaviours with "and" or leaving an "or" of two paths in one check, an AC whose
wording reads as more checks than it has, a named payload field without its own I- and
T-check, a proposition that does not read as a sentence (no verb, a dangling conjunction,
unbalanced brackets or quotes, a doubled phrase), a duplicate check, no calibration anchors or
no borderline one; and, given the repository's files, probes that match nothing or only
documentation (patterns printed as written). Pure: the caller reads the files. (A T-check
without a level never gets here: the baseline model refuses it with the check's id.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from evalflow.domain.ac_language import (
    Reading,
    alternatives,
    behaviours_in,
    joins_behaviours,
    mask_nested,
    non_english,
    read,
)
from evalflow.domain.globs import any_glob
from evalflow.domain.models import Baseline, BaselineAC
from evalflow.domain.patterns import compile_untrusted

_DEFAULT = re.compile(r"\bdefault\b", re.IGNORECASE)
_SWITCH = re.compile(
    r"\bconfig\w*|\bflag\b|\benvironment\b|\bvariable\b|\bsetting\b|\bswitch\w*|code\s+change",
    re.IGNORECASE,
)


@dataclass(frozen=True, order=True)
class LintWarning:
    where: str
    rule: str
    message: str

    def line(self) -> str:
        return f"{self.where}: [{self.rule}] {self.message}"


def _words(text: str) -> set[str]:
    # Short words count: an option may be `X` or 75.
    return {w for w in re.findall(r"[a-z0-9_-]+", text.lower()) if w not in {"the", "and", "by"}}


# What a drafted proposition puts before its behaviour: the AC's context ("Given …, when …, ")
# and a T-check's frame ("An e2e test asserts the resulting state, read back …: ").
_CONTEXT = re.compile(r"^(?:given\b[^,]*,\s+)?(?:when\b[^,]*,\s+)?", re.IGNORECASE)
_CONDITION_WORD = re.compile(r"^(?:given|when|if|while|where)\s+", re.IGNORECASE)
_T_FRAME = re.compile(
    r"^an?\s+(?:unit|e2e|integration)?\s*test\s+asserts?\s+(?:that\s+)?"
    r"(?:the\s+resulting\s+state,\s+read\s+back\s+\(not\s+a\s+mock\s+call\):\s+)?",
    re.IGNORECASE,
)
_VERBISH = re.compile(r"\b\w+(?:s|ed|ing|en)\b|\b(?:is|are|be|has|have|can|must|shall|should|will|"
                      r"may|do|does|show|return|create|reject|persist|send|emit|display|"
                      r"set|keep|run|get|put|let|use|see)\b", re.IGNORECASE)  # fmt: skip
_DOUBLED = re.compile(r"\b(\w+(?:\s+\w+){1,5})\s+\1\b", re.IGNORECASE)


def _behaviour(check_prop: str, kind: str, r: Reading) -> str:
    """The behaviour a proposition states, without the AC's context ("Given …, when …, ", as
    the drafter writes it) or the test frame."""
    text = check_prop.strip().rstrip(".")
    if kind == "T":
        text = _T_FRAME.sub("", text)
    for words in (r.given, r.when):
        if not words:
            continue
        # The drafter writes an EARS condition with its own word, once ("If the `limit` …").
        core = re.escape(_CONDITION_WORD.sub("", words))
        prefix = re.match(rf"(?:given|when|if|while|where)\s+{core},\s+", text, re.IGNORECASE)
        if prefix:
            text = text[prefix.end() :]
    return _CONTEXT.sub("", text)


def not_a_sentence(proposition: str) -> str | None:
    """Why `proposition` does not read as a sentence, or None: no verb at all, a dangling
    conjunction or comma, brackets or quotes left open, a phrase said twice in a row."""
    text = proposition.strip()
    masked = mask_nested(text)
    if not _VERBISH.search(masked):
        return "has no verb"
    if re.search(r"(?:,|\b(?:and|or|but|with|to|of))\s*\.?$", text, re.IGNORECASE) or re.match(
        r"(?:and|or|but)\b", text, re.IGNORECASE
    ):
        return "ends or starts with a conjunction"
    for left, right in ("()", "[]", "{}"):
        if text.count(left) != text.count(right):
            return f"leaves a '{left}' unbalanced"
    if text.count("`") % 2 or text.count('"') % 2:
        return "leaves a quote or code span open"
    doubled = _DOUBLED.search(text)
    if doubled:
        return f"says {text[doubled.start(1) : doubled.end(1)]!r} twice"
    return None


_STOP = {"the", "a", "an", "its", "their", "and", "or", "of", "to", "in", "on", "with", "by"}


def _names(proposition: str, field: str) -> bool:
    """`proposition` names `field`: more than half of the field's words occur in it, also
    inside an identifier ("the user" in `userId`, "trial end date" in `trialEndsAt`)."""
    words = [w for w in re.findall(r"[a-z0-9]{2,}", field.lower()) if w not in _STOP]
    text = proposition.lower()
    return bool(words) and 2 * sum(w in text for w in words) > len(words)


def _ac_warnings(ac: BaselineAC) -> list[LintWarning]:
    r = read(ac.text)
    out: list[LintWarning] = []
    i_checks = [c for c in ac.checks if c.kind == "I"]
    t_checks = [c for c in ac.checks if c.kind == "T"]
    behaviour = [c for c in i_checks if not c.wiring]
    if r.fields and len(behaviour) < len(r.fields):
        out.append(LintWarning(ac.id, "payload",
            f"names {len(r.fields)} fields of the {r.artefact} ({', '.join(r.fields)}) but has "
            f"{len(behaviour)} I-check(s): one I-check per named field"))  # fmt: skip
    if r.alternatives:
        props = " ".join(c.proposition for c in i_checks)
        if r.product_choice:
            if not (_DEFAULT.search(props) and _SWITCH.search(props)):
                out.append(LintWarning(ac.id, "disjunction",
                    f"product-controlled choice ({' / '.join(r.alternatives)}) needs a default "
                    "I-check and a switch I-check (reachable without a code change)"))  # fmt: skip
        else:
            words = _words(props)
            missing = [a for a in r.alternatives if not (_words(a) & words)]
            if missing or len(i_checks) < 2:
                out.append(LintWarning(ac.id, "disjunction",
                    f"'or' ({' / '.join(r.alternatives)}) needs one I-check per path"))  # fmt: skip
    if r.ingress and not any(c.wiring for c in i_checks):
        out.append(LintWarning(ac.id, "wiring",
            "asynchronous ingress without a wiring I-check (wiring: true)"))  # fmt: skip
    if r.outcome and not any(c.outcome for c in t_checks):
        out.append(LintWarning(ac.id, "outcome",
            "outcome wording (becomes/persisted/status) but no outcome: true T-check"))  # fmt: skip
    levels = {c.level for c in t_checks}
    has_unit = bool(levels & {"unit", "both"})
    has_e2e = bool(levels & {"e2e", "both"})
    # The policy level is a floor: an e2e test may prove a unit proposition, not the reverse.
    if t_checks and r.level in ("e2e", "both") and not has_e2e:
        out.append(LintWarning(ac.id, "test-level",
            f"the policy demands {r.level} (HTTP/persistence); every T-check is unit"))  # fmt: skip
    if t_checks and r.level == "both" and not has_unit:
        out.append(LintWarning(ac.id, "test-level", "the policy demands a unit T-check too"))
    for c in ac.checks:
        if c.wiring:
            continue
        behaviour = _behaviour(c.proposition, c.kind, r)
        clauses = behaviours_in(behaviour)
        if joins_behaviours(c.proposition) or len(clauses) > 1:
            out.append(LintWarning(c.id, "atomic",
                "the proposition joins two behaviours with 'and': split it"
                + (f" ({' / '.join(clauses)})" if len(clauses) > 1 else "")))  # fmt: skip
        elif c.kind == "I" and alternatives(behaviour) and not r.product_choice:
            paths = " / ".join(alternatives(behaviour))
            out.append(LintWarning(c.id, "atomic",
                f"the proposition leaves an 'or' of two paths ({paths}) in one check: one check "
                "per path"))  # fmt: skip
        why = None if non_english(c.proposition) else not_a_sentence(c.proposition)
        if why:
            out.append(LintWarning(c.id, "sentence", f"the proposition {why}"))
    seen: dict[str, str] = {}
    for c in ac.checks:
        key = " ".join(c.proposition.lower().split()).rstrip(".")
        if key in seen:
            out.append(LintWarning(c.id, "duplicate", f"says what {seen[key]} says"))
        seen.setdefault(key, c.id)
    for field in r.fields:
        for kind in ("I", "T"):
            others = [f for f in r.fields if f != field]
            own = [c for c in ac.checks if c.kind == kind and _names(c.proposition, field)
                   and not any(_names(c.proposition, f) for f in others)]  # fmt: skip
            if not own:
                out.append(LintWarning(ac.id, "payload-field",
                    f"the named field {field!r} of the {r.artefact} has no {kind}-check of its "
                    "own (one per field, verified on the constructed object)"))  # fmt: skip
    behaviours = [c for c in i_checks if not c.wiring]
    if not (r.alternatives or non_english(ac.text)) and len(behaviours) < len(r.clauses):
        out.append(LintWarning(ac.id, "conjunction",
            f"the AC states {len(r.clauses)} behaviours ({' / '.join(r.clauses)}) but has "
            f"{len(behaviours)} I-check(s): one per behaviour"))  # fmt: skip
    return out


def lint_baseline(baseline: Baseline) -> list[LintWarning]:
    """Every rule violation of the baseline, in AC order (deterministic)."""
    out = [w for ac in baseline.acs for w in _ac_warnings(ac)]
    if not baseline.anchors:
        out.append(LintWarning(baseline.benchmark, "anchors",
            "no calibration anchors: add MET, UNMET and borderline examples"))  # fmt: skip
    elif not any(a.borderline for a in baseline.anchors):
        # SPEC's calibration reads clear MET, clear UNMET and one borderline example: the
        # borderline one is what teaches a judge where this benchmark draws the line.
        out.append(LintWarning(baseline.benchmark, "anchors",
            "no borderline anchor: add one (borderline: true) with its settled verdict "
            "and reason"))  # fmt: skip
    return out


def lint_probes(
    baseline: Baseline,
    files: Mapping[str, str],
    is_code: Callable[[str, str], bool],
    is_doc: Callable[[str], bool],
) -> list[LintWarning]:
    """Probes that match no line of the repository, or only lines of documentation."""
    out: list[LintWarning] = []
    for _, check in baseline.checks():
        for n, probe in enumerate(check.probes, start=1):
            regex = compile_untrusted(probe.pattern)
            hits = [p for p, text in sorted(files.items()) if any_glob(p, probe.path_globs)
                    and any(regex.search(line) for line in text.split("\n"))]  # fmt: skip
            where = f"{check.id}.probes[{n}]"
            if not hits:
                out.append(
                    LintWarning(where, "probe", f"{_as_written(probe.pattern)} matches nothing")
                )
            elif (
                probe.files == "code"
                and all(is_doc(p) or not is_code(p, files[p]) for p in hits)
                and probe.kind == "impl"
            ):
                pattern = _as_written(probe.pattern)
                out.append(LintWarning(where, "probe",
                    f"{pattern} matches documentation only ({hits[0]})"))  # fmt: skip
    return out


def _as_written(pattern: str) -> str:
    """A pattern as the baseline writes it (single-quoted YAML): `\\d` stays one backslash,
    where repr() would print two."""
    return "'" + pattern.replace("'", "''") + "'"
