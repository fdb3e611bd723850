"""The hybrid judge: the heuristic judge first, Claude only for what it cannot decide.

A check goes to Claude when it has no probes (the heuristic never proves those) or when the
heuristic answers it UNSCORED; every other heuristic verdict (MET or UNMET, with its probe
evidence and searches) is kept as is. Each verdict keeps the id of the backend that produced
it (`heuristic` or `anthropic:<model>`), so the verdict table shows who decided what; the
judge itself is `hybrid:<model>` and is not deterministic.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from evalflow.domain.models import Verdict
from evalflow.judges.anthropic_judge import ClaudeJudge
from evalflow.judges.base import JudgeRequest
from evalflow.judges.cost import UsageRecord
from evalflow.judges.heuristic import HeuristicJudge


class HybridJudge:
    def __init__(self, claude: ClaudeJudge, heuristic: HeuristicJudge | None = None) -> None:
        self.claude = claude
        self.heuristic = heuristic or HeuristicJudge()

    @property
    def judge_id(self) -> str:
        return f"hybrid:{self.claude.model}"

    @property
    def model(self) -> str | None:
        return self.claude.model

    @property
    def deterministic(self) -> bool:
        return False

    def fingerprint_fields(self) -> dict[str, Any]:
        return {
            "judge": self.judge_id,
            "heuristic": self.heuristic.fingerprint_fields(),
            "claude": self.claude.fingerprint_fields(),
        }

    def drain_usage(self) -> list[UsageRecord]:
        return self.claude.drain_usage()

    def score(self, request: JudgeRequest) -> list[Verdict]:
        first = {v.check_id: v for v in self.heuristic.score(request)}
        escalate = tuple(
            (ac, check)
            for ac, check in request.checks
            if not check.probes or first[check.id].status == "UNSCORED"
        )
        if escalate:
            for verdict in self.claude.score(replace(request, checks=escalate)):
                first[verdict.check_id] = verdict
        return [first[check.id] for _, check in request.checks]
