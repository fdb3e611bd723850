"""The heuristic judge: the offline, deterministic, free default.

It proves a check only through the probes the frozen baseline gives it:
- I-check: every `impl` probe must match a line of production code under its path globs —
  a source file of a programming language (`evalflow.repo.scopes.is_code_file`: by extension,
  generated output excluded; never Markdown, text, lockfiles or config), or documentation
  only when the probe says `files: docs`. A probe with `within:` counts only matches that lie
  in that syntactic scope (tree-sitter; e.g. the constructed payload object that is emitted,
  the handler a route registers). The evidence is the first qualifying line of each probe.
- A match in code that performs nothing is no proof (SPEC core rule 3). When a probe's only
  matches are dead code (a function nothing references), a stub or a call of a stub/of an
  undefined name, a message in an error path (raise/throw/log text), or an outcome value that
  is only declared (enum member, module constant), the check is UNSCORED with that reason —
  never MET (the rules: `RepoScopes.disqualifier`). An UNSCORED goes to a stronger judge; a
  false MET is the worst error a judge can make. So is a match in a production Python or
  JS/TS file no application entry point of the run imports, or that only an entry point that
  fails to load reaches (`evalflow.domain.reachability`; the rule is off, per language, for a
  run without a determinable root or with dynamic imports): "evidence only in code …".
- A probe with no match at all proves the behaviour missing only portably (SPEC §5: one
  baseline, every implementation alike; `evalflow.domain.portability`): it spells out an
  identifier the AC fixes that occurs in no file of its kind in the run, or the baseline
  records it matching in runs of two other frameworks and its globs reach the files the
  change touched. Then the check is UNMET (flag `absence-proven`), with every search
  recorded; otherwise UNSCORED, "no portable proof of absence" (flag `no-portable-proof`):
  the run may hold the behaviour in another idiom or layout (on a real repository a second
  agent's `backend/app/` against probes written for `backend/src/` made 16 false UNMETs).
  A run with no test file at all proves every T-check absent, with or without probes; files
  named as tests in a language the inventory does not parse (C#, Go…) are neither production
  code nor readable tests, and with them no T-check is proven absent.
- T-check: every `test-assert` probe must match an *assertion line* of a test case that
  asserts, at the required level (unit: any level, the minimum-level floor; e2e: an e2e test;
  both: an e2e test and a second, distinct test). For outcome checks a mock-only test never
  counts, unless the proposition is itself an external call (a spy is the right proof).
  A test-assert probe that matches test lines none of which qualify is no silence: the check is
  UNMET from those lines — except "asserted only in unit tests" in a run of which the level
  policy classifies no test as e2e (the policy's layout, not a gap): UNSCORED.
  When the only asserting tests lie in files the change did not touch, the answer is UNSCORED:
  a pre-existing test was written for other code and may assert a look-alike (on real repos
  this was the one false MET left: an older test of another unit).
Searches run on the diff surface first, then on the rest of the repository, and every one is
recorded; whole-line comments never match (commented-out code performs nothing). Patterns
come from input and run on RE2 (`evalflow.domain.patterns.compile_untrusted`). A check
without probes is answered UNSCORED with the symbols it found: a bare symbol match is not
proof, and the k runs are identical by construction.
`explain_check` exposes the same search to probe authors (`evalflow probe test`): every
line a probe matches and how the judge reads it, with the verdict.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from evalflow.domain.acceptance import with_runs
from evalflow.domain.globs import any_glob
from evalflow.domain.models import BaselineAC, Check, Evidence, Probe, Search, Verdict
from evalflow.domain.patterns import (
    Pattern,
    UntrustedPatternError,
    compile_linear,
    compile_untrusted,
)
from evalflow.domain.portability import (
    FLAG_NO_PORTABLE_PROOF,
    FLAG_PROVEN_ABSENT,
    NO_PORTABLE_PROOF,
    absence_tokens,
    fixed_identifiers,
    pinned,
)
from evalflow.domain.reachability import (
    EMBEDDING_EXTENSIONS,
    NOT_RUN,
    SCRIPT_EXTENSIONS,
    Reach,
    ScriptFile,
    is_entry_config,
    python_reach,
    script_reach,
)
from evalflow.judges.base import JudgeRequest, OfflineJudge
from evalflow.repo.scopes import (
    RepoScopes,
    Scope,
    is_code_file,
    is_doc_file,
    is_generated,
    script_file,
)
from evalflow.repo.snapshot import WORKTREE, RepoSnapshot
from evalflow.repo.test_inventory import (
    TEST_NAMED,
    FailedTest,
    LevelConventions,
    TestCase,
    TestIndex,
    build_inventory,
    fails_at_head,
    is_test_file,
    is_unread_test_file,
)

JUDGE_VERSION = "heuristic-10"
_LEVEL_FAILURE = "asserted only in unit tests; an e2e test is required"
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
    start: int = 0
    end: int = 0


@dataclass(frozen=True)
class _Found:
    """What one probe's search found: qualifying hits, or matches that perform nothing."""

    hits: list[_Hit]
    rejected: list[tuple[_Hit, str]]
    searches: list[Search]
    # The change touched files of the probe's kind, but none under the probe's path globs: a
    # search that finds nothing there cannot show the behaviour is missing (it lives elsewhere).
    out_of_reach: bool = False


