"""Test distribution D (SPEC §1 Side metrics): every feature test in exactly one tier.

Inputs: the PRD (priorities), the frozen baseline (T-checks), the classified inventory
(feature vs pre-existing; each parametrised row is its own case) and the evidence lines of
the T-checks whose majority is MET.

Mapping: every test of the inventory is tiered against the frozen baseline. A test case
that asserts (and is not skipped) *proves* a MET T-check when
- one of that check's evidence lines, from the judge that scored it, falls inside the
  test's `start_line`-`end_line` range (the innermost test holding the line, with all rows
  of a parametrised function), or
- one of the check's `test-assert` probes matches one of the test's own assertion lines
  (`TestCase.assert_lines`) in a file under the probe's globs.
So the tier does not depend on which line a judge happened to cite: a unit test asserting
the proposition is found by the probes even when the judge cited an e2e line. A test that
neither the judge nor a probe ties to a MET check maps to no AC, so extra tests never
inflate AC coverage.

Main path (deterministic): a T-check is on its AC's main success path unless its
proposition, with `backticked` names removed, matches the negative/error lexicon
`lexicon.NEGATIVE_PATH` (reject, invalid, error, fail, 401/403/404/409/422, unchanged,
at most, duplicate, idempotent, …). An AC whose T-checks all match is a negative-path AC and
has no main path. A benchmark may pin single checks with `main_path_overrides`.

Tiers, first that applies:
- necessary    — proves a main-path T-check of a P0 AC;
- secondary    — proves any other MET T-check (P1/P2 ACs, negative/error paths, clauses);
- nice_to_have — proves no MET T-check (robustness extras, scored by R).
Pre-existing tests (not added by the change) are listed with tier `pre_existing` and never
counted. Healthy: every P0 AC with a main path has at least one Necessary feature test.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict

from evalflow.domain.globs import any_glob
from evalflow.domain.models import PRD, Baseline, BaselineAC, Check
from evalflow.domain.patterns import UntrustedPatternError, compile_untrusted
from evalflow.domain.side_metrics.common import EvidenceLine, TestCaseLike, feature_split
from evalflow.domain.side_metrics.lexicon import is_negative_path
from evalflow.errors import InputError

Tier = Literal["necessary", "secondary", "nice_to_have", "pre_existing"]
TIERS: tuple[Tier, ...] = ("necessary", "secondary", "nice_to_have")
TIER_LABELS: dict[str, str] = {
    "necessary": "Necessary",
    "secondary": "Secondary",
    "nice_to_have": "Nice-to-have",
    "pre_existing": "pre-existing",
}
TEST_TIER_COLUMNS = [
    "test_id",
    "path",
    "line",
    "name",
    "level",
    "tier",
    "ac_id",
    "check_ids",
    "priority",
    "reason",
]
DISTRIBUTION_COLUMNS = [
    "tier",
    "count",
    "pct",
    "total_feature_tests",
    "pre_existing_tests",
    "healthy",
    "failing_p0_acs",
]


class TestTierRow(BaseModel):
    """One test case's tier and why."""

    __test__ = False
    model_config = ConfigDict(frozen=True)

    test_id: str
    path: str
    line: int
    name: str
    level: str
    tier: Tier
    ac_id: str | None
    check_ids: tuple[str, ...]
    priority: str | None
    reason: str


class DistributionResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    rows: tuple[TestTierRow, ...]
    counts: dict[str, int]
    total: int
    pre_existing: tuple[str, ...]
    main_path_checks: dict[str, tuple[str, ...]]
    healthy: bool | None  # None: a P0 main path rests on UNSCORED T-checks
    failing_p0_acs: tuple[str, ...]
    reading: str
    undetermined_p0_acs: tuple[str, ...] = ()
    unscored_t_checks: tuple[str, ...] = ()  # T-checks whose majority is UNSCORED

    def pct(self, tier: str) -> float | None:
        if self.total == 0:
            return None
        return float(Fraction(self.counts[tier] * 100, self.total))

    def test_tier_frame(self) -> pd.DataFrame:
        """The `test_tier` table: one row per test case (feature and pre-existing)."""
        data = [{**row.model_dump(), "check_ids": list(row.check_ids)} for row in self.rows]
        return pd.DataFrame(data, columns=TEST_TIER_COLUMNS)

    def distribution_frame(self) -> pd.DataFrame:
        """The `distribution` table: tier → count → % (counts sum to the feature tests)."""
        return pd.DataFrame(
            [
                {
                    "tier": tier,
                    "count": self.counts[tier],
                    "pct": self.pct(tier),
                    "total_feature_tests": self.total,
                    "pre_existing_tests": len(self.pre_existing),
                    "healthy": self.healthy,
                    "failing_p0_acs": list(self.failing_p0_acs),
                }
                for tier in TIERS
            ],
            columns=DISTRIBUTION_COLUMNS,
        ).astype({"pct": "Float64", "healthy": "boolean"})


