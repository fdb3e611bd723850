"""Message Batches for the Claude judge: a multi-round batch loop over the response cache,
with batches that survive a killed run.

Design (multi-round, not "first turn only"): a round replays every check's conversation from
the response cache (cached turns cost nothing and the repository tools re-run locally) until
each conversation either finishes or needs a turn that is not cached yet. Those next turns —
one per unfinished check — go out as one batch (`messages.batches.create`), the judge polls it
(`messages.batches.retrieve`, every `batch_poll_s` seconds) and writes each succeeded result
into the cache under the very key the interactive loop computes (`messages.batches.results`).
The next round continues from there. After the last round the ordinary interactive pass runs:
every batched turn is a cache hit, and anything a batch could not answer (errored, expired or
canceled results, a failed round) is asked interactively then.

Resumable: the moment a batch is created its id and every request's state (custom_id = the
cache key → check, run, turn, status) are written atomically to
`<cache root>/batches/<run key>.run<k>.json` (`BatchState`). A rerun of the scoring run —
after a kill, a crash or a timeout — first collects every batch recorded there that was not
collected yet, instead of creating and paying for it again. (Only a kill in the instant
between the API's answer to `create` and that write can lose a batch id.)

A batch that outlives `batch_max_wait_s` (counted from its creation, across reruns) is
cancelled; its results are still read, so what succeeded is kept and only the rest is asked
interactively. A timeout ends batching for this scoring run: a batch queue that slow would
hold every later round too.

Cost is counted once, at the batch price: a batched call reserves its batch-priced worst case
on the budget; its usage record is the batch-priced one, written when the interactive pass
replays the answer (`ClaudeClient.prepaid`) — not a second, cached, row — and a later run's
replay is priced at the batch rate it was bought at (the cache entry's `meta`). A resumed
batch's answers are charged to the run that collects them (the killed run recorded nothing).

`batch_rounds` bounds the rounds (None = up to `max_turns`; 1 = only the first turn batched,
the rest of each tool loop interactive). A round trades latency (a batch may take minutes to
hours) for half the price. Batch mode needs the response cache (`cache_dir`); without one it
is skipped with a warning.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalflow.judges.base import JudgeRequest
from evalflow.judges.cache import UNCACHEABLE_STOPS
from evalflow.judges.cost import BudgetExceededError

if TYPE_CHECKING:
    from evalflow.judges.anthropic_judge import ClaudeJudge, PendingCallError

log = logging.getLogger(__name__)

RequestStatus = Literal["pending", "succeeded", "errored", "canceled", "expired"]
# Polls after a cancel before the batch is left for a later run to collect.
_CANCEL_POLLS = 20
# Wall-clock time: a batch's age counts across processes (tests replace it).
_now = time.time


class BatchRequestState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    check_id: str
    run: int
    turn: int
    scope: str = ""
    status: RequestStatus = "pending"


class BatchRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    round: int
    created_at: float = Field(description="Unix time the batch was created")
    state: Literal["open", "collected", "lost"] = "open"
    requests: dict[str, BatchRequestState]


class BatchState(BaseModel):
    """Every batch of one scoring run (run key, run index), as persisted."""

    model_config = ConfigDict(extra="forbid")

    run_key: str
    run: int
    batches: list[BatchRecord] = Field(default_factory=list)


class BatchStore:
    """`<cache root>/batches/<run key>.run<k>.json`, read at start and rewritten atomically
    after every change."""

    def __init__(self, root: Path, run_key: str, run: int) -> None:
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", run_key)
        self.path = root / "batches" / f"{safe}.run{run}.json"
        self.state = BatchState(run_key=run_key, run=run)
        try:
            self.state = BatchState.model_validate_json(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            pass
        except (OSError, ValidationError) as exc:
            log.warning("ignoring unreadable batch state %s: %s", self.path, exc)

    def open_batches(self) -> list[BatchRecord]:
        return [b for b in self.state.batches if b.state == "open"]

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".batch-", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(self.state.model_dump_json(indent=1))
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def prefetch_with_batches(judge: ClaudeJudge, request: JudgeRequest) -> int:
    """Answer as many turns as possible through batches; returns the number of rounds sent
    (a collected batch of an earlier, interrupted run is not counted: it was sent then)."""
    from evalflow.judges.anthropic_judge import PendingCallError

    if judge.cache is None:
        log.warning("Message Batches need the response cache (cache_dir); scoring interactively")
        return 0
    store = BatchStore(judge.cache.root, request.run_key, request.run)
    for record in store.open_batches():
        log.info("Message Batches: collecting batch %s of an earlier run", record.id)
        if not _collect(judge, store, record, {}):
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
        if not pending:
            break
        more = _run_round(judge, store, list(pending.values()), number)
        if more is None:
            break
        sent += 1
        if not more:
            break
    return sent


def _run_round(
    judge: ClaudeJudge, store: BatchStore, calls: list[PendingCallError], number: int
) -> bool | None:
    """One batch: reserve, create, persist, collect. None when nothing went out; False when
    batching should stop after it (timeout, failure)."""
    from evalflow.judges.anthropic_judge import failure_reason

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
        return None
    try:
        created = judge.client.messages.batches.create(requests=requests)
    except Exception as exc:
        for reserved in reservations.values():
            judge.budget.release(reserved)
        log.warning(
            "Message Batches round %d not sent (%s); continuing interactively",
            number,
            failure_reason(exc),
        )
        return None
    by_key = {call.key: call for call in calls}
    record = BatchRecord(
        id=created.id,
        round=number,
        created_at=_now(),
        requests={
            key: BatchRequestState(
                check_id=by_key[key].site.check_id,
                run=by_key[key].site.run,
                turn=by_key[key].site.turn,
                scope=by_key[key].site.scope,
            )
            for key in reservations
        },
    )
    store.state.batches.append(record)
    store.save()  # before any wait: a killed run's rerun collects this batch
    ok = _collect(judge, store, record, reservations)
    log.info("Message Batches round %d: %d requests sent", number, len(requests))
    return ok


def _collect(
    judge: ClaudeJudge, store: BatchStore, record: BatchRecord, reservations: dict[str, float]
) -> bool:
    """Wait for `record`'s batch (cancelling it past `batch_max_wait_s`), store what
    succeeded, mark every request's state. False when batching should stop."""
    import anthropic

    from evalflow.judges.anthropic_judge import failure_reason

    batches = judge.client.messages.batches
    cache = judge.cache
    assert cache is not None
    timed_out = False
    try:
        timed_out = _wait_until_ended(judge, record)
        if timed_out is None:
            return False  # still canceling: left open for a later run to collect
        for item in batches.results(record.id):
            state = record.requests.get(item.custom_id)
            reserved = reservations.pop(item.custom_id, 0.0)
            if state is None:
                judge.budget.release(reserved)
                continue
            state.status = item.result.type
            if item.result.type != "succeeded":
                judge.budget.release(reserved)
                log.warning(
                    "batch %s: %s turn %d %s; it will be asked interactively",
                    record.id,
                    state.check_id,
                    state.turn,
                    item.result.type,
                )
                continue
            _store_result(judge, store.state.run_key, record.id, item, state, reserved)
        record.state = "collected"
    except anthropic.NotFoundError:
        # Nothing of it can be collected (nor billed any more): its requests go out again.
        record.state = "lost"
        log.warning("batch %s is unknown to the API; its requests are asked again", record.id)
        return True
    except Exception as exc:
        log.warning(
            "collecting batch %s failed (%s); continuing interactively",
            record.id,
            failure_reason(exc),
        )
        return False
    finally:
        for reserved in reservations.values():
            judge.budget.release(reserved)
        reservations.clear()
        store.save()
    return not timed_out