class _Index:
    """Per-snapshot lookups shared by every check of one scoring run."""

    def __init__(
        self,
        snapshot: RepoSnapshot,
        diff_paths: tuple[str, ...],
        conventions: LevelConventions,
        failing: frozenset[FailedTest] = frozenset(),
    ):
        self.snapshot = snapshot
        self.diff = set(diff_paths)
        self.conventions = conventions
        self.failing = failing

    @cached_property
    def test_paths(self) -> frozenset[str]:
        return frozenset(p for p in self.snapshot.files if is_test_file(p, self.conventions))

    @cached_property
    def unread_tests(self) -> tuple[str, ...]:
        """Code files named as tests in a language the test inventory does not parse: tests
        that exist but cannot be read, so neither production code nor proof of absence."""
        return tuple(
            p
            for p in sorted(self.snapshot.files)
            if is_unread_test_file(p) and is_code_file(p, self.snapshot.files[p].text)
        )

    def serves(self, request: JudgeRequest, conventions: LevelConventions) -> bool:
        """Whether this index answers `request`: the same files (the same snapshot object,
        or the same commit and root of a committed snapshot), diff and settings."""
        same_files = self.snapshot is request.snapshot or (
            _committed(self.snapshot)
            and self.snapshot.commit == request.snapshot.commit
            and self.snapshot.root == request.snapshot.root
        )
        return (
            same_files
            and self.diff == set(request.diff_paths)
            and self.conventions == conventions
            and self.failing == request.failing
        )

    @cached_property
    def _cases(self) -> list[TestCase]:
        files = [(p, self.snapshot.files[p].text) for p in sorted(self.test_paths)]
        return list(build_inventory(files, self.conventions).cases)

    @cached_property
    def tests(self) -> TestIndex:
        return TestIndex(self._cases)

    @cached_property
    def has_e2e(self) -> bool:
        """Whether the level policy classifies any test of the repository as e2e."""
        return any(case.level == "e2e" for case in self._cases)

    @cached_property
    def scopes(self) -> RepoScopes:
        return RepoScopes({p: f.text for p, f in self.snapshot.files.items()})

    @cached_property
    def reach(self) -> Reach:
        """Which production Python files an application root imports (once per run)."""
        files = self.snapshot.files
        return python_reach(
            {p: f.text for p, f in files.items() if p.endswith(".py") and p not in self.test_paths},
            {p: f.text for p, f in files.items() if is_entry_config(p)},
        )

    @cached_property
    def script_reach(self) -> Reach:
        """Which production JS/TS files an application entry point loads (once per run)."""
        files = self.snapshot.files
        scripts: dict[str, ScriptFile] = {}
        for path in sorted(files):
            if path in self.test_paths or path in self.unread_tests:
                continue
            parsed = self.scopes.parsed(path) if path.endswith(SCRIPT_EXTENSIONS) else None
            if parsed is not None:
                scripts[path] = script_file(parsed)
        embedding = {
            p: f.text
            for p, f in files.items()
            if p.endswith(EMBEDDING_EXTENSIONS)
            and p not in self.test_paths
            and not is_generated(p, f.text)
        }
        skipped = {n.split(": skipped", 1)[0] for n in self.snapshot.notes if ": skipped" in n}
        return script_reach(
            scripts,
            embedding,
            # A committed node_modules/ is no entry declaration of the run's own.
            {p: f.text for p, f in files.items() if is_entry_config(p) and not is_generated(p, "")},
            set(files) | skipped,
            self.snapshot.root,
        )

    def disqualifier(self, hit: _Hit) -> str | None:
        """Why a production-code match performs nothing, or None (`RepoScopes.disqualifier`,
        then: code no application entry point runs, Python or JS/TS)."""
        why = self.scopes.disqualifier(hit.path, hit.line, hit.start, hit.end)
        return why or self.reach.why(hit.path) or self.script_reach.why(hit.path)

    @cached_property
    def _kind_texts(self) -> dict[str, str]:
        """Every file of each kind, lower case, one text per kind (absence searches)."""
        texts: dict[str, list[str]] = {"test": [], "code": [], "docs": []}
        for path in sorted(self.snapshot.files):
            text = self.snapshot.files[path].text
            if path in self.test_paths:
                texts["test"].append(text.lower())
            elif is_doc_file(path):
                texts["docs"].append(text.lower())
            elif is_code_file(path, text) and path not in self.unread_tests:
                texts["code"].append(text.lower())
        return {kind: "\n\0".join(parts) for kind, parts in texts.items()}

    def has_kind(self, kind: str) -> bool:
        """Whether the repository (the run's view) holds any file of `kind`."""
        return bool(self._kind_texts[kind])

    def occurrences(self, token: str, kind: str) -> int:
        """How often `token` (lower case) occurs in the files of `kind`."""
        return self._kind_texts[kind].count(token)

    def _kind_ok(self, path: str, *, tests: bool, files: str) -> bool:
        if tests:
            return path in self.test_paths
        if path in self.test_paths:
            return False
        if files == "docs":
            return is_doc_file(path)
        return path not in self.unread_tests and is_code_file(path, self.snapshot.files[path].text)

    def _candidates(self, globs: tuple[str, ...], *, tests: bool, files: str) -> list[str]:
        return [
            p
            for p in sorted(self.snapshot.files)
            if any_glob(p, globs) and self._kind_ok(p, tests=tests, files=files)
        ]

    def search(
        self, pattern: str, globs: tuple[str, ...], *, tests: bool, probe: Probe | None = None
    ) -> _Found:
        """Matches in the diff surface first; the rest of the repository only if none there
        qualifies. For an impl `probe`, only matches in its file class and `within` scope
        count, and matches that perform nothing are set aside with the reason."""
        regex = compile_untrusted(pattern)
        files = probe.files if probe is not None else "code"
        scope = _scope(probe)
        candidates = self._candidates(globs, tests=tests, files=files)
        kind = "test" if tests else ("documentation" if files == "docs" else "production code")
        scope_label = f"{kind} files matching {', '.join(globs)}"
        if scope is not None:
            scope_label += f", {scope.describe()}"
        searches: list[Search] = []
        rejected: list[tuple[_Hit, str]] = []
        changed = [p for p in candidates if p in self.diff]
        out_of_reach = not changed and any(
            p in self.snapshot.files and self._kind_ok(p, tests=tests, files=files)
            for p in self.diff
        )
        for label, paths in (
            ("diff surface", changed),
            ("repository", [p for p in candidates if p not in self.diff]),
        ):
            hits = [hit for p in paths for hit in self._matches(regex, p)]
            if scope is not None:
                # A scope that cannot be checked (no grammar for the file) is no proof either
                # way: such matches are set aside, the check cannot become MET through them.
                rejected += [
                    (h, f"no grammar to check {scope.describe()} in this file")
                    for h in hits
                    if self.scopes.parsed(h.path) is None
                ]
                hits = [
                    h
                    for h in hits
                    if self.scopes.parsed(h.path) is not None
                    and self.scopes.in_scope(h.path, h.line, h.start, h.end, scope)
                ]
            searches.append(
                Search(pattern=pattern, scope=f"{label}: {scope_label}", hits=len(hits))
            )
            if probe is not None and files == "code":
                reasons = [(h, self.disqualifier(h)) for h in hits]
                rejected += [(h, why) for h, why in reasons if why]
                hits = [h for h, why in reasons if not why]
            if hits:
                return _Found(hits, rejected, searches, out_of_reach)
        return _Found([], rejected, searches, out_of_reach)

    def _matches(self, regex: Any, path: str) -> list[_Hit]:
        whole = _whole_text(regex.pattern)
        if whole is not None and whole.search(self.snapshot.files[path].text) is None:
            return []  # one search in RE2 instead of one Python call per line (issue 33)
        found: list[_Hit] = []
        for n, text in enumerate(self.snapshot.lines(path), start=1):
            match = regex.search(text)
            if match is not None and not _COMMENT_LINE.match(text):
                found.append(_Hit(path, n, text, path in self.diff, match.start(), match.end()))
        return found


