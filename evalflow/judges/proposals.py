"""Offline probe proposals against the runs: `evalflow baseline draft --repo R1 --repo R2 …`.

Each candidate of `evalflow.domain.probe_proposals` (an identifier the AC fixes, named in the
check) is tried on every run with the heuristic judge's own code (its verdict, as `evalflow
probe test` shows it): it decides the check in a run when the check alone with that probe is
MET there. A candidate is proposed only when it decides the check in at least two
runs (in the one run when only one is given): a pattern that fits one run's naming is not
portable. Proposed probes carry `proposed: true`, which `baseline freeze` refuses until a
person accepts them; `accept=True` writes them accepted. No network, no model: the same
PRD and runs give the same draft.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from evalflow.domain.baseline_draft import DraftAC, DraftCheck
from evalflow.domain.models import BaselineAC, Check, Probe, TestLevelPolicy
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


def _decides(
    judge: HeuristicJudge, snapshot: RepoSnapshot, ac: DraftAC, check: DraftCheck, probe: Probe
) -> bool:
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
    # The judge's own verdict (what `probe test` shows, without listing every line it read).
    return judge.score(request)[0].status == "MET"


def propose(
    acs: list[DraftAC], runs: list[RepoSnapshot], accept: bool = False
) -> tuple[list[DraftAC], ProposalCount]:
    """`acs` with the proposed probes written into their checks, and the counts."""
    judges = [HeuristicJudge() for _ in runs]
    need = min(2, len(runs))
    out: list[DraftAC] = []
    total = ProposalCount()
    for ac in acs:
        checks = []
        for drafted in ac.checks:
            tried = candidates(drafted, ac.text)
            kept = [
                probe
                for probe in tried
                if sum(
                    _decides(judge, snap, ac, drafted, probe)
                    for judge, snap in zip(judges, runs, strict=True)
                )
                >= need
            ]
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
        out.append(replace(ac, checks=tuple(checks)))
    return out, total
