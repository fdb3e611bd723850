"""`evalflow baseline lint`: warnings for violations of SPEC's decomposition rules (seed 002).

A baseline can be structurally valid (`baseline check`) and still collapse what SPEC says to
keep apart. Each rule reads the AC's wording with `evalflow.domain.ac_language` — the same
reading the drafter uses — and compares it with the checks: payload fields vs I-checks, "or"
without per-path or default+switch checks, asynchronous ingress without a wiring check,
outcome wording without an `outcome: true` T-check, T levels below the policy, a proposition
joining two behaviours with "and", no calibration anchors or no borderline one; and, given
the repository's files, probes that match nothing or only documentation. Pure: the caller
reads the files.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from evalflow.domain.ac_language import joins_behaviours, read
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
    return {w for w in re.findall(r"[a-z0-9_-]{3,}", text.lower()) if w not in {"the", "and", "by"}}


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
        if not c.wiring and joins_behaviours(c.proposition):
            out.append(LintWarning(c.id, "atomic",
                "the proposition joins two behaviours with 'and': split it"))  # fmt: skip
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
                out.append(LintWarning(where, "probe", f"{probe.pattern!r} matches nothing"))
            elif (
                probe.files == "code"
                and all(is_doc(p) or not is_code(p, files[p]) for p in hits)
                and probe.kind == "impl"
            ):
                out.append(LintWarning(where, "probe",
                    f"{probe.pattern!r} matches documentation only ({hits[0]})"))  # fmt: skip
    return out