# `\A`/`\z` and a flag group switching multi-line off mean something else in a whole text
# than in one line; such a pattern is searched line by line only.
_LINE_ONLY = compile_linear(r"\\[Az]|\(\?[a-zA-Z]*-[a-zA-Z]*m")


@lru_cache(maxsize=4096)
def _whole_text(pattern: str) -> Pattern | None:
    """`pattern` for a whole file: it finds a match there whenever it finds one in a line
    (`^`/`$` match at every line in multi-line mode, a word boundary sees the newline as a
    non-word character), so a file without a match needs no line-by-line search."""
    if _LINE_ONLY.search(pattern) is not None:
        return None
    try:
        return compile_untrusted(f"(?m){pattern}")
    except UntrustedPatternError:
        return None  # over the length limit by the flag: line by line, as compiled


def _committed(snapshot: RepoSnapshot) -> bool:
    """A snapshot of a commit: its files are fixed by the commit (a working tree's are not)."""
    return not snapshot.commit.endswith(WORKTREE)


# The index of the last repository judged in this process: the k scoring runs of one run
# each open their own snapshot of the same commit and build a new judge, so without it the
# repository would be read, parsed and inventoried k times (issue 33).
_LAST_INDEX: list[_Index] = []


def _shared_index(request: JudgeRequest, conventions: LevelConventions) -> _Index:
    if _LAST_INDEX and _LAST_INDEX[0].serves(request, conventions):
        return _LAST_INDEX[0]
    index = _Index(request.snapshot, request.diff_paths, conventions, request.failing)
    _LAST_INDEX[:] = [index]
    return index


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
        if index is None or not index.serves(request, conventions):
            index = _shared_index(request, conventions)
            self._index = index
        return index

    def score(self, request: JudgeRequest) -> list[Verdict]:
        index = self._index_for(request)
        return [
            with_runs(
                self._score_check(ac, check, index, request.run, request.portable),
                check,
                request.acceptance,
            )
            for ac, check in request.checks
        ]

    def _score_check(
        self,
        ac: BaselineAC,
        check: Check,
        index: _Index,
        run: int,
        portable: frozenset[tuple[str, int]] = frozenset(),
    ) -> Verdict:
        if not check.probes:
            return self._without_probes(check, index, run)
        if check.kind == "I":
            return self._impl(ac, check, index, run, portable)
        return self._test(ac, check, index, run, portable)

    def _absence(
        self,
        ac: BaselineAC,
        check: Check,
        n: int,
        index: _Index,
        portable: frozenset[tuple[str, int]],
        reached: bool,
    ) -> tuple[str | None, list[Search]]:
        """Why probe `n` of `check` finding nothing proves the behaviour absent in any
        implementation (`evalflow.domain.portability`), or None; with the searches run.
        A probe recorded portable proves it only where its globs `reached` the run's changed
        files of its kind; an identifier the AC fixes is searched in every file of the kind."""
        probe = check.probes[n - 1]
        tests = probe.kind == "test-assert"
        if tests and index.unread_tests:
            return None, []  # its tests are not all readable: nothing proves one missing
        if (check.id, n) in portable and reached:
            return f"probe {n} matched in runs of other frameworks (checked_against)", []
        kind = "test" if tests else ("docs" if probe.files == "docs" else "code")
        label = {"test": "test", "docs": "documentation", "code": "production code"}[kind]
        if not index.has_kind(kind):
            return f"the run has no {label} file at all", []
        searches: list[Search] = []
        for name in pinned(probe.pattern, fixed_identifiers(ac.text)):
            absent = ""
            for token in absence_tokens(name):
                hits = index.occurrences(token, kind)
                searches.append(
                    Search(
                        pattern=re.escape(token),
                        scope=f"repository: every {label} file, any case ({name!r} is fixed "
                        f"by {ac.id})",
                        hits=hits,
                    )
                )
                absent = absent or (token if hits == 0 else "")
            if absent:
                return f"{name!r}, fixed by {ac.id}, occurs in no {label} file", searches
        return None, searches

    def _verdict(self, check: Check, run: int, status: str, **fields: Any) -> Verdict:
        return Verdict(check_id=check.id, run=run, status=status, judge_id=self.judge_id, **fields)  # type: ignore[arg-type]

    def _undecided(
        self,
        check: Check,
        run: int,
        searches: list[Search],
        proven: list[str],
        silent: list[str],
        unproven: Sequence[str] = (),
    ) -> Verdict | None:
        """UNMET when a probe is proven absent; else UNSCORED when one found nothing that
        proves either way (`silent`, flagged: no portable proof) or only code that is no
        proof (`unproven`); None when every probe found its proof."""
        if proven:
            return self._verdict(
                check,
                run,
                "UNMET",
                searches=tuple(searches),
                rationale="; ".join(proven),
                flags=(FLAG_PROVEN_ABSENT,),
            )
        if silent or unproven:
            return self._verdict(
                check,
                run,
                "UNSCORED",
                searches=tuple(searches),
                rationale="; ".join([*silent, *unproven]) + "; needs an LLM or human judge",
                flags=(FLAG_NO_PORTABLE_PROOF,) if silent else (),
            )
        return None

    def _impl(
        self,
        ac: BaselineAC,
        check: Check,
        index: _Index,
        run: int,
        portable: frozenset[tuple[str, int]],
    ) -> Verdict:
        evidence: list[Evidence] = []
        searches: list[Search] = []
        proven: list[str] = []
        silent: list[str] = []
        unproven: list[str] = []
        for n, probe in enumerate(check.probes, start=1):
            found = index.search(probe.pattern, probe.path_globs, tests=False, probe=probe)
            searches += found.searches
            if found.hits:
                evidence.append(_evidence(found.hits[0]))
            elif found.rejected:
                unproven.append(_no_proof(probe, found.rejected))
            else:
                proof, more = self._absence(ac, check, n, index, portable, not found.out_of_reach)
                searches += more
                if proof:
                    proven.append(f"no production code matches {probe.pattern!r} and {proof}")
                else:
                    silent.append(_silent(probe, "production code", found.out_of_reach))
        if (
            undecided := self._undecided(check, run, searches, proven, silent, unproven)
        ) is not None:
            return undecided
        return self._verdict(
            check,
            run,
            "MET",
            evidence=tuple(evidence),
            searches=tuple(searches),
            rationale=f"every probe matched production code: {_refs(evidence)}",
        )

    def _test(
        self,
        ac: BaselineAC,
        check: Check,
        index: _Index,
        run: int,
        portable: frozenset[tuple[str, int]],
    ) -> Verdict:
        searches: list[Search] = []
        proven: list[str] = []
        silent: list[str] = []
        per_probe: list[list[tuple[TestCase, _Hit]]] = []
        for n, probe in enumerate(check.probes, start=1):
            found = index.search(probe.pattern, probe.path_globs, tests=True)
            searches += found.searches
            candidates, why = self._asserting_tests(check, found.hits, index, probe)
            if candidates:
                per_probe.append(candidates)
                continue
            if found.hits and not (_LEVEL_FAILURE in why and not index.has_e2e):
                # The probe found this run's own test lines: why they do not qualify is read
                # from them, whatever idiom other runs use.
                proven.append(f"{probe.pattern!r}: {why}")
                continue
            proof, more = self._absence(ac, check, n, index, portable, not found.out_of_reach)
            searches += more
            if proof:
                proven.append(f"{probe.pattern!r}: {why}, and {proof}")
            elif found.hits:
                silent.append(
                    f"{NO_PORTABLE_PROOF}: {probe.pattern!r}: {why}, but the benchmark's level "
                    "policy classifies no test of this run as e2e (its test layout, not a gap)"
                )
            elif index.unread_tests:
                silent.append(_unread(index.unread_tests))
            else:
                silent.append(_silent(probe, "test", found.out_of_reach))
        if (undecided := self._undecided(check, run, searches, proven, silent)) is not None:
            return undecided
        chosen = _choose(check, per_probe)
        if not chosen:
            return self._verdict(
                check,
                run,
                "UNMET",
                searches=tuple(searches),
                rationale=(
                    "every probe matches asserting tests, but no single test case asserts all "
                    + (
                        "(level 'both': an e2e case and a second case)"
                        if check.level == "both"
                        else "its patterns"
                    )
                    + ": a check is one proposition, proved within one test"
                ),
            )
        untouched = sorted({hit.path for _, hit in chosen if not hit.in_diff})
        if untouched:
            # A test in a file this change did not touch was written for other code: it may
            # assert a look-alike of the proposition for another unit (seen on real repos).
            return self._verdict(
                check,
                run,
                "UNSCORED",
                searches=tuple(searches),
                rationale=(
                    "only tests outside the diff surface assert it "
                    f"({', '.join(untouched)}): a pre-existing test cannot show this change "
                    "is tested; needs a judge"
                ),
            )
        evidence = [_evidence(hit) for _, hit in chosen]
        return self._verdict(
            check,
            run,
            "MET",
            evidence=tuple(evidence),
            searches=tuple(searches),
            rationale=f"asserted at the required level ({check.level}): {_refs(evidence)}",
        )

    def _asserting_tests(
        self, check: Check, hits: list[_Hit], index: _Index, probe: Probe | None = None
    ) -> tuple[list[tuple[TestCase, _Hit]], str]:
        """Assertion lines at the required level (in search order), or why there are none;
        in a test case whose name matches the probe's `within: {test: ...}` when it has one.

        For level `both` every qualifying line is kept when there is an asserting e2e test
        and a second asserting test (`_choose` picks the two cases).
        """
        if not hits:
            return [], "no test line matches"
        named = probe.within.test if probe is not None and probe.within is not None else None
        qualifying: list[tuple[TestCase, _Hit]] = []
        reasons: set[str] = set()
        for hit in hits:
            case = index.tests.enclosing(hit.path, hit.line)
            if case is None:
                reasons.add("matches outside any test case")
            elif fails_at_head(case, index.failing):
                reasons.add(f"only in tests the gates report failing at head ({case.test_id})")
            elif named is not None and not _whole_name(named, case.name):
                reasons.add(f"only in test cases not named {named!r}")
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
                reasons.add(_LEVEL_FAILURE)
        else:
            distinct = {c.test_id for c, _ in qualifying}
            chosen = qualifying if e2e and len(distinct) > 1 else []
            if qualifying and not chosen:
                reasons.add("level 'both' needs an asserting e2e test and a second asserting test")
        if not chosen:
            return [], "; ".join(sorted(reasons)) or "no qualifying test"
        return chosen, ""

    def _without_probes(self, check: Check, index: _Index, run: int) -> Verdict:
        if check.kind == "T" and not index.has_kind("test") and not index.unread_tests:
            # No test of any language in the run: no test asserts it, in any implementation.
            return self._verdict(
                check,
                run,
                "UNMET",
                rationale="the run has no test file at all: no test can assert it",
                searches=(
                    Search(
                        pattern=TEST_NAMED.pattern,
                        scope="repository: every file, for test files of any language "
                        f"(the level policy's test globs too); {len(index.snapshot.files)} "
                        "files searched",
                        hits=0,
                    ),
                ),
                flags=(FLAG_PROVEN_ABSENT,),
            )
        names = sorted(
            {next(g for g in m.groups() if g) for m in _IDENTIFIER.finditer(check.proposition)}
        )
        searches: list[Search] = []
        found: list[str] = []
        for name in names:
            result = index.search(re.escape(name), ("**",), tests=check.kind == "T")
            searches += result.searches
            found += [f"{name} at {h.path}:{h.line}" for h in result.hits[:1]]
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
    """The hits to cite: every probe of a check must hold in one test case (a check is one
    proposition; patterns asserted by unrelated tests do not prove it together). Level
    `both` needs two such cases, one of them e2e. Empty when there is none."""
    shared = set.intersection(*({c.test_id for c, _ in candidates} for candidates in per_probe))
    order = [c for c, _ in per_probe[0] if c.test_id in shared]
    cases = list({c.test_id: c for c in order}.values())
    if check.level == "both":
        e2e = next((c for c in cases if c.level == "e2e"), None)
        other = next((c for c in cases if e2e is not None and c.test_id != e2e.test_id), None)
        picked = [e2e, other] if e2e is not None and other is not None else []
    else:
        picked = cases[:1]
    return [
        next((c, h) for c, h in candidates if c.test_id == case.test_id)
        for case in picked
        for candidates in per_probe
    ]


