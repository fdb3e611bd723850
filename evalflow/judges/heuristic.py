"""The heuristic judge: the offline, deterministic, free default.

It proves a check only through the probes the frozen baseline gives it:
- I-check: every `impl` probe must match a line of production code (test files excluded)
  under its path globs. The evidence is the first matching line of each probe.
- T-check: every `test-assert` probe must match an *assertion line* of a test case that
  asserts, at the required level (unit: any level, the minimum-level floor; e2e: an e2e test;
  both: an e2e test and a second, distinct test). For outcome checks a mock-only test never
  counts, unless the proposition is itself an external call (a spy is the right proof).
Searches run on the diff surface first, then on the rest of the repository, and every one is
recorded; whole-line comments never match (commented-out code performs nothing). A check
without probes is answered UNSCORED with the symbols it found: a bare symbol match is not
proof (SPEC core rule 3), and a false MET is the worst error a judge can make. The k runs
are identical by construction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from evalflow.domain.globs import any_glob
from evalflow.domain.models import BaselineAC, Check, Evidence, Probe, Search, Verdict
from evalflow.judges.base import JudgeRequest, OfflineJudge
from evalflow.repo.snapshot import RepoSnapshot
from evalflow.repo.test_inventory import (
    LevelConventions,
    TestCase,
    TestIndex,
    build_inventory,
    is_test_file,
)

JUDGE_VERSION = "heuristic-2"
# A whole-line comment is never evidence: commented-out code does not perform anything.
_COMMENT_LINE = re.compile(r"\s*(?:#|//|/\*|\*|<!--)")
_MAX_QUOTE = 200
_IDENTIFIER = re.compile(
    r"`([^`]+)`|\b([a-z]+(?:_[a-z0-9]+)+)\b|\b([a-z]+[A-Z][A-Za-z0-9]*)\b|\b([A-Z][a-z]+[A-Z]\w*)\b"
)


@dataclass(frozen=True)
class _Hit:
    path: str
    line: int
    text: str
    in_diff: bool


class _Index:
    """Per-snapshot lookups shared by every check of one scoring run."""

    def __init__(
        self, snapshot: RepoSnapshot, diff_paths: tuple[str, ...], conventions: LevelConventions
    ):
        self.snapshot = snapshot
        self.diff = set(diff_paths)
        self.conventions = conventions

    @cached_property
    def test_paths(self) -> frozenset[str]:
        return frozenset(p for p in self.snapshot.files if is_test_file(p, self.conventions))

    @cached_property
    def tests(self) -> TestIndex:
        files = [(p, self.snapshot.files[p].text) for p in sorted(self.test_paths)]
        return TestIndex(build_inventory(files, self.conventions).cases)

    def search(
        self, pattern: str, globs: tuple[str, ...], *, tests: bool
    ) -> tuple[list[_Hit], list[Search]]:
        """Matches in the diff surface first; the rest of the repository only if none there."""
        regex = re.compile(pattern)
        candidates = [
            p
            for p in sorted(self.snapshot.files)
            if any_glob(p, globs) and ((p in self.test_paths) == tests)
        ]
        scope_label = f"{'test' if tests else 'production'} files matching {', '.join(globs)}"
        searches: list[Search] = []
        for label, paths in (
            ("diff surface", [p for p in candidates if p in self.diff]),
            ("repository", [p for p in candidates if p not in self.diff]),
        ):
            hits = [
                _Hit(p, n, text, p in self.diff)
                for p in paths
                for n, text in enumerate(self.snapshot.lines(p), start=1)
                if regex.search(text) and not _COMMENT_LINE.match(text)
            ]
            searches.append(
                Search(pattern=pattern, scope=f"{label}: {scope_label}", hits=len(hits))
            )
            if hits:
                return hits, searches
        return [], searches


class HeuristicJudge(OfflineJudge):
    """Probe-driven, offline judge (see module docstring)."""

    def __init__(self, conventions: LevelConventions | None = None) -> None:
        self.conventions = conventions or LevelConventions()
        self._index: _Index | None = None

    @property
    def judge_id(self) -> str:
        return "heuristic"

    def fingerprint_fields(self) -> dict[str, Any]:
        return {
            "judge": self.judge_id,
            "version": JUDGE_VERSION,
            "conventions": self.conventions.model_dump(mode="json"),
        }

    def _index_for(self, request: JudgeRequest) -> _Index:
        overrides = request.test_levels.model_dump(exclude_none=True)
        conventions = (
            self.conventions.model_copy(update=overrides) if overrides else self.conventions
        )
        index = self._index
        if (
            index is None
            or index.snapshot is not request.snapshot
            or index.diff != set(request.diff_paths)
            or index.conventions != conventions
        ):
            index = _Index(request.snapshot, request.diff_paths, conventions)
            self._index = index
        return index

    def score(self, request: JudgeRequest) -> list[Verdict]:
        index = self._index_for(request)
        return [self._score_check(ac, check, index, request.run) for ac, check in request.checks]

    def _score_check(self, ac: BaselineAC, check: Check, index: _Index, run: int) -> Verdict:
        if not check.probes:
            return self._without_probes(check, index, run)
        if check.kind == "I":
            return self._impl(check, index, run)
        return self._test(check, index, run)

    def _verdict(self, check: Check, run: int, status: str, **fields: Any) -> Verdict:
        return Verdict(check_id=check.id, run=run, status=status, judge_id=self.judge_id, **fields)  # type: ignore[arg-type]

    def _impl(self, check: Check, index: _Index, run: int) -> Verdict:
        evidence: list[Evidence] = []
        searches: list[Search] = []
        missing: list[Probe] = []
        for probe in check.probes:
            hits, done = index.search(probe.pattern, probe.path_globs, tests=False)
            searches += done
            if hits:
                evidence.append(_evidence(hits[0]))
            else:
                missing.append(probe)
        if missing:
            return self._verdict(
                check,
                run,
                "UNMET",
                searches=tuple(searches),
                rationale=f"no production code matches {_patterns(missing)}",
            )
        return self._verdict(
            check,
            run,
            "MET",
            evidence=tuple(evidence),
            searches=tuple(searches),
            rationale=f"every probe matched production code: {_refs(evidence)}",
        )

    def _test(self, check: Check, index: _Index, run: int) -> Verdict:
        searches: list[Search] = []
        failures: list[str] = []
        per_probe: list[list[tuple[TestCase, _Hit]]] = []
        for probe in check.probes:
            hits, done = index.search(probe.pattern, probe.path_globs, tests=True)
            searches += done
            candidates, why = self._asserting_tests(check, hits, index)
            if candidates:
                per_probe.append(candidates)
            else:
                failures.append(f"{probe.pattern!r}: {why}")
        if failures:
            return self._verdict(
                check,
                run,
                "UNMET",
                searches=tuple(searches),
                rationale="; ".join(failures),
            )
        evidence = [_evidence(hit) for _, hit in _choose(check, per_probe)]
        return self._verdict(
            check,
            run,
            "MET",
            evidence=tuple(evidence),
            searches=tuple(searches),
            rationale=f"asserted at the required level ({check.level}): {_refs(evidence)}",
        )

    def _asserting_tests(
        self, check: Check, hits: list[_Hit], index: _Index
    ) -> tuple[list[tuple[TestCase, _Hit]], str]:
        """Assertion lines at the required level (in search order), or why there are none.

        For level `both` the result is exactly two hits: an e2e test and a second test.
        """
        if not hits:
            return [], "no test line matches"
        qualifying: list[tuple[TestCase, _Hit]] = []
        reasons: set[str] = set()
        for hit in hits:
            case = index.tests.enclosing(hit.path, hit.line)
            if case is None:
                reasons.add("matches outside any test case")
            elif case.skipped:
                reasons.add("only in skipped tests")
            elif not case.asserts or hit.line not in case.assert_lines:
                reasons.add("the test runs it without asserting it")
            elif check.outcome and case.mock_only and not check.external_call:
                reasons.add("only mock-only assertions (a call is not an outcome)")
            else:
                qualifying.append((case, hit))
        e2e = [(c, h) for c, h in qualifying if c.level == "e2e"]
        if check.level == "unit":
            chosen = qualifying
        elif check.level == "e2e":
            chosen = e2e
            if qualifying and not e2e:
                reasons.add("asserted only in unit tests; an e2e test is required")
        else:
            others = [(c, h) for c, h in qualifying if e2e and c.test_id != e2e[0][0].test_id]
            chosen = [e2e[0], others[0]] if e2e and others else []
            if qualifying and not chosen:
                reasons.add("level 'both' needs an asserting e2e test and a second asserting test")
        if not chosen:
            return [], "; ".join(sorted(reasons)) or "no qualifying test"
        return chosen, ""

    def _without_probes(self, check: Check, index: _Index, run: int) -> Verdict:
        names = sorted(
            {next(g for g in m.groups() if g) for m in _IDENTIFIER.finditer(check.proposition)}
        )
        searches: list[Search] = []
        found: list[str] = []
        for name in names:
            hits, done = index.search(re.escape(name), ("**",), tests=check.kind == "T")
            searches += done
            found += [f"{name} at {h.path}:{h.line}" for h in hits[:1]]
        detail = f"; symbols found: {', '.join(found)}" if found else ""
        return self._verdict(
            check,
            run,
            "UNSCORED",
            searches=tuple(searches),
            rationale=(
                "no probe pins this behaviour and a symbol match is not proof; "
                f"needs an LLM or human judge{detail}"
            ),
        )


def _choose(
    check: Check, per_probe: list[list[tuple[TestCase, _Hit]]]
) -> list[tuple[TestCase, _Hit]]:
    """The hits to cite: one test case that satisfies every probe when there is one (the
    check is then proved by a single test), else the first qualifying hit of each probe."""
    if check.level == "both":
        return [pair for candidates in per_probe for pair in candidates]
    shared = set.intersection(*({c.test_id for c, _ in candidates} for candidates in per_probe))
    if shared:
        test_id = next(c.test_id for c, _ in per_probe[0] if c.test_id in shared)
        return [
            next((c, h) for c, h in candidates if c.test_id == test_id) for candidates in per_probe
        ]
    return [candidates[0] for candidates in per_probe]


def _evidence(hit: _Hit) -> Evidence:
    return Evidence(
        path=hit.path, start_line=hit.line, end_line=hit.line, quote=hit.text.strip()[:_MAX_QUOTE]
    )


def _refs(evidence: list[Evidence]) -> str:
    return ", ".join(e.ref() for e in evidence)


def _patterns(probes: list[Probe]) -> str:
    return ", ".join(repr(p.pattern) for p in probes)