def _store_result(
    judge: ClaudeJudge,
    run_key: str,
    batch_id: str,
    item: Any,
    state: BatchRequestState,
    reserved: float,
) -> None:
    """One succeeded result: settled on the budget, cached, its usage held for the replay."""
    from evalflow.judges.anthropic_judge import CallSite

    key = item.custom_id
    site = CallSite(run_key, state.check_id, state.run, state.turn, state.scope)
    response = item.result.message.model_dump(mode="json", exclude_none=True)
    usage = judge.transport.usage_from_response(
        site, response, request_id=batch_id, attempt=1, batch=True
    )
    judge.budget.settle(reserved, usage.usd)
    cache = judge.cache
    assert cache is not None
    cache.record_miss()
    meta = judge.transport.cache_meta(site, batch=True)
    if (stop := response.get("stop_reason")) in UNCACHEABLE_STOPS:
        meta["unusable"] = f"stop_reason {stop}"
    cache.put(key, response, meta)
    judge.transport.prepaid(key, usage)


def _wait_until_ended(judge: ClaudeJudge, record: BatchRecord) -> bool | None:
    """Poll until the batch ends: False when it ended in time, True when it was cancelled
    for outliving `batch_max_wait_s` (and has ended since), None when still canceling."""
    batches = judge.client.messages.batches
    deadline = record.created_at + judge.settings.batch_max_wait_s
    while batches.retrieve(record.id).processing_status != "ended":
        if _now() > deadline:
            log.warning(
                "batch %s did not end within %.0f s: cancelled, its succeeded results kept",
                record.id,
                judge.settings.batch_max_wait_s,
            )
            batches.cancel(record.id)
            for _ in range(_CANCEL_POLLS):
                if batches.retrieve(record.id).processing_status == "ended":
                    return True
                time.sleep(judge.settings.batch_poll_s)
            return None
        time.sleep(judge.settings.batch_poll_s)
    return False