def _whole_name(pattern: str, name: str) -> bool:
    return compile_untrusted(f"^(?:{pattern})$").search(name) is not None


def _silent(probe: Probe, kind: str, out_of_reach: bool) -> str:
    """Why a probe that matches nothing proves nothing here (SPEC §5: one baseline, every
    implementation alike): it pins no identifier the AC fixes that the run lacks, and no run
    record shows it finds the behaviour in other idioms."""
    why = (
        f"{NO_PORTABLE_PROOF}: no {kind} line matches {probe.pattern!r}, which pins no "
        "identifier the AC fixes that is absent from the run and is not recorded portable"
    )
    if out_of_reach:
        why += (
            f"; the change touched {kind} files, but none matching "
            f"{', '.join(probe.path_globs)} (the behaviour may live in the files it changed)"
        )
    return why


def _no_proof(probe: Probe, rejected: list[tuple[_Hit, str]]) -> str:
    """Why the matches of an impl probe prove nothing: code that performs nothing (the first
    three, with their reasons), or that no application entry point runs (its files)."""
    not_run: dict[str, set[str]] = {}
    for hit, why in rejected:
        if why.startswith(NOT_RUN):
            not_run.setdefault(why, set()).add(hit.path)
    other = [(hit, why) for hit, why in rejected if not why.startswith(NOT_RUN)]
    reasons = [f"{hit.path}:{hit.line} {why}" for hit, why in other[:3]]
    for why, paths in sorted(not_run.items()):
        files = sorted(paths)
        more = f" and {len(files) - 3} more" if len(files) > 3 else ""
        reasons.append(f"{why}: {', '.join(files[:3])}{more}")
    return f"{probe.pattern!r} matches only code that is no proof: {'; '.join(reasons)}"


