"""When a probe that matches nothing proves absence in *any* implementation of the PRD.

A probe is a line pattern written against some implementation; that it matches nothing in
another run proves nothing when the other run wrote the behaviour in another idiom (SPEC §5,
"One baseline, every implementation alike"). This module owns the grounds on which the
heuristic judge may still answer UNMET — every other probe that fails leaves its check
UNSCORED, "no portable proof of absence":

1. **An identifier the AC fixes is absent.** The AC text fixes some names every
   implementation must spell as written (`fixed_identifiers`: a `backtick` span, a "quoted"
   message, a route path, a snake_case/camelCase name, an HTTP status code). When the probe
   pins one of them (`pinned`: it occurs in the pattern's literal text) and a search over every
   file of the probe's kind in the run (all production code, or all tests) finds it nowhere,
   no implementation idiom can hold the behaviour (`absence_tokens`: a route counts as absent
   when one of its fixed path segments is).
2. **The run has no file of the probe's kind at all** (no test file: no test can assert
   anything; a run confined to its `root:` folder sees only its own files).
3. **The probe is recorded portable.** `evalflow baseline lint --runs --record` runs every
   probe against every run of the benchmark and records in the baseline, before it is frozen,
   in which runs each probe's pattern matched lines of its kind (`Baseline.checked_against`).
   A probe that matched in runs other than the one being judged, of at least
   `PORTABLE_FRAMEWORKS` frameworks, has shown it finds the behaviour whatever the idiom
   (`portable_probes`). Another run of the judged run's own framework counts as one of them:
   it is the closest witness that the probe reaches the idiom this run would use (measured
   on the demo: trialist speckit r1's one such UNMET is right, its sibling r2 differs by the
   very assertion). Runs of one framework alone never suffice (they show one idiom), and
   the judged run's own match never counts.

A probe that *does* match lines of the run but none that qualify (a test that does not assert
it, asserts only through mocks, or at a lower level) is no silence: the judge reads those
lines and may answer UNMET from them; only a level verdict needs the run's tests to be
classified by the benchmark's level policy at all (see `evalflow.judges.heuristic`).

It also owns the portability lint of a baseline across runs (`portability_findings`): a
probe matching in exactly one run, path globs rooted under one run's layout, and
identifiers of a pattern that occur in no PRD text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from evalflow.domain.models import Baseline, CheckedRuns

# A probe is portable once it matched in runs of this many frameworks (the run being judged
# not counted, its framework's other runs counted): one idiom shows only that the probe fits
# the code it was written from.
PORTABLE_FRAMEWORKS = 2
NO_PORTABLE_PROOF = "no portable proof of absence"
# The verdict flags the heuristic judge sets (`evalflow.judges.heuristic`), counted by reports.
FLAG_PROVEN_ABSENT = "absence-proven"
FLAG_NO_PORTABLE_PROOF = "no-portable-proof"
# Set by `evalflow.domain.acceptance`: an executable acceptance check ran and failed, a proof
# of absence by behaviour at the PRD's interface, alike for every implementation.
FLAG_RUN_FAILED = "run-failed"
# Shorter names (`id`, `to`) occur everywhere and fix nothing.
_MIN_IDENTIFIER = 3

_BACKTICK = re.compile(r"`([^`]+)`")
_QUOTED = re.compile(r"[\"“]([^\"”\n]{2,80})[\"”]")
_ROUTE = re.compile(r"(?<![\w/])/[A-Za-z0-9_{}:<>.-]+(?:/[A-Za-z0-9_{}:<>.-]*)*")
_CODE_NAME = re.compile(r"\b(?:[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)\b")
_STATUS = re.compile(r"\b[1-5]\d\d\b")
_PARAM = re.compile(r"^(?:\{.*\}|:.*|<.*>)$")
# Regex syntax in a probe pattern, in the order it is read: a letter escape (`\s`, `\d`) or
# a character class is no literal text; an escaped punctuation character is that character.
_SYNTAX = re.compile(
    r"(?P<class>\\[A-Za-z]|\[(?:\\.|[^\]])*\])|\\(?P<char>.)|(?P<group>\(\?[^):]*[:)])"
    r"|(?P<repeat>\{\d*,?\d*\})|(?P<meta>[.*+?^$|()])"
)


def fixed_identifiers(text: str) -> tuple[str, ...]:
    """The names an AC's text fixes for every implementation, in order of appearance.

    A backtick span is split at whitespace (`POST /trials` fixes `POST` and `/trials`); a
    quoted phrase is kept whole (a message: "Invalid input"); route paths, snake_case and
    camelCase names and HTTP status codes are taken from the prose as well."""
    found: list[str] = []
    for span in _BACKTICK.findall(text):
        found += span.split()
    found += [q.strip() for q in _QUOTED.findall(_BACKTICK.sub(" ", text))]
    for pattern in (_ROUTE, _CODE_NAME, _STATUS):
        found += pattern.findall(text)
    return tuple(
        dict.fromkeys(
            name.strip(".,;:") for name in found if len(name.strip(".,;:")) >= _MIN_IDENTIFIER
        )
    )


def literal_text(pattern: str) -> str:
    """The literal characters of a probe pattern; regex syntax becomes a space
    (`assert .*\\["clicks"\\]` → `assert  ["clicks"]`)."""

    def literal(match: re.Match[str]) -> str:
        return match.group("char") if match.group("char") is not None else " "

    return _SYNTAX.sub(literal, pattern)


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _route_key(identifier: str) -> str:
    """A route's fixed prefix: its text up to the first parameter segment."""
    fixed = []
    for segment in identifier.split("/"):
        if _PARAM.match(segment):
            break
        fixed.append(segment)
    return "/".join(fixed)


