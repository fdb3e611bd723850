"""Offline probe proposals against the runs: `evalflow baseline draft --repo R1 --repo R2 …`.

Each candidate of `evalflow.domain.probe_proposals` (an identifier the AC fixes, named in the
check) is tried on every run with the heuristic judge's own code (its verdict, as `evalflow
probe test` shows it): it decides the check in a run when the check alone with that probe is
MET there. A candidate is proposed only when it decides the check in at least two
runs (in the one run when only one is given): a pattern that fits one run's naming is not
portable. A T-check's test probe for a name its I-check's impl probe was proposed for (so
portable) is proposed too when it decides the T-check in as many runs, MET or UNMET with a
proof of absence every implementation shares (no test asserts the AC's identifier, or the run
has no test file at all): the runs' missing tests are a decided verdict, not an unknown.
Proposed probes carry `proposed: true`, which `baseline freeze` refuses until a person
accepts them; `accept=True` writes them accepted. No network, no model: the same
PRD and runs give the same draft.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from evalflow.domain.baseline_draft import DraftAC, DraftCheck
from evalflow.domain.models import BaselineAC, Check, Probe, TestLevelPolicy
from evalflow.domain.portability import FLAG_PROVEN_ABSENT
from evalflow.domain.probe_proposals import candidates
from evalflow.judges.base import JudgeRequest
from evalflow.judges.heuristic import HeuristicJudge
from evalflow.repo.snapshot import RepoSnapshot


@dataclass(frozen=True)
class ProposalCount:
    candidates: int = 0
    proposed: int = 0
    checks_with_probes: int = 0
    checks: int = 0


def _verdict(
    judge: HeuristicJudge, snapshot: RepoSnapshot, ac: DraftAC, check: DraftCheck, probe: Probe
) -> str:
    """The judge's own verdict on `check` with `probe` alone (what `probe test` shows,
    without listing every line it read): MET, PROVEN (UNMET with a proof of absence every
    implementation shares) or another status."""
    one = Check(
        id=check.id,
        kind=check.kind,  # type: ignore[arg-type]
        proposition=check.proposition,
        level=check.level,  # type: ignore[arg-type]
        outcome=check.outcome,
        wiring=check.wiring,
        probes=(probe,),
    )
    baseline_ac = BaselineAC(id=ac.id, text=ac.text, checks=(one,))
    request = JudgeRequest(
        run_key="draft-proposals",
        run=1,
        checks=((baseline_ac, one),),
        snapshot=snapshot,
        diff_paths=tuple(sorted(snapshot.files)),  # the run's files at head
        test_levels=TestLevelPolicy(),
    )
    verdict = judge.score(request)[0]
    return "PROVEN" if FLAG_PROVEN_ABSENT in verdict.flags else verdict.status


def runs_needed(runs: int) -> int:
    """In how many of `runs` a proposed probe must decide its check: two (a pattern that
    fits one run's naming is not portable), or the one run when only one is given."""
    return min(2, runs)


def propose(
    acs: list[DraftAC], runs: list[RepoSnapshot], accept: bool = False
) -> tuple[list[DraftAC], ProposalCount]:
    """`acs` with the proposed probes written into their checks, and the counts."""
    judges = [HeuristicJudge() for _ in runs]
    need = runs_needed(len(runs))
    out: list[DraftAC] = []
    total = ProposalCount()
    for ac in acs:
        checks = []
        # Patterns an I-check of this AC kept: each has matched production code in `need`
        # runs, so the T-check's test probe for the same name is portable too and may decide
        # its check by a proven absence (no test asserts it, or the run has no test at all).
        shown: set[str] = set()
        for drafted in sorted(ac.checks, key=lambda c: c.kind != "I"):
            tried = candidates(drafted, ac.text)
            decided = {"MET", "PROVEN"} if drafted.kind == "T" else {"MET"}
            kept = []
            for probe in tried:
                verdicts = [
                    _verdict(judge, snap, ac, drafted, probe)
                    for judge, snap in zip(judges, runs, strict=True)
                ]
                met = verdicts.count("MET") >= need
                paired = probe.pattern in shown and sum(v in decided for v in verdicts) >= need
                if met or paired:
                    kept.append(probe)
            if drafted.kind == "I":
                shown.update(p.pattern for p in kept)
            if accept:
                kept = [p.model_copy(update={"proposed": False}) for p in kept]
            note = (
                f"probes: {len(tried)} candidate(s) from identifiers the PRD fixes, "
                f"{len(kept)} deciding the check in at least {need} of {len(runs)} run(s)"
            )
            checks.append(replace(drafted, probes=tuple(kept), note=note) if tried else drafted)
            total = ProposalCount(
                total.candidates + len(tried),
                total.proposed + len(kept),
                total.checks_with_probes + bool(kept),
                total.checks + 1,
            )
        order = {c.id: n for n, c in enumerate(ac.checks)}
        out.append(replace(ac, checks=tuple(sorted(checks, key=lambda c: order[c.id]))))
    return out, total
