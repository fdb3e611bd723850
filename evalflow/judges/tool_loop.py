"""The check judge's conversation over read-only repository tools, whichever API answers it.

`ToolLoopJudge` is the one loop the Claude judge (`anthropic_judge.ClaudeJudge`) and the
OpenAI-compatible judge (`openai_judge.OpenAIJudge`) run per check: the run context and the
check block, then turns in which the model calls `list_files` / `grep` / `read_file` (answered
from the snapshot inside the untrusted-data delimiters) until it calls `submit_verdict`. Only
evalflow answers UNSCORED, always with the reason: a malformed answer twice in a row, the loop
exhausted (`max_turns`), the per-check spend cap, an answer cut at the output limit after its
one larger retry, an API failure after retries, any other exception inside the check, or
"budget stop". A scoring run of at least `STOP_MIN_CHECKS` checks stops (JudgeUnavailableError)
once most of them ended without a usable answer: asking the rest cannot rescue it. With
`rejudge`, a check whose stored answers end UNSCORED (or on a stored malformed body) is asked
again; every other one replays. A subclass says how its API's conversation is written and read
(its `Dialect`) and how a failure reads (`_failure_reason`); requests go through its
`transport` (`transport.ModelTransport`).
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalflow.domain.models import BaselineAC, Check, Verdict
from evalflow.errors import JudgeUnavailableError
from evalflow.judges.base import JudgeRequest
from evalflow.judges.cache import unanswered
from evalflow.judges.cost import BUDGET_STOP, BudgetExceededError, UsageRecord
from evalflow.judges.family import same_family
from evalflow.judges.prompt import (
    PROMPT_VERSION,
    RETRY_NO_SUBMIT,
    SUBMIT_TOOL,
    SUBMIT_TOOL_NAME,
    check_block,
    run_context,
    untrusted,
)
from evalflow.judges.repo_tools import TOOL_DEFINITIONS, RepoTools, ToolResult
from evalflow.judges.submission import (
    unscored_verdict,
    verdict_from_submission,
    warn_self_preference,
)
from evalflow.judges.transport import CallSite, ModelTransport, PendingCallError

if TYPE_CHECKING:
    from evalflow.judges.transport import ModelSettings

DEFAULT_K = 3
# A scoring run of at least this many checks stops once most of them lack a usable answer.
STOP_MIN_CHECKS = 8
# What the model may call in a check's conversation: the repository tools, then its answer.
CHECK_TOOLS = (*TOOL_DEFINITIONS, SUBMIT_TOOL)
CUT_AT_MAX_TOKENS = "answer cut at max_tokens even after one retry with twice the room"


class RunStoppedError(Exception):
    """Most checks of a scoring run already ended without a usable answer: the rest are not
    asked (`ToolLoopJudge.score` raises JudgeUnavailableError)."""


@dataclass(frozen=True)
class Call:
    """One tool call of an answer; `arguments` None with `parsed` False when the API gave
    arguments that are not a JSON object."""

    id: str
    name: str
    arguments: Any
    parsed: bool = True


@dataclass(frozen=True)
class Answer:
    """One turn's answer, whichever API brought it."""

    calls: list[Call]
    items: list[dict[str, Any]]  # the model's own turn, as it goes back into the conversation
    no_submit: str  # the problem when it ends without any call (a refusal says so)
    refusal: str | None = None


class Dialect(ABC):
    """How one API's conversation is written and read: the loop's only API-specific part."""

    @abstractmethod
    def start(self, context: str, block: str) -> list[dict[str, Any]]:
        """The conversation's first turn: the run context, then the check block."""

    @abstractmethod
    def announce_last(self, conversation: list[dict[str, Any]]) -> None:
        """Tell the model this turn is its last (`prompt.LAST_TURN_NOTICE`)."""

    @abstractmethod
    def params(
        self, conversation: list[dict[str, Any]], *, force: bool, context: str
    ) -> dict[str, Any]:
        """The request of one turn; `force` names `submit_verdict` as the tool choice."""

    @abstractmethod
    def read(self, response: dict[str, Any]) -> Answer:
        """One turn's answer."""

    @abstractmethod
    def tool_turn(self, results: list[tuple[str, ToolResult]]) -> list[dict[str, Any]]:
        """The answers to a turn's tool calls, by call id, as the API takes them back."""

    @abstractmethod
    def user_turn(self, text: str) -> list[dict[str, Any]]:
        """A user turn of text."""