def _unread(paths: tuple[str, ...]) -> str:
    more = f" and {len(paths) - 1} more" if len(paths) > 1 else ""
    return (
        f"{NO_PORTABLE_PROOF}: the run has tests in a language evalflow does not read "
        f"({paths[0]}{more}), so no search of its readable tests proves a test missing"
    )


def _scope(probe: Probe | None) -> Scope | None:
    """The syntactic scope of an impl probe (`within: {test: ...}` is a test-assert's)."""
    if probe is None or probe.within is None or probe.within.test is not None:
        return None
    return Scope(**probe.within.model_dump(exclude={"test"}))


def _evidence(hit: _Hit) -> Evidence:
    return Evidence(
        path=hit.path, start_line=hit.line, end_line=hit.line, quote=hit.text.strip()[:_MAX_QUOTE]
    )


def _refs(evidence: list[Evidence]) -> str:
    return ", ".join(e.ref() for e in evidence)


def _patterns(probes: list[Probe]) -> str:
    return ", ".join(repr(p.pattern) for p in probes)


@dataclass(frozen=True)
class ProbeMatch:
    """One line a probe's pattern matches, with what the judge makes of it (`probe test`).

    `counts` is true when the judge uses this line as proof of the probe. For an impl probe:
    `in_scope` (None without `within:`), `disqualifier` (why it performs nothing, else None).
    For a test-assert probe: the enclosing `test` id (None outside any test), its `level`,
    whether this line is one of its assertions, whether it is skipped or mock-only.
    """

    path: str
    line: int
    text: str
    in_diff: bool
    counts: bool
    in_scope: bool | None = None
    disqualifier: str | None = None
    test: str | None = None
    level: str | None = None
    asserts: bool | None = None
    skipped: bool | None = None
    mock_only: bool | None = None