def pinned(pattern: str, identifiers: Iterable[str]) -> tuple[str, ...]:
    """The identifiers whose text the pattern spells out literally (case-insensitive)."""
    text = _normal(literal_text(pattern))
    out: list[str] = []
    for name in identifiers:
        key = _route_key(name) if name.startswith("/") else name
        if len(key) >= _MIN_IDENTIFIER and _normal(key) in text:
            out.append(name)
    return tuple(out)


def absence_tokens(identifier: str) -> tuple[str, ...]:
    """What a search must find for the identifier to be present, lower case: a route's fixed
    segments (a router prefix may hold `/api` apart from `/trials`, so each is searched on its
    own), otherwise the identifier itself. The identifier is absent when any token is."""
    if identifier.startswith("/"):
        segments = [s for s in identifier.split("/") if s and not _PARAM.match(s)]
        return tuple(s.lower() for s in segments if len(s) >= 2)
    return (_normal(identifier),)


def portable_probes(record: CheckedRuns | None, run_key: str) -> frozenset[tuple[str, int]]:
    """(check id, 1-based probe number) of every probe recorded as matching in runs other
    than `run_key` of at least PORTABLE_FRAMEWORKS frameworks (`run_key`'s own framework
    among them when another of its runs matched)."""
    if record is None:
        return frozenset()
    # Only runs named by run key count: a draft names its `--repo` runs by folder, and the
    # judged run's own folder would pass for "another framework" (a false proof of absence).
    framework = {r.run: r.framework for r in record.runs if _framework_of(r.run) == r.framework}
    out: set[tuple[str, int]] = set()
    for check_id, per_probe in record.matched.items():
        for n, runs in enumerate(per_probe, start=1):
            others = {framework[r] for r in runs if r in framework and r != run_key}
            if len(others) >= PORTABLE_FRAMEWORKS:
                out.add((check_id, n))
    return frozenset(out)


def _framework_of(run_key: str) -> str | None:
    """The framework of a run key `<benchmark>.<framework>.<run>`, else None."""
    parts = run_key.split(".")
    return parts[1] if len(parts) == 3 and all(parts) else None


@dataclass(frozen=True)
class AbsenceCounts:
    """How a run's UNMETs were proven, and how many checks lack a portable proof."""

    searched: int  # UNMET: a portable search found the behaviour nowhere
    ran: int  # UNMET: an executable acceptance check ran and failed
    other: int  # UNMET on other grounds (lines the judge read, a model judge's answer)
    unproven: int  # UNSCORED: no portable proof of absence

    @property
    def proven(self) -> int:
        return self.searched + self.ran