class ToolLoopJudge(ABC):
    """One conversation per check over the repository tools (module docstring)."""

    settings: ModelSettings
    transport: ModelTransport
    dialect: Dialect
    force_final_tool: bool
    # The variable that sets `max_check_usd`, named when the cap ends a check.
    spend_cap_env: str
    thread_prefix: str
    _log: logging.Logger  # the backend's module logger
    _stop: threading.Event  # set by `score` once most checks are unusable

    @property
    @abstractmethod
    def judge_id(self) -> str:
        """Stable name of the backend and model."""

    @abstractmethod
    def _backend_fields(self) -> dict[str, Any]:
        """What else of the backend's settings can change a verdict (sampling, endpoint)."""

    def fingerprint_fields(self) -> dict[str, Any]:
        """Everything about the judge that can change a verdict (`base.Judge`)."""
        s = self.settings
        return {
            "judge": self.judge_id,
            "model": s.model,
            "prompt_version": PROMPT_VERSION,
            "max_tokens": s.max_tokens,
            "max_turns": s.max_turns,
            "final_tool_choice": "forced" if self.force_final_tool else "auto",
            "strict_tools": s.strict_tools,
            "tool_limits": s.limits.model_dump(),
            "max_check_usd": s.max_check_usd,
            **self._backend_fields(),
        }

    @abstractmethod
    def _failure_reason(self, exc: Exception) -> str:
        """An exception inside a check as the one-line reason of its UNSCORED verdict."""

    @abstractmethod
    def _prefetch(self, request: JudgeRequest) -> None:
        """Before the conversations: answers fetched another way (Claude's batches)."""

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def deterministic(self) -> bool:
        return False

    def drain_usage(self) -> list[UsageRecord]:
        """Usage records since the last drain (the pipeline stores them as `judge_usage`)."""
        return self.transport.drain_usage()

    def score(self, request: JudgeRequest) -> list[Verdict]:
        warn_self_preference(self._log, self.settings.model, request.author_model)
        self._prefetch(request)
        self._stop = threading.Event()
        unusable: list[Verdict] = []
        lock = threading.Lock()
        total = len(request.checks)

        def judged(ac: BaselineAC, check: Check) -> Verdict:
            verdict = self.score_check(ac, check, request, prefetch=False)
            with lock:
                if verdict.status == "UNSCORED" and not unanswered(verdict.rationale):
                    unusable.append(verdict)
                # Most checks already lack a usable answer: asking the rest cannot rescue the
                # run. (A run of a handful of checks is left to finish: little to save.)
                if total >= STOP_MIN_CHECKS and len(unusable) > total / 2:
                    self._stop.set()
            return verdict

        pool = ThreadPoolExecutor(
            max_workers=self.settings.concurrency, thread_name_prefix=self.thread_prefix
        )
        try:
            futures = [pool.submit(judged, ac, check) for ac, check in request.checks]
            for future in as_completed(futures):
                if not isinstance(future.exception(), RunStoppedError):
                    future.result()
            if self._stop.is_set():
                first = min(unusable, key=lambda v: v.check_id)
                raise JudgeUnavailableError(
                    f"judge {self.judge_id} gave no usable answer for {len(unusable)} of "
                    f"{len(futures)} checks of scoring run {request.run} (e.g. {first.check_id}: "
                    f"{' '.join(first.rationale.split())[:200]})",
                    where=request.run_key,
                    fix="check the model and its settings; the answers are kept, "
                    "--rejudge unscored asks again",
                )
            return [f.result() for f in futures]
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def score_check(
        self, ac: BaselineAC, check: Check, request: JudgeRequest, *, prefetch: bool = False
    ) -> Verdict:
        """One check's verdict; every failure inside it becomes UNSCORED with the reason."""
        if self._stop.is_set():
            raise RunStoppedError(check.id)
        reask = False
        if self.settings.rejudge and not prefetch:
            # --rejudge unscored: a conversation whose stored answers end UNSCORED is asked
            # again (its unusable answers re-sent); every other one replays as before.
            dry = RepoTools(request.snapshot, request.diff_paths, self.settings.limits)
            try:
                replayed = self._converse(ac, check, request, dry, prefetch=True)
                reask = replayed.status == "UNSCORED"
            except PendingCallError:
                pass  # never fully answered: asked as usual
            except JudgeUnavailableError:
                reask = True  # a stored malformed body (a replay sends nothing)
        tools = RepoTools(request.snapshot, request.diff_paths, self.settings.limits)
        try:
            verdict = self._converse(ac, check, request, tools, prefetch=prefetch, reask=reask)
        except (PendingCallError, JudgeUnavailableError, RunStoppedError):
            raise
        except BudgetExceededError:
            verdict = self._unscored(check, request.run, tools, BUDGET_STOP)
        except Exception as exc:
            verdict = self._unscored(check, request.run, tools, self._failure_reason(exc))
        # What the verdict rests on, by content: a later run can tell which files changed.
        return verdict.model_copy(update={"read_blobs": tuple(sorted(tools.read.items()))})

    def _call(
        self, params: dict[str, Any], site: CallSite, *, prefetch: bool, reask: bool
    ) -> dict[str, Any]:
        """One turn's answer (a seam: tests interrupt a run here)."""
        return self.transport.call(params, site, prefetch=prefetch, reask=reask)

    def _unscored(self, check: Check, run: int, tools: RepoTools, reason: str) -> Verdict:
        return unscored_verdict(
            check_id=check.id,
            run=run,
            judge_id=self.judge_id,
            executed=tools.searches,
            reason=reason,
        )

    def _converse(
        self,
        ac: BaselineAC,
        check: Check,
        request: JudgeRequest,
        tools: RepoTools,
        *,
        prefetch: bool,
        reask: bool = False,
    ) -> Verdict:
        k = int(request.extra.get("k", DEFAULT_K))
        context = run_context(
            request.diff_paths,
            request.anchors,
            request.test_levels,
            same_family(self.settings.model, request.author_model),
        )
        conversation = self.dialect.start(context, check_block(ac, check, request.run, k))
        retried = False
        spent = 0.0  # from the answers' own usage: the same on a replay
        cap = self.settings.max_check_usd
        for turn in range(1, self.settings.max_turns + 1):
            if cap is not None and spent >= cap:
                return self._unscored(
                    check,
                    request.run,
                    tools,
                    f"per-check spend cap: ${spent:.4f} spent in {turn - 1} turns without a "
                    f"verdict (cap ${cap:g}, {self.spend_cap_env})",
                )
            last = turn == self.settings.max_turns
            force = self.force_final_tool and (retried or last)
            if last:
                # Announced on every model, also where tool_choice cannot force the answer.
                self.dialect.announce_last(conversation)
            # No commit in the key: a turn's request already holds what the judge read (tool
            # results), so a change in a file it never read re-asks nothing (`cache`).
            site = CallSite(request.run_key, check.id, request.run, turn)
            params = self.dialect.params(list(conversation), force=force, context=context)
            response = self._call(params, site, prefetch=prefetch, reask=reask)
            spent += self.transport.usage_from_response(
                site, response, request_id=None, attempt=0
            ).usd
            if self.transport.cut(response):
                # Already retried once with twice the room (`ModelTransport.call`): no more.
                self.transport.reject(params, site, CUT_AT_MAX_TOKENS)
                return self._unscored(check, request.run, tools, CUT_AT_MAX_TOKENS)
            answer = self.dialect.read(response)
            conversation += answer.items
            submits = [c for c in answer.calls if c.name == SUBMIT_TOOL_NAME]
            if submits:
                verdict, problem = verdict_from_submission(
                    submits[0].arguments,
                    check_id=check.id,
                    run=request.run,
                    judge_id=self.judge_id,
                    executed=tools.searches,
                )
                if verdict is not None:
                    return verdict
                self.transport.reject(params, site, problem)
            elif answer.calls:
                conversation += self.dialect.tool_turn(
                    [(c.id, _run(c, tools)) for c in answer.calls]
                )
                continue
            else:
                problem = answer.no_submit
                self.transport.reject(params, site, problem)
            if retried:
                return self._unscored(
                    check, request.run, tools, f"malformed answer twice: {problem}"
                )
            retried = True
            conversation += self._retry_turn(answer.calls, problem, tools)
        return self._unscored(
            check,
            request.run,
            tools,
            f"tool loop exhausted: no verdict after {self.settings.max_turns} turns",
        )

    def _retry_turn(
        self, calls: list[Call], problem: str, tools: RepoTools
    ) -> list[dict[str, Any]]:
        """Every call of the rejected turn answered (the APIs require it), then the retry."""
        if not calls:
            return self.dialect.user_turn(RETRY_NO_SUBMIT)
        results = []
        for call in calls:
            if call.name == SUBMIT_TOOL_NAME:
                result = ToolResult(
                    f"error: invalid submit_verdict input: {problem}. Fix it and call "
                    "submit_verdict again.",
                    is_error=True,
                )
            else:
                result = _run(call, tools)
            results.append((call.id, result))
        return self.dialect.tool_turn(results)


def _run(call: Call, tools: RepoTools) -> ToolResult:
    """A repository tool's answer: its text is repository data (`prompt.untrusted`); an
    error is evalflow's own message and stays outside the delimiters."""
    if not call.parsed:
        return ToolResult(
            f"error: the arguments of {call.name} are not a JSON object", is_error=True
        )
    result = tools.call(call.name, call.arguments)
    return result if result.is_error else ToolResult(untrusted(result.text))