@dataclass(frozen=True)
class ProbeExplanation:
    probe: Probe
    matches: tuple[ProbeMatch, ...]
    searches: tuple[Search, ...]


@dataclass(frozen=True)
class CheckExplanation:
    check: Check
    probes: tuple[ProbeExplanation, ...]
    verdict: Verdict


def explain_check(
    judge: HeuristicJudge, request: JudgeRequest, ac: BaselineAC, check: Check
) -> CheckExplanation:
    """Every line each probe of `check` matches and how the judge reads it, plus the verdict
    it gives — computed by the judge's own search, scope and test-case code, so what an
    author sees while writing a probe is exactly what scoring will do."""
    index = judge._index_for(request)
    verdict = judge._score_check(ac, check, index, request.run, request.portable)
    explained: list[ProbeExplanation] = []
    for probe in check.probes:
        tests = probe.kind == "test-assert"
        found = index.search(
            probe.pattern, probe.path_globs, tests=tests, probe=None if tests else probe
        )
        regex = compile_untrusted(probe.pattern)
        candidates = index._candidates(probe.path_globs, tests=tests, files=probe.files)
        raw = [hit for path in candidates for hit in index._matches(regex, path)]
        if tests:
            chosen, _ = judge._asserting_tests(check, found.hits, index, probe)
            cited = {(h.path, h.line) for _, h in chosen}
            matches = [_test_match(h, index, (h.path, h.line) in cited) for h in raw]
        else:
            cited = {(h.path, h.line) for h in found.hits}
            matches = [_impl_match(h, probe, index, (h.path, h.line) in cited) for h in raw]
        explained.append(ProbeExplanation(probe, tuple(matches), tuple(found.searches)))
    return CheckExplanation(check, tuple(explained), verdict)


