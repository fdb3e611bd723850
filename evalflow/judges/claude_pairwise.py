"""Pairwise judged matches for ranking: Claude compares two runs' implementations of one AC.

Input: `PairwiseItem`s — one acceptance criterion (unit) and, for each of two framework runs
(players), the text of its implementation: the MET evidence of that run's checks for the AC
(`evidence_text` formats quotes and file ranges from verdicts). Every item is judged twice,
in both orders (A shown first, then B shown first); the two are distinct requests with
distinct cache entries. The judge sees neutral positions ("Implementation 1/2"), never the
player labels, and answers through the `submit_preference` tool with the preferred position
("first", "second" or "tie").

`judge_pairs` returns the `PairwiseVerdicts` per pair of players (labels ordered so a < b,
as in the match table) for `resolve_position_bias`, which flags and counts order
disagreements and turns them into draws; `judged_matches` does both. A unit whose judgement
failed in either order (API failure, malformed answer twice, refusal, budget stop) is left
out of the matches and reported in `PairwiseRun.failures` — a failed call never decides a
match. The calls run in a bounded thread pool; transport, cache, prices, budget and usage
records are the check judge's (`ClaudeClient`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from evalflow.domain.models import Verdict
from evalflow.domain.ranking.matches import (
    JudgedMatches,
    PairwiseVerdicts,
    Preference,
    resolve_position_bias,
)
from evalflow.errors import InputError
from evalflow.judges.anthropic_judge import (
    CallSite,
    ClaudeClient,
    ClaudeSettings,
    ToolAnswerError,
    ask_tool,
    failure_reason,
)
from evalflow.judges.cost import BUDGET_STOP, Budget, BudgetExceededError, PriceTable, UsageRecord

log = logging.getLogger(__name__)

PAIRWISE_PROMPT_VERSION = "pairwise-1"
PREFERENCE_TOOL_NAME = "submit_preference"
MAX_TEXT_CHARS = 30_000
_EPHEMERAL = {"type": "ephemeral"}
_PREFERENCES: tuple[Preference, ...] = ("first", "second", "tie")

SYSTEM_PROMPT = f"""\
You compare two implementations of one acceptance criterion (AC) from a product requirements
document. Each implementation is given as the evidence found for it: file ranges, quoted
code and tests. Decide which implementation better satisfies the AC as written: correctness
and completeness of the behaviour it requires, and tests that prove it. Ignore the order in
which they are shown, their length, and anything the AC does not ask for; more code is not
better code. Answer "tie" when neither is better. Call {PREFERENCE_TOOL_NAME} with the
preferred position ("first", "second" or "tie") and a one-sentence reason.
"""

PREFERENCE_TOOL: dict[str, Any] = {
    "name": PREFERENCE_TOOL_NAME,
    "description": "Say which implementation better satisfies the acceptance criterion.",
    "input_schema": {
        "type": "object",
        "properties": {
            "preference": {"type": "string", "enum": list(_PREFERENCES)},
            "reason": {"type": "string"},
        },
        "required": ["preference", "reason"],
        "additionalProperties": False,
    },
}


class PairwiseItem(BaseModel):
    """One unit (AC) as implemented by two players; `a_text` / `b_text` are the evidence."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    unit_id: str = Field(min_length=1)
    a_label: str = Field(min_length=1)
    b_label: str = Field(min_length=1)
    a_text: str
    b_text: str
    ac_text: str = Field(default="", description="the AC's wording, shown to the judge")

    def ordered(self) -> PairwiseItem:
        """The same item with the labels in match-table order (a < b)."""
        if self.a_label <= self.b_label:
            return self
        return self.model_copy(
            update={
                "a_label": self.b_label,
                "b_label": self.a_label,
                "a_text": self.b_text,
                "b_text": self.a_text,
            }
        )


class PairwiseJudge(Protocol):
    """Anything that states which shown position better implements the item's AC."""

    name: str
    concurrency: int

    def prefer(self, item: PairwiseItem, *, a_first: bool) -> Preference: ...


@dataclass(frozen=True)
class PairwiseFailure:
    unit_id: str
    a: str
    b: str
    reason: str


@dataclass(frozen=True)
class PairwiseRun:
    verdicts: list[PairwiseVerdicts]
    failures: list[PairwiseFailure]


def evidence_text(verdicts: Iterable[Verdict], propositions: dict[str, str] | None = None) -> str:
    """One run's implementation of an AC as the judge reads it: the MET verdicts' evidence
    (file ranges and quotes), check by check; `propositions` adds what each check asserts."""
    blocks: list[str] = []
    for verdict in sorted(verdicts, key=lambda v: (v.check_id, v.run)):
        if verdict.status != "MET":
            continue
        head = f"### {verdict.check_id}"
        if propositions and verdict.check_id in propositions:
            head += f": {propositions[verdict.check_id]}"
        lines = [head]
        for ev in verdict.evidence:
            lines.append(f"{ev.path}:{ev.start_line}-{ev.end_line}")
            if ev.quote:
                lines.append(ev.quote)
        blocks.append("\n".join(lines))
    return "\n\n".join(dict.fromkeys(blocks)) or "(no MET evidence)"