def main_path_checks(
    baseline: Baseline, overrides: Mapping[str, bool] | None = None
) -> dict[str, tuple[str, ...]]:
    """Per AC, its main-path T-check ids (empty for a negative-path AC)."""
    pinned = overrides or {}
    return {
        ac.id: tuple(
            c.id
            for c in ac.checks
            if c.kind == "T" and pinned.get(c.id, not is_negative_path(c.proposition))
        )
        for ac in baseline.acs
    }


def _proved_checks(
    cases: list[TestCaseLike],
    evidence: Iterable[EvidenceLine],
    t_checks: Mapping[str, Check],
    met: set[str],
    test_files: Mapping[str, str],
) -> dict[str, set[str]]:
    """test_id → ids of MET T-checks the test proves (evidence inside it, or a probe on one
    of its assertion lines)."""
    asserting = [c for c in cases if c.asserts and not c.skipped]
    by_path: dict[str, list[TestCaseLike]] = {}
    for case in asserting:
        by_path.setdefault(case.path, []).append(case)
    proved: dict[str, set[str]] = {}
    for check_id in sorted(met & set(t_checks)):
        check = t_checks[check_id]
        patterns = []
        for probe in check.probes:
            if probe.kind != "test-assert":
                continue
            try:
                patterns.append((compile_untrusted(probe.pattern), probe.path_globs))
            except UntrustedPatternError as exc:
                raise InputError(
                    str(exc), where=f"baseline check {check_id}", fix="rewrite the probe for RE2"
                ) from exc
        if not patterns:
            continue
        for case in asserting:
            if not _at_level(case, check):
                continue
            lines = test_files.get(case.path, "").split("\n")
            # Every pattern of the check, each on one of this case's own assertion lines: a
            # case matching one of several probes proves part of the proposition, not it.
            if all(
                any_glob(case.path, globs)
                and any(
                    0 < n <= len(lines) and pattern.search(lines[n - 1]) for n in case.assert_lines
                )
                for pattern, globs in patterns
            ):
                proved.setdefault(case.test_id, set()).add(check_id)
    for line in evidence:
        if line.check_id not in t_checks or line.check_id not in met:
            continue
        candidates = [
            c for c in by_path.get(line.path, []) if _at_level(c, t_checks[line.check_id])
        ]
        for number in range(line.start_line, line.end_line + 1):
            holding = [c for c in candidates if c.start_line <= number <= c.end_line]
            if not holding:
                continue
            span = min(c.end_line - c.start_line for c in holding)
            for case in holding:
                if case.end_line - case.start_line == span:
                    proved.setdefault(case.test_id, set()).add(line.check_id)
    return proved


def _at_level(case: TestCaseLike, check: Check) -> bool:
    """Whether the case is at a level that can prove the check: the minimum level is a floor
    (SPEC §1), so any level proves a unit check; an e2e check needs an e2e case; a `both`
    check is proven by a case of either level together with one of the other."""
    return check.level != "e2e" or case.level == "e2e"


