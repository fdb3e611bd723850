"""Message Batches for the Claude judge: a multi-round batch loop over the response cache.

Design (multi-round, not "first turn only"): a round replays every check's conversation from
the response cache (cached turns cost nothing and the repository tools re-run locally) until
each conversation either finishes or needs a turn that is not cached yet. Those next turns —
one per unfinished check — go out as one batch (`messages.batches.create`), the judge polls it
(`messages.batches.retrieve`, every `batch_poll_s` seconds, at most `batch_max_wait_s`) and
writes each succeeded result into the cache under the very key the interactive loop computes
(`messages.batches.results`). The next round continues from there. After the last round the
ordinary interactive pass runs: every batched turn is a cache hit, and anything a batch could
not answer (errored/expired/canceled results, a failed round) is asked interactively then.

`batch_rounds` bounds the rounds (None = up to `max_turns`; 1 = only the first turn batched,
the rest of each tool loop interactive). Batched calls are priced with the table's batch
discount and reserved against the same budget as interactive calls. A round trades latency
(a batch may take minutes to hours) for half the price; the cache makes it resumable.
Batch mode needs the response cache (`cache_dir`); without one it is skipped with a warning.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from evalflow.judges.base import JudgeRequest
from evalflow.judges.cache import UNCACHEABLE_STOPS
from evalflow.judges.cost import BudgetExceededError

if TYPE_CHECKING:
    from evalflow.judges.anthropic_judge import ClaudeJudge, PendingCallError

log = logging.getLogger(__name__)


def prefetch_with_batches(judge: ClaudeJudge, request: JudgeRequest) -> int:
    """Answer as many turns as possible through batches; returns the number of rounds sent."""
    from evalflow.judges.anthropic_judge import PendingCallError

    if judge.cache is None:
        log.warning("Message Batches need the response cache (cache_dir); scoring interactively")
        return 0
    settings = judge.settings
    rounds = settings.batch_rounds or settings.max_turns
    sent = 0
    for number in range(1, rounds + 1):
        pending: dict[str, PendingCallError] = {}
        for ac, check in request.checks:
            try:
                judge.score_check(ac, check, request, prefetch=True)
            except PendingCallError as call:
                pending.setdefault(call.key, call)
        if not pending or not _run_round(judge, list(pending.values()), number):
            break
        sent += 1
    return sent


def _run_round(judge: ClaudeJudge, calls: list[PendingCallError], number: int) -> bool:
    """One batch: reserve, create, poll, store results. False when nothing more can go out."""
    from evalflow.judges.anthropic_judge import failure_reason

    cache = judge.cache
    if cache is None:
        return False
    reservations: dict[str, float] = {}
    requests: list[dict[str, Any]] = []
    for call in calls:
        estimate = judge.transport.worst_case_usd(call.params, batch=True)
        try:
            reservations[call.key] = judge.budget.reserve(estimate)
        except BudgetExceededError:
            break
        requests.append({"custom_id": call.key, "params": call.params})
    if not requests:
        return False
    by_key = {call.key: call for call in calls}
    batches = judge.client.messages.batches
    try:
        created = batches.create(requests=requests)
        _wait_until_ended(judge, created.id)
        for item in batches.results(created.id):
            call = by_key.get(item.custom_id)
            reserved = reservations.pop(item.custom_id, 0.0)
            if call is None:
                judge.budget.release(reserved)
                continue
            if item.result.type != "succeeded":
                judge.budget.release(reserved)
                log.warning(
                    "batch %s: %s turn %d %s; it will be asked interactively",
                    created.id,
                    call.site.check_id,
                    call.site.turn,
                    item.result.type,
                )
                continue
            response = item.result.message.model_dump(mode="json", exclude_none=True)
            record = judge.usage_from_response(
                call.site, response, request_id=created.id, attempt=1, batch=True
            )
            judge.budget.settle(reserved, record.usd)
            if response.get("stop_reason") not in UNCACHEABLE_STOPS:
                cache.put(call.key, response)
            judge.record_usage(record)
    except Exception as exc:
        log.warning(
            "Message Batches round %d failed (%s); continuing interactively",
            number,
            failure_reason(exc),
        )
        return False
    finally:
        for reserved in reservations.values():
            judge.budget.release(reserved)
    log.info("Message Batches round %d: %d requests answered", number, len(requests))
    return True


def _wait_until_ended(judge: ClaudeJudge, batch_id: str) -> None:
    batches = judge.client.messages.batches
    deadline = time.monotonic() + judge.settings.batch_max_wait_s
    while batches.retrieve(batch_id).processing_status != "ended":
        if time.monotonic() > deadline:
            batches.cancel(batch_id)
            raise TimeoutError(
                f"batch {batch_id} did not end within {judge.settings.batch_max_wait_s:.0f} s"
            )
        time.sleep(judge.settings.batch_poll_s)