def _clip(text: str) -> str:
    if len(text) <= MAX_TEXT_CHARS:
        return text
    return text[:MAX_TEXT_CHARS] + f"\n[truncated: {len(text) - MAX_TEXT_CHARS} more characters]"


def comparison_text(item: PairwiseItem, *, a_first: bool) -> str:
    """The user turn for one order."""
    first, second = (item.a_text, item.b_text) if a_first else (item.b_text, item.a_text)
    ac = f"## Acceptance criterion {item.unit_id}\n{item.ac_text or '(see the evidence)'}"
    return f"{ac}\n\n## Implementation 1\n{_clip(first)}\n\n## Implementation 2\n{_clip(second)}"


def _preference(payload: Any) -> Preference:
    value = payload.get("preference") if isinstance(payload, dict) else None
    if value not in _PREFERENCES:
        raise ValueError(f"preference {value!r} is not one of {', '.join(_PREFERENCES)}")
    return value


class ClaudePairwiseJudge:
    """`PairwiseJudge` backed by one Claude model (module docstring)."""

    def __init__(
        self,
        settings: ClaudeSettings | None = None,
        *,
        transport: ClaudeClient | None = None,
        cache_dir: Path | None = None,
        base_url: str | None = None,
        http_client: Any | None = None,
        budget: Budget | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        self.transport = transport or ClaudeClient(
            settings or ClaudeSettings.from_env(),
            prompt_version=PAIRWISE_PROMPT_VERSION,
            cache_dir=cache_dir,
            base_url=base_url,
            http_client=http_client,
            budget=budget,
            prices=prices,
        )
        self.name = f"anthropic:{self.transport.settings.model}"
        self.concurrency = self.transport.settings.concurrency
        self._system = [{"type": "text", "text": SYSTEM_PROMPT, "cache_control": _EPHEMERAL}]

    def prefer(self, item: PairwiseItem, *, a_first: bool) -> Preference:
        order = "a-first" if a_first else "b-first"
        site = CallSite(f"pairwise:{item.a_label}~{item.b_label}", f"{item.unit_id}:{order}", 1, 1)
        answer, _ = ask_tool(
            self.transport,
            system=self._system,
            user=[{"type": "text", "text": comparison_text(item, a_first=a_first)}],
            tool=PREFERENCE_TOOL,
            parse=_preference,
            site=site,
        )
        return answer

    def drain_usage(self) -> list[UsageRecord]:
        return self.transport.drain_usage()


def _reason(exc: Exception) -> str:
    if isinstance(exc, BudgetExceededError):
        return BUDGET_STOP
    if isinstance(exc, ToolAnswerError):
        return str(exc)
    return failure_reason(exc)


def judge_pairs(items: Sequence[PairwiseItem], judge: PairwiseJudge) -> PairwiseRun:
    """Both orders of every item, grouped into `PairwiseVerdicts` per pair of players."""
    ordered = [item.ordered() for item in items]
    seen: set[tuple[str, str, str]] = set()
    for item in ordered:
        if item.a_label == item.b_label:
            raise InputError(
                f"unit {item.unit_id}: a player cannot be compared with itself",
                where=item.a_label,
            )
        key = (item.a_label, item.b_label, item.unit_id)
        if key in seen:
            raise InputError(
                f"unit {item.unit_id} is given twice for {item.a_label} vs {item.b_label}",
                fix="pass one PairwiseItem per unit and pair of players",
            )
        seen.add(key)
    jobs = [(item, a_first) for item in ordered for a_first in (True, False)]

    def run(job: tuple[PairwiseItem, bool]) -> Preference | Exception:
        item, a_first = job
        try:
            return judge.prefer(item, a_first=a_first)
        except Exception as exc:
            return exc

    workers = max(1, min(int(getattr(judge, "concurrency", 1)), len(jobs) or 1))
    with ThreadPoolExecutor(workers, thread_name_prefix="claude-pairwise") as pool:
        answers = list(pool.map(run, jobs))
    by_pair: dict[tuple[str, str], dict[str, list[Any]]] = {}
    failures: list[PairwiseFailure] = []
    for index, item in enumerate(ordered):
        first, second = answers[2 * index], answers[2 * index + 1]
        problems = [a for a in (first, second) if isinstance(a, Exception)]
        if problems:
            reason = "; ".join(dict.fromkeys(_reason(p) for p in problems))
            failures.append(PairwiseFailure(item.unit_id, item.a_label, item.b_label, reason))
            continue
        pair = by_pair.setdefault(
            (item.a_label, item.b_label), {"unit_ids": [], "a_first": [], "b_first": []}
        )
        pair["unit_ids"].append(item.unit_id)
        pair["a_first"].append(first)
        pair["b_first"].append(second)
    verdicts = [PairwiseVerdicts(a=a, b=b, **lists) for (a, b), lists in sorted(by_pair.items())]
    for failure in failures:
        log.warning(
            "pairwise %s vs %s on %s not judged: %s",
            failure.a,
            failure.b,
            failure.unit_id,
            failure.reason,
        )
    return PairwiseRun(verdicts=verdicts, failures=failures)


def judged_matches(items: Sequence[PairwiseItem], judge: PairwiseJudge) -> JudgedMatches:
    """Judge every item in both orders; position-bias disagreements flagged and counted."""
    return resolve_position_bias(judge_pairs(items, judge).verdicts)
