"""The one way an LLM judge's request reaches its API, whichever SDK carries it.

`ModelTransport` owns what the Claude transport (`anthropic_judge.ClaudeClient`) and the
OpenAI one (`openai_judge.OpenAITransport`) both do with a request: the content-addressed
response cache (a stored answer is replayed, an unusable one included, and recorded as
`cached` at its original price), the one retry of an answer cut at the output limit with twice
the room, and the paid attempts themselves. Each attempt passes the endpoint's circuit breaker
and rate limiter (and the breaker again after the limiter's wait) and reserves its worst case
on the shared `Budget` before it is sent; a failure that ends the attempts reaches the breaker
before anything else is done with it, and until the endpoint has answered once the body is
read inside the breaker's one-call start, so a malformed 200 (fatal) costs one request, not
one per thread; a
throttled one (429/529) pauses every sender and is retried for `max_throttle_s`, another
transient failure `max_retries` times; an attempt that failed after the request left, or that
was answered with a 200 whose body is not an answer, may have been billed and is recorded at
its worst case, `estimated`. A malformed body is kept in the cache like any answer (a rerun
or a step retry replays it to the same stop instead of paying it again; `--rejudge unscored`
asks again). A subclass says how its SDK sends, parses and classifies (`_create`, `_body`,
`_failure`) and how its answers read (`usage_from_response`, `cut`, `_unusable`).
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalflow.errors import JudgeUnavailableError
from evalflow.judges.cache import ResponseCache, cache_key
from evalflow.judges.cost import Budget, PriceTable, UsageRecord, input_token_bound, load_prices

if TYPE_CHECKING:
    from evalflow.judges.anthropic_judge import CircuitBreaker, ClaudeSettings, RateLimiter
    from evalflow.judges.openai_judge import OpenAISettings

    # What a transport and the check loop read: every LLM backend's settings have it.
    ModelSettings = ClaudeSettings | OpenAISettings

log = logging.getLogger(__name__)

# The cache entry standing for a 200 whose body was not an answer (`ModelTransport.call`).
MALFORMED = "evalflow_malformed_response"


@dataclass(frozen=True)
class CallSite:
    run_key: str
    check_id: str
    run: int
    turn: int
    scope: str = ""


class PendingCallError(Exception):
    """Raised in batch-prefetch mode when a turn is not cached yet (see `batch`)."""

    def __init__(self, key: str, params: dict[str, Any], site: CallSite) -> None:
        super().__init__(key)
        self.key = key
        self.params = params
        self.site = site


def estimated_usage(site: CallSite, model: str, attempt: int, usd: float) -> UsageRecord:
    """A paid attempt whose answer was lost (every LLM backend's): its worst case, marked
    `estimated`."""
    return UsageRecord(
        run_key=site.run_key,
        check_id=site.check_id,
        run=site.run,
        turn=site.turn,
        model=model,
        attempt=attempt,
        usd=usd,
        estimated=True,
    )


@dataclass(frozen=True)
class Failure:
    """How `_send` treats one failed attempt (each SDK's exceptions, classified)."""

    lost: bool = False  # the request left: the API may have answered and billed it
    throttle: bool = False  # 429/529: back off and retry for `max_throttle_s`
    retry: bool = False  # transient: retried `max_retries` times
    retry_after_s: float | None = None
    malformed: str | None = None  # a 200 whose body is not an answer: what it said


class ModelTransport(ABC):
    """Cache, retries, budget and usage records around one model's API (module docstring)."""

    # The request's output-limit field: doubled once for an answer cut at it.
    max_field: str
    breaker: CircuitBreaker  # the endpoint's, shared by every judge and process of a run
    limiter: RateLimiter

    def __init__(
        self,
        settings: ModelSettings,
        *,
        prompt_version: str,
        cache_dir: Path | None,
        cache_name: str,
        budget: Budget | None,
        prices: PriceTable | None,
    ) -> None:
        self.settings = settings
        self.prompt_version = prompt_version
        self.prices = prices or load_prices()
        # An unpriced model is refused here: neither a cost nor a --max-cost could be honoured.
        self.prices.price(settings.model)
        self.cache = ResponseCache(cache_dir / cache_name) if cache_dir is not None else None
        self.budget = budget if budget is not None else Budget(settings.max_cost_usd)
        self._usage: list[UsageRecord] = []
        self._usage_lock = threading.Lock()
        # Batch answers paid in this process, recorded when the conversation replays them
        # (once, at the batch price) instead of as a second, cached, row (`prepaid`).
        self._prepaid: dict[str, UsageRecord] = {}

    @property
    def model(self) -> str:
        return self.settings.model

    @abstractmethod
    def _create(self, params: dict[str, Any]) -> Any:
        """Send `params` through the SDK: its raw response (an exception `_failure` reads)."""

    @abstractmethod
    def _body(self, raw: Any) -> dict[str, Any]:
        """The raw response as a dict, or an exception `_failure` calls malformed."""

    @abstractmethod
    def _failure(self, exc: BaseException) -> Failure:
        """How a failed attempt is treated (lost, throttled, retried, malformed)."""

    @abstractmethod
    def _tokens(self, response: dict[str, Any]) -> dict[str, int]:
        """The answer's own usage: input, output, cache-read and cache-write tokens."""

    @abstractmethod
    def cut(self, response: dict[str, Any]) -> bool:
        """Whether the answer stopped at the output limit."""

    @abstractmethod
    def _unusable(self, response: dict[str, Any]) -> str | None:
        """Why an answer is of no use whatever the judge makes of it (kept, marked so)."""

    def usage_from_response(
        self,
        site: CallSite,
        response: dict[str, Any],
        *,
        request_id: str | None,
        attempt: int,
        batch: bool = False,
    ) -> UsageRecord:
        """What the answer cost by its own usage (at the batch rate when a batch answered)."""
        tokens = self._tokens(response)
        return UsageRecord(
            run_key=site.run_key,
            check_id=site.check_id,
            run=site.run,
            turn=site.turn,
            model=self.settings.model,
            request_id=request_id,
            attempt=attempt,
            usd=self.prices.usd(self.settings.model, batch=batch, **tokens),
            batch=batch,
            **tokens,
        )

    def drain_usage(self) -> list[UsageRecord]:
        """Usage since the last drain, with batch answers paid but never replayed."""
        with self._usage_lock:
            records, self._usage = [*self._usage, *self._prepaid.values()], []
            self._prepaid = {}
        return records

    def prepaid(self, key: str, record: UsageRecord) -> None:
        """A batch answer paid for now and stored under `key`: its usage is recorded when
        `call` replays it (a paid row, not a cached one)."""
        with self._usage_lock:
            self._prepaid[key] = record

    def record_usage(self, record: UsageRecord) -> None:
        with self._usage_lock:
            self._usage.append(record)

    def cache_meta(self, site: CallSite, *, batch: bool) -> dict[str, Any]:
        """What a cache entry records beside the response (`cache` module docstring)."""
        return {
            "model": self.settings.model,
            "prompt_version": self.prompt_version,
            "run_key": site.run_key,
            "run": site.run,
            "batch": batch,
        }

    def key_for(self, params: dict[str, Any], site: CallSite) -> str:
        """The cache key: the request (whose tool results are what the judge read), the run
        index and the scope (the run key, and a batch's own scope)."""
        scope = f"{site.run_key}@{site.scope}" if site.scope else site.run_key
        return cache_key(self.settings.model, self.prompt_version, params, site.run, scope)

    def reject(self, params: dict[str, Any], site: CallSite, problem: str) -> None:
        """Mark the cached answer to `params` unusable (it failed validation): it stays in the
        cache, so an unchanged re-run replays it and reaches the same outcome without a
        request; only `rejudge` asks again (`cache` module docstring)."""
        if self.cache is not None:
            self.cache.mark_unusable(self.key_for(params, site), problem)

    def worst_case_usd(self, params: dict[str, Any], *, batch: bool) -> float:
        """What `params` can cost at most (the budget reserves it before sending)."""
        return self.prices.worst_case_usd(
            self.settings.model,
            input_tokens=input_token_bound(params),
            max_tokens=int(params.get(self.max_field, self.settings.max_tokens)),
            batch=batch,
        )

    def call(
        self,
        params: dict[str, Any],
        site: CallSite,
        *,
        prefetch: bool = False,
        reask: bool = False,
    ) -> dict[str, Any]:
        """The response body for `params` (a dict, as the API returned it).

        A stored answer is replayed, whatever it was (an unusable one included), unless
        `reask` and the answer is marked unusable; a stored malformed body stops the run as
        the body itself did. `prefetch` only replays: a call that would be sent raises
        PendingCallError (and records no usage)."""
        key = self.key_for(params, site)
        found = self.cache.get_with_meta(key) if self.cache is not None else None
        if found is not None and not (reask and found[1].get("unusable")):
            hit, meta = found
            if hit.get("type") == MALFORMED:
                raise JudgeUnavailableError(
                    f"judge unavailable: the API answered with a malformed body: {hit.get('body')}",
                    fix="rerun with --rejudge unscored to ask again once the API is fixed",
                )
            # A cut answer whose larger retry never came (a batch answer, or the process died).
            unenlarged = self.cut(hit) and not meta.get("enlarged")
            if prefetch or not unenlarged:
                if not prefetch:
                    self._replayed(key, site, hit, batch=bool(meta.get("batch")))
                return hit
            self._replayed(key, site, hit, batch=bool(meta.get("batch")))
            return self._store(key, site, self._larger(params, site, key), enlarged=True)
        if prefetch:
            raise PendingCallError(key, params, site)
        response = self._send(params, site, key)
        # Stored before anything else is sent: a step retry after a failure of the larger
        # retry (or of any later turn) replays this answer instead of paying it again.
        self._store(key, site, response, enlarged=False)
        if not self.cut(response):
            return response
        return self._store(key, site, self._larger(params, site, key), enlarged=True)

    def _larger(self, params: dict[str, Any], site: CallSite, key: str) -> dict[str, Any]:
        """The one retry after an answer cut at the output limit, with twice the room:
        thinking can use up the room before the answer. Never more than one: a model that
        fills any room would otherwise be paid again and again."""
        larger = {**params, self.max_field: 2 * int(params[self.max_field])}
        log.info(
            "%s turn %d was cut at %s; retrying once with %d",
            site.check_id,
            site.turn,
            self.max_field,
            larger[self.max_field],
        )
        return self._send(larger, site, key)

    def _store(
        self, key: str, site: CallSite, response: dict[str, Any], *, enlarged: bool
    ) -> dict[str, Any]:
        if self.cache is not None:
            self.cache.record_miss()
            meta = self.cache_meta(site, batch=False)
            if enlarged:
                meta["enlarged"] = True
            if (unusable := self._unusable(response)) is not None:
                meta["unusable"] = unusable
            self.cache.put(key, response, meta)
        return response

    def _replayed(self, key: str, site: CallSite, hit: dict[str, Any], *, batch: bool) -> None:
        with self._usage_lock:
            paid_now = self._prepaid.pop(key, None)
        if paid_now is not None:
            self.record_usage(paid_now)
            return
        # The original call's tokens and price (at the batch rate when a batch answered it):
        # what this answer cost to obtain, although this run paid nothing for it (`cached`).
        original = self.usage_from_response(site, hit, request_id=None, attempt=0, batch=batch)
        self.record_usage(original.model_copy(update={"cached": True}))
        if self.cache is not None:
            self.cache.record_hit(original.usd)

    def _send(self, params: dict[str, Any], site: CallSite, key: str) -> dict[str, Any]:
        """One answered request, retried here (the SDK does not retry): each attempt passes
        the breaker, the rate limiter and the budget (module docstring)."""
        estimate = self.worst_case_usd(params, batch=False)
        failures = 0
        attempt = 0
        throttled_since: float | None = None
        while True:
            attempt += 1
            self.breaker.check()
            self.limiter.acquire()
            # Again: the limiter may have held this call back while another thread tripped.
            self.breaker.check()
            reserved = self.budget.reserve(estimate)
            try:
                # The body is read inside the first call too: a malformed 200 is no answer, so
                # the calls waiting for the first one see its trip instead of sending.
                with self.breaker.first_call():
                    raw = self._create(params)
                    response = self._body(raw)
            except BaseException as exc:
                failure = self._failure(exc)
                # The limiter's clock: how long this request has been throttled is measured
                # on the clock its back-off pauses run on.
                now = self.limiter.clock()
                throttled_since = throttled_since if throttled_since is not None else now
                throttle = failure.throttle and now - throttled_since < self.settings.max_throttle_s
                retry = not throttle and failure.retry and failures < self.settings.max_retries
                stop: JudgeUnavailableError | None = None
                if not (throttle or retry):
                    # Decided before the bookkeeping below (a cache write can take a while): a
                    # failure that trips the breaker (a malformed 200) stops every other
                    # thread at its next check from now on, not once the body is kept.
                    try:
                        self.breaker.failure(exc)
                    except JudgeUnavailableError as tripped:
                        stop = tripped
                if failure.lost:
                    self.budget.settle(reserved, reserved)
                    self.record_usage(estimated_usage(site, self.settings.model, attempt, reserved))
                else:
                    self.budget.release(reserved)
                if failure.malformed is not None and self.cache is not None:
                    # Kept like any answer: a rerun (or a Dagster step retry) does not pay it
                    # again; --rejudge unscored asks again.
                    marker = {"type": MALFORMED, "body": failure.malformed}
                    meta = {**self.cache_meta(site, batch=False), "unusable": "malformed body"}
                    self.cache.put(key, marker, meta)
                if throttle:
                    self.breaker.throttled()
                    self.limiter.throttled(failure.retry_after_s)
                    continue
                if retry:
                    failures += 1
                    self.limiter.throttled(failure.retry_after_s)
                    continue
                if stop is not None:
                    raise stop from exc
                raise
            self.breaker.success()
            self.limiter.success()
            record = self.usage_from_response(
                site, response, request_id=raw.request_id, attempt=attempt, batch=False
            )
            self.budget.settle(reserved, record.usd)
            self.record_usage(record)
            return response