def _impl_match(hit: _Hit, probe: Probe, index: _Index, counts: bool) -> ProbeMatch:
    scope = _scope(probe)
    in_scope, why = None, None
    if scope is not None and index.scopes.parsed(hit.path) is None:
        in_scope, why = False, f"no grammar to check {scope.describe()} in this file"
    elif scope is not None:
        in_scope = index.scopes.in_scope(hit.path, hit.line, hit.start, hit.end, scope)
    if probe.files == "code" and in_scope is not False:
        why = index.disqualifier(hit)
    return ProbeMatch(
        hit.path, hit.line, hit.text.strip()[:_MAX_QUOTE], hit.in_diff, counts, in_scope, why
    )


def _test_match(hit: _Hit, index: _Index, counts: bool) -> ProbeMatch:
    case = index.tests.enclosing(hit.path, hit.line)
    text = hit.text.strip()[:_MAX_QUOTE]
    if case is None:
        return ProbeMatch(hit.path, hit.line, text, hit.in_diff, counts)
    return ProbeMatch(
        hit.path,
        hit.line,
        text,
        hit.in_diff,
        counts,
        test=case.test_id,
        level=case.level,
        asserts=case.asserts and hit.line in case.assert_lines,
        skipped=case.skipped,
        mock_only=case.mock_only,
    )


def matching_probes(judge: HeuristicJudge, request: JudgeRequest) -> dict[str, tuple[bool, ...]]:
    """Per check of `request`, per probe: whether its pattern matches lines of its kind in this
    run (an impl probe: production code in its `within` scope, whether or not the code performs;
    a test-assert probe: test lines). What `evalflow baseline lint --runs` records: a probe that
    matches in several frameworks' runs finds the behaviour whatever the idiom."""
    index = judge._index_for(request)
    out: dict[str, tuple[bool, ...]] = {}
    for _, check in request.checks:
        matches: list[bool] = []
        for probe in check.probes:
            tests = probe.kind == "test-assert"
            found = index.search(
                probe.pattern, probe.path_globs, tests=tests, probe=None if tests else probe
            )
            matches.append(bool(found.hits or found.rejected))
        out[check.id] = tuple(matches)
    return out
