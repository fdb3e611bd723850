"""Judge panels: the k scoring runs of a framework run split across judges of different families.

`--judge panel:anthropic,openai` builds one judge per member name. Scoring run i (1-based) is
judged by member (i - 1) mod n, so with k = 3 and two members the first judges runs 1 and 3
and the second run 2 (2 + 1); the order of the names is the assignment. Each verdict keeps its
member's `judge_id` (and the verdict table its `judge_family`), so the k votes show which
family cast which. The members share the budget of the framework run.

Self-preference (SPEC core rule 4): a panel shares the author's family when any member does
(`judge_models`), and a borderline MET then becomes UNMET. A member of *another* family never
overrules the plain majority: its votes only lift that condition for a check whose MET
majority they decide together with it (`domain.vote.majority_vote`, `independent`).

The panel's `judge_id` (`panel:<member id>+<member id>`), its `model` (the members' models
joined by `+`) and its fingerprint (every member's fields) name every judge, so the
comparability key and the report do too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from evalflow.domain.models import Verdict
from evalflow.judges.base import Judge, JudgeRequest
from evalflow.judges.cost import UsageRecord
from evalflow.judges.family import judge_family, model_family

PANEL_PREFIX = "panel:"
ASSIGNMENT = "run i -> member (i - 1) mod n"


class PanelJudge:
    def __init__(self, members: Sequence[Judge]) -> None:
        self.members = tuple(members)

    @property
    def judge_id(self) -> str:
        return PANEL_PREFIX + "+".join(m.judge_id for m in self.members)

    @property
    def model(self) -> str | None:
        models = judge_models(self)
        return "+".join(models) if models else None

    @property
    def deterministic(self) -> bool:
        return all(m.deterministic for m in self.members)

    def member_for(self, run: int) -> Judge:
        return self.members[(run - 1) % len(self.members)]

    def fingerprint_fields(self) -> dict[str, Any]:
        return {
            "judge": self.judge_id,
            "assignment": ASSIGNMENT,
            "members": {str(i): m.fingerprint_fields() for i, m in enumerate(self.members, 1)},
        }

    def drain_usage(self) -> list[UsageRecord]:
        return [record for m in self.members for record in m.drain_usage()]

    def score(self, request: JudgeRequest) -> list[Verdict]:
        return self.member_for(request.run).score(request)


def judge_models(judge: Judge) -> tuple[str, ...]:
    """Every model that judges: a panel's members' models, else the judge's own (if any)."""
    if isinstance(judge, PanelJudge):
        return tuple(model for m in judge.members for model in judge_models(m))
    return (judge.model,) if judge.model else ()


def independent_votes(judge_ids: pd.Series, author_model: object) -> pd.Series | None:
    """Per verdict (its `judge_id`): cast by a model of another family than the author's;
    None when the author is unknown. A judge without a model (heuristic, labels) is
    independent of any author."""
    if not isinstance(author_model, str) or not author_model.strip():
        return None
    author = model_family(author_model)
    return judge_ids.map(lambda judge_id: judge_family(str(judge_id)) != author)