def compute_distribution(
    prd: PRD,
    baseline: Baseline,
    cases: Iterable[TestCaseLike],
    evidence: Iterable[EvidenceLine],
    *,
    met_checks: Iterable[str] | None = None,
    unscored_checks: Iterable[str] = (),
    test_files: Mapping[str, str] | None = None,
    main_path_overrides: Mapping[str, bool] | None = None,
) -> DistributionResult:
    """D over the classified inventory (see the module docstring for every rule).
    `met_checks` are the ids whose majority is MET (default: the checks the evidence cites),
    `unscored_checks` those whose majority is UNSCORED (a P0 main path resting on one is
    undetermined, not failing); `test_files` (path → text at head) let the probes read
    assertion lines."""
    all_cases = list(cases)
    feature, existing = feature_split(all_cases)
    checks: dict[str, tuple[int, BaselineAC, Check]] = {
        check.id: (order, ac, check)
        for order, (ac, check) in enumerate(baseline.checks())
        if check.kind == "T"
    }
    priority_of = {ac_id: story.priority for ac_id, story in prd.story_of().items()}
    main = main_path_checks(baseline, main_path_overrides)
    main_ids = {c for ids in main.values() for c in ids}
    cited = list(evidence)
    met = set(met_checks) if met_checks is not None else {e.check_id for e in cited}
    t_checks = {check_id: entry[2] for check_id, entry in checks.items()}
    proved = _proved_checks(all_cases, cited, t_checks, met, test_files or {})

    rows: list[TestTierRow] = []
    necessary_acs: set[str] = set()
    for case in sorted(all_cases, key=lambda c: (c.path, c.def_line, c.test_id)):
        ids = sorted(proved.get(case.test_id, ()), key=lambda i: checks[i][0])
        tier, ac_id, priority, reason = _tier(ids, checks, priority_of, main_ids)
        if case.is_feature is False:
            reason = f"pre-existing test (not counted); {reason}"
            tier = "pre_existing"
        elif tier == "necessary" and ac_id is not None:
            necessary_acs.update(checks[i][1].id for i in ids if i in main_ids)
        rows.append(
            TestTierRow(
                test_id=case.test_id,
                path=case.path,
                line=case.def_line,
                name=case.name,
                level=case.level,
                tier=tier,
                ac_id=ac_id,
                check_ids=tuple(ids),
                priority=priority,
                reason=reason,
            )
        )
    counts = {tier: sum(1 for r in rows if r.tier == tier) for tier in TIERS}
    failing = tuple(
        ac.id
        for ac in baseline.acs
        if priority_of.get(ac.id) == "P0" and main.get(ac.id) and ac.id not in necessary_acs
    )
    unscored = set(unscored_checks)
    undetermined = tuple(ac for ac in failing if any(c in unscored for c in main[ac]))
    decided = tuple(ac for ac in failing if ac not in undetermined)
    result = DistributionResult(
        rows=tuple(rows),
        counts=counts,
        total=len(feature),
        pre_existing=tuple(sorted(c.test_id for c in existing)),
        main_path_checks=main,
        healthy=False if decided else (None if undetermined else True),
        failing_p0_acs=decided,
        undetermined_p0_acs=undetermined,
        unscored_t_checks=tuple(sorted(unscored & set(checks))),
        reading="",
    )
    return result.model_copy(update={"reading": _reading(result)})


def _tier(
    ids: list[str],
    checks: Mapping[str, tuple[int, BaselineAC, Check]],
    priority_of: Mapping[str, str],
    main_ids: set[str],
) -> tuple[Tier, str | None, str | None, str]:
    if not ids:
        return (
            "nice_to_have",
            None,
            None,
            "no MET T-check's evidence or probe ties an assertion of this test to it",
        )
    necessary = [i for i in ids if i in main_ids and priority_of.get(checks[i][1].id) == "P0"]
    chosen = necessary[0] if necessary else ids[0]
    ac = checks[chosen][1]
    priority = priority_of.get(ac.id)
    proves = ", ".join(ids)
    if necessary:
        return "necessary", ac.id, priority, f"proves {proves}: main path of P0 AC {ac.id}"
    if priority == "P0":
        why = f"negative/error path of P0 AC {ac.id}"
    else:
        why = f"{priority} AC {ac.id}" if priority else f"AC {ac.id} (priority unknown)"
    return "secondary", ac.id, priority, f"proves {proves}: {why}"


def pct_text(count: int, total: int) -> str:
    if total == 0:
        return "n/a"
    tenths = Fraction(count * 1000, total)
    rounded = math.floor(tenths + Fraction(1, 2))
    return f"{rounded // 10}.{rounded % 10}%"


def _reading(result: DistributionResult) -> str:
    if result.total == 0:
        return "the change adds no feature tests; D is empty and no P0 main path is proven"
    c, n = result.counts, result.total
    if result.healthy:
        health = "healthy: every P0 main path has a Necessary test"
    elif result.healthy is None:
        health = (
            "health undetermined: the main-path T-checks of "
            f"{', '.join(result.undetermined_p0_acs)} are UNSCORED"
        )
    else:
        health = f"not healthy: no Necessary test for {', '.join(result.failing_p0_acs)}"
    return (
        f"{c['necessary']} of {n} feature tests ({pct_text(c['necessary'], n)}) prove a P0 "
        f"main path, {c['secondary']} ({pct_text(c['secondary'], n)}) other AC clauses, "
        f"{c['nice_to_have']} ({pct_text(c['nice_to_have'], n)}) map to no AC; {health}"
    )