def absence_counts(verdicts: Iterable[tuple[str, Iterable[str]]]) -> AbsenceCounts:
    """The counts over (majority status, flags of the verdict behind it)."""
    rows = [(status, set(flags)) for status, flags in verdicts]
    searched = sum(s == "UNMET" and FLAG_PROVEN_ABSENT in f for s, f in rows)
    ran = sum(s == "UNMET" and FLAG_RUN_FAILED in f and FLAG_PROVEN_ABSENT not in f
              for s, f in rows)  # fmt: skip
    unmet = sum(s == "UNMET" for s, _ in rows)
    unproven = sum(s == "UNSCORED" and FLAG_NO_PORTABLE_PROOF in f for s, f in rows)
    return AbsenceCounts(searched, ran, unmet - searched - ran, unproven)


def absence_line(verdicts: Iterable[tuple[str, Iterable[str]]]) -> str | None:
    """One report line over (majority status, flags) per check: how many UNMETs
    are proven (by a portable search, by a failed executable check), how many were judged
    otherwise, and how many checks are UNSCORED for want of a portable proof of absence. None
    when no check is either."""
    n = absence_counts(verdicts)
    if not (n.proven or n.other or n.unproven):
        return None
    return (
        f"UNMET: {n.proven} proven ({n.searched} absent by a portable search, {n.ran} failed an "
        f"executable acceptance check), {n.other} judged otherwise; {n.unproven} UNSCORED with "
        f"{NO_PORTABLE_PROOF} (SPEC §5: one baseline, every implementation alike)."
    )


@dataclass(frozen=True)
class Finding:
    """One portability warning about one probe of a baseline."""

    check_id: str
    probe: int
    message: str

    def line(self) -> str:
        return f"{self.check_id} probe {self.probe}: {self.message}"


def portability_findings(
    baseline: Baseline,
    matched: Mapping[str, Sequence[Sequence[str]]],
    layouts: Mapping[str, Sequence[str]],
    prd_text: str,
) -> list[Finding]:
    """Warnings about probes that would judge the runs unalike.

    `matched`: check id → per probe, the run keys where it matched; `layouts`: run
    key → the run's changed file paths (its own source layout); `prd_text`: the PRD.
    - a probe that matches in exactly one of several runs (fitted to that run);
    - a path glob whose fixed directory holds changed files of exactly one of several runs
      (rooted under that run's layout);
    - a name the pattern spells that occurs in no PRD text (it pins one implementation's
      idiom, not the PRD's interface) — reported once per probe, the first three names.
    """
    out: list[Finding] = []
    runs = sorted(layouts)
    prd = prd_text.lower()
    for _, check in baseline.checks():
        recorded = matched.get(check.id, ())
        for n, probe in enumerate(check.probes, start=1):
            where = list(recorded[n - 1]) if n <= len(recorded) else []
            if len(runs) > 1 and len(where) == 1:
                out.append(Finding(check.id, n, f"matches only in {where[0]} of {len(runs)} runs"))
            for glob in probe.path_globs:
                prefix = _glob_prefix(glob)
                if not prefix or len(runs) < 2:
                    continue
                holders = [r for r in runs if any(p.startswith(prefix) for p in layouts[r])]
                if len(holders) == 1:
                    out.append(
                        Finding(
                            check.id,
                            n,
                            f"glob {glob!r} is rooted under {holders[0]}'s layout only "
                            "(the other runs changed no file there)",
                        )
                    )
            names = [
                w
                for w in dict.fromkeys(_CODE_NAME.findall(literal_text(probe.pattern)))
                if w.lower() not in prd
            ]
            if names:
                out.append(
                    Finding(
                        check.id,
                        n,
                        "names in no PRD text: "
                        + ", ".join(names[:3])
                        + " (an implementation's idiom)",
                    )
                )
    return out


def _glob_prefix(glob: str) -> str:
    """The fixed directory of a glob (`backend/src/**.py` → `backend/src/`), or ''."""
    parts = glob.split("/")
    fixed = []
    for part in parts[:-1]:
        if any(c in part for c in "*?[{"):
            break
        fixed.append(part)
    return "/".join(fixed) + "/" if fixed else ""
