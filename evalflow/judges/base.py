"""The Judge protocol every backend implements, and the request it receives.

A judge sees the frozen checks, the diff surface and a read-only snapshot of the repository
at head; it returns one verdict per check for one of the k runs. Whatever it returns then
passes the shared evidence validator (`evalflow.judges.validator`), so no backend can award
credit the evidence does not support.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from evalflow.domain.acceptance import AcceptanceRun
from evalflow.domain.models import Anchor, BaselineAC, Check, TestLevelPolicy, Verdict
from evalflow.judges.cost import UsageRecord
from evalflow.repo.snapshot import RepoSnapshot
from evalflow.repo.test_inventory import FailedTest


@dataclass(frozen=True)
class JudgeRequest:
    run_key: str
    run: int
    checks: tuple[tuple[BaselineAC, Check], ...]
    snapshot: RepoSnapshot
    diff_paths: tuple[str, ...]
    anchors: tuple[Anchor, ...] = ()
    test_levels: TestLevelPolicy = field(default_factory=TestLevelPolicy)
    author_model: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # The baseline's `run` probes as executed in the sandbox (`acceptance_runs`), if any.
    acceptance: tuple[AcceptanceRun, ...] = ()
    # (check id, probe number) of the probes the baseline's run record shows portable
    # (`evalflow.domain.portability.portable_probes`): their silence may prove absence.
    portable: frozenset[tuple[str, int]] = frozenset()
    # Tests the run's unit/e2e gates report failing at head: never proof of a T-check.
    failing: frozenset[FailedTest] = frozenset()


class Judge(Protocol):
    @property
    def judge_id(self) -> str:
        """Stable name of the backend and model, e.g. `heuristic` or `anthropic:<model>`."""
        ...

    @property
    def deterministic(self) -> bool:
        """True when the k runs are identical by construction (the report says so)."""
        ...

    @property
    def model(self) -> str | None:
        """The model that judges (None for offline judges); checked against the author."""
        ...

    def fingerprint_fields(self) -> dict[str, Any]:
        """Everything about the judge that can change a verdict (model, prompt, parameters)."""
        ...

    def score(self, request: JudgeRequest) -> list[Verdict]:
        """One verdict per check in `request.checks`, for run `request.run`."""
        ...

    def drain_usage(self) -> list[UsageRecord]:
        """Model calls made since the last drain (empty for offline judges)."""
        ...


class OfflineJudge:
    """What every offline judge (heuristic, labels) says about itself: no model, no API
    spend, and k runs that are identical by construction."""

    @property
    def model(self) -> str | None:
        return None

    @property
    def deterministic(self) -> bool:
        return True

    def drain_usage(self) -> list[UsageRecord]:
        return []
