"""The Claude judge: one tool-use conversation per check over read-only repository tools.

Per check (not per AC: every check gets its own evidence, searches and cache entries, and the
shared prefix is cheap thanks to prompt caching) the judge runs a bounded loop: Claude calls
`list_files` / `grep` / `read_file` (see `repo_tools`), evalflow answers from the snapshot, and
Claude ends by calling `submit_verdict` {status MET|UNMET, evidence, searches, rationale}
(the loop is `tool_loop.ToolLoopJudge`, shared with the OpenAI judge).
Only evalflow answers UNSCORED, always with the reason: a malformed answer twice in a row
(schema-invalid `submit_verdict` input, a MET whose searches claim hits evalflow never
returned — `validator.claimed_search_problem` — or no `submit_verdict` call), the loop exhausted
(`max_turns`), a transient API failure after the SDK's retries, any other exception inside
that check, or "budget stop". One failing check never fails the run — but an API that cannot
answer at all does: the first authentication, permission, not-found or invalid-request error,
`EVALFLOW_CLAUDE_BREAKER_FAILURES` (5) consecutive transient failures, or
`EVALFLOW_CLAUDE_BREAKER_SECONDS` (600) without a successful call trip the `CircuitBreaker`,
no further request is sent and scoring stops with `JudgeUnavailableError` (exit 2), instead of
a run of UNSCORED checks ranked 0.00.

Model parameters, as the installed SDK (anthropic 2.x, API version 2026-10-21) allows them:
- no sampling parameters: that API version rejects `temperature` for every model, so the k
  runs use the model's default sampling. They are distinct requests because the run index is
  in the per-check block (see `prompt`); the response cache makes a re-run byte-identical.
- the final answer is forced with `tool_choice: {"type": "tool", "name": "submit_verdict"}` on
  the last turn and on the retry of a malformed answer, for models that accept forced tool use
  (the Claude 3 and 4 generations up to Opus 4.6). The 5.5 generation (the default model)
  rejects forced tool choice, so there the prompt asks for the call and the one-retry rule
  covers a miss. `force_final_tool` overrides the rule.
- `submit_verdict` and the repository tools are declared `strict` (schema-constrained inputs);
  evalflow still validates every answer.

Configuration (environment, read when the judge is built; constructor arguments win):
`EVALFLOW_CLAUDE_MODEL` (default `claude-sonnet-5-5`, the current Sonnet),
`EVALFLOW_CLAUDE_MAX_TOKENS` (16000: adaptive thinking shares it with the answer; a response
that stops on `max_tokens` is asked once more with twice the room, and a second cut ends the
check UNSCORED), `EVALFLOW_CLAUDE_CONCURRENCY` (4 threads),
`EVALFLOW_CLAUDE_MAX_TURNS` (12), `EVALFLOW_CLAUDE_MAX_CHECK_USD` (0.5, per-check spend cap),
`EVALFLOW_CLAUDE_MAX_RETRIES` (4, evalflow's own retries of 5xx/timeouts/dropped connections:
the SDK's are off so every attempt is budgeted and recorded, a lost one `estimated`),
`EVALFLOW_CLAUDE_MAX_THROTTLE_S` (120: 429/529 are retried behind the shared `RateLimiter`),
`EVALFLOW_CLAUDE_REQUESTS_PER_S` (unset), `EVALFLOW_CLAUDE_TIMEOUT` (120 s per request),
`EVALFLOW_CLAUDE_EFFORT` (unset = model default; low|medium|high|xhigh|max),
`EVALFLOW_MAX_COST_USD` (unset = no limit), `EVALFLOW_CLAUDE_BATCH` (1 = Message Batches, see
`batch`), `EVALFLOW_CLAUDE_BATCH_POLL_S` (30). `ANTHROPIC_BASE_URL` is honoured by the SDK.
The API key comes from `ANTHROPIC_API_KEY` (`registry.require_api_key`: without it, one line and
exit 2) and goes to the SDK only; evalflow never puts it into a record, verdict, cache entry,
log line or exception message (reasons are scrubbed as a second guard).

Transport: every Claude-backed judge (this one, `claude_plugin`, `claude_mc`,
`claude_skill_pairwise`, `claude_drafter`) derives from `ClaudeBacked`, whose `ClaudeClient`
(the SDK client from `_make_client`: key, endpoint, timeout, no SDK retries; response cache,
budget, prices, usage records) is built in that one place; the judge keeps `client` /
`cache` / `budget` / `prices` as its attributes.

Self-preference (SPEC core rule 4): `same_family(judge_model, author_model)`; when it holds the
judge logs a warning and tells the model to score borderline checks UNMET. The majority vote's
`borderline_to_unmet` is wired by the pipeline.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypedDict, TypeVar, Unpack

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalflow.errors import InputError, JudgeUnavailableError
from evalflow.judges.base import JudgeRequest
from evalflow.judges.cache import UNCACHEABLE_STOPS
from evalflow.judges.cost import (
    Budget,
    PriceTable,
    UsageRecord,
)
from evalflow.judges.family import bare_model
from evalflow.judges.prompt import (
    LAST_TURN_NOTICE,
    PROMPT_VERSION,
    SUBMIT_TOOL_NAME,
    SYSTEM_PROMPT,
)
from evalflow.judges.registry import require_api_key
from evalflow.judges.repo_tools import ToolLimits, ToolResult
from evalflow.judges.submission import (
    env_value,
)
from evalflow.judges.tool_loop import (
    CHECK_TOOLS,
    CUT_AT_MAX_TOKENS,
    Answer,
    Call,
    Dialect,
    ToolLoopJudge,
)
from evalflow.judges.transport import (
    CallSite,
    Failure,
    ModelTransport,
    PendingCallError,
)

if TYPE_CHECKING:
    import anthropic

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_MODEL = "claude-sonnet-5-5"
Effort = Literal["low", "medium", "high", "xhigh", "max"]
_EPHEMERAL = {"type": "ephemeral"}
_FORCED_TOOL_OK = (
    "claude-3",
    "claude-sonnet-4",
    "claude-haiku-4",
    "claude-opus-4-0",
    "claude-opus-4-1",
    "claude-opus-4-5",
    "claude-opus-4-6",
    "claude-opus-4-2025",
)


def _env_number(name: str, kind: type[int] | type[float]) -> int | float | None:
    value = env_value(name)
    if value is None:
        return None
    try:
        return kind(value)
    except ValueError as exc:
        raise InputError(
            f"{name}={value!r} is not a number", fix=f"set {name} to a {kind.__name__}"
        ) from exc


class ClaudeSettings(BaseModel):
    """Every knob of the Claude judge, with its documented default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = DEFAULT_MODEL
    # Adaptive thinking shares max_tokens with the answer: room for both, and a `max_tokens`
    # stop is retried once with twice as much (`ClaudeClient.call`).
    max_tokens: int = Field(default=16000, ge=256)
    concurrency: int = Field(default=4, ge=1, le=64)
    max_turns: int = Field(default=12, ge=2, le=100)
    max_retries: int = Field(default=4, ge=0, le=20)
    timeout_s: float = Field(default=120.0, gt=0)
    effort: Effort | None = None
    max_cost_usd: float | None = Field(default=None, ge=0)
    force_final_tool: bool | None = Field(
        default=None, description="None: decided by the model (see forced_tool_choice_supported)"
    )
    strict_tools: bool = True
    rejudge: bool = Field(
        default=False,
        description="--rejudge unscored: ask again what stored answers left without a verdict",
    )
    batch: bool = False
    batch_poll_s: float = Field(default=30.0, gt=0)
    batch_max_wait_s: float = Field(default=24 * 3600.0, gt=0)
    batch_rounds: int | None = Field(
        default=None, ge=1, description="batched turns per check; None = every turn"
    )
    limits: ToolLimits = ToolLimits()
    breaker_failures: int = Field(
        default=5, ge=1, description="consecutive transient API failures that abort the run"
    )
    breaker_seconds: float = Field(
        default=600.0, gt=0, description="seconds without a successful call that abort the run"
    )
    max_check_usd: float | None = Field(
        default=0.5,
        gt=0,
        description="what one check's conversation may cost before it ends UNSCORED",
    )
    max_throttle_s: float = Field(
        default=120.0,
        gt=0,
        description="how long one call keeps retrying 429/529 (adaptive back-off) before "
        "it counts as a failed call",
    )
    requests_per_s: float | None = Field(
        default=None, gt=0, description="token-bucket rate of requests (None: no fixed rate)"
    )

    @classmethod
    def from_env(cls, **overrides: Any) -> ClaudeSettings:
        """Defaults, then the EVALFLOW_CLAUDE_* / EVALFLOW_MAX_COST_USD variables, then
        `overrides` (a bad value is an InputError naming the variable)."""
        values: dict[str, Any] = {}
        numbers: dict[str, tuple[str, type[int] | type[float]]] = {
            "max_tokens": ("EVALFLOW_CLAUDE_MAX_TOKENS", int),
            "concurrency": ("EVALFLOW_CLAUDE_CONCURRENCY", int),
            "max_turns": ("EVALFLOW_CLAUDE_MAX_TURNS", int),
            "max_retries": ("EVALFLOW_CLAUDE_MAX_RETRIES", int),
            "timeout_s": ("EVALFLOW_CLAUDE_TIMEOUT", float),
            "max_cost_usd": ("EVALFLOW_MAX_COST_USD", float),
            "batch_poll_s": ("EVALFLOW_CLAUDE_BATCH_POLL_S", float),
            "breaker_failures": ("EVALFLOW_CLAUDE_BREAKER_FAILURES", int),
            "breaker_seconds": ("EVALFLOW_CLAUDE_BREAKER_SECONDS", float),
            "max_check_usd": ("EVALFLOW_CLAUDE_MAX_CHECK_USD", float),
            "requests_per_s": ("EVALFLOW_CLAUDE_REQUESTS_PER_S", float),
            "max_throttle_s": ("EVALFLOW_CLAUDE_MAX_THROTTLE_S", float),
        }
        for field_name, (env_name, kind) in numbers.items():
            number = _env_number(env_name, kind)
            if number is not None:
                values[field_name] = number
        if (model := env_value("EVALFLOW_CLAUDE_MODEL")) is not None:
            values["model"] = model
        if (effort := env_value("EVALFLOW_CLAUDE_EFFORT")) is not None:
            values["effort"] = effort
        if (batch := env_value("EVALFLOW_CLAUDE_BATCH")) is not None:
            values["batch"] = batch.lower() in {"1", "true", "yes", "on"}
        values.update(overrides)
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = str(first["loc"][0]) if first["loc"] else ""
            env_names = {name: env for name, (env, _) in numbers.items()}
            env_names |= {"model": "EVALFLOW_CLAUDE_MODEL", "effort": "EVALFLOW_CLAUDE_EFFORT"}
            env_name = None if field in overrides else env_names.get(field)
            raise InputError(
                f"invalid Claude judge setting {'.'.join(map(str, first['loc']))}: {first['msg']}",
                where=f"{env_name}={os.environ.get(env_name, '')}" if env_name else None,
                fix="check the EVALFLOW_CLAUDE_* / EVALFLOW_MAX_COST_USD environment variables",
            ) from exc


def forced_tool_choice_supported(model: str) -> bool:
    """Whether the model accepts `tool_choice` naming a tool (see the module docstring)."""
    return bare_model(model).startswith(_FORCED_TOOL_OK)


class CircuitBreaker:
    """Stops every call once the API is plainly unusable (fail fast, SPEC: never rank a run
    whose judge could not answer).

    Trips on the first authentication, permission, not-found or invalid-request error (no
    later call can succeed either), after `failures` consecutive transient failures (rate
    limits, overload, 5xx, timeouts, connection errors — each already retried by the SDK),
    or when `seconds` have passed since the last success with a failure in between. Once
    tripped, `check` raises before any further request is sent; after a cool-down of
    `seconds` it lets calls through again (a long-lived daemon recovers once the API does).

    With a `state` file the trip is shared by every process of the instance (the multiprocess
    executor's steps, Dagster step retries, a rerun within the cool-down): the first process
    that trips writes the reason and the wall-clock time there (under a file lock), and every
    process's `check` reads it before sending, so a wrong key costs the calls already in
    flight, not a few per process and retry.
    """

    def __init__(
        self,
        failures: int,
        seconds: float,
        clock: Callable[[], float] = time.monotonic,
        *,
        state: Path | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.failures = failures
        self.seconds = seconds
        self.clock = clock
        self.state = state
        self.wall = wall
        self._lock = threading.Lock()
        self._consecutive = 0
        self._throttled = False
        self._last_ok = clock()
        self._tripped_at = 0.0
        self.tripped: str | None = None
        self._probe = threading.Lock()
        self._answered = False

    def _trip(self, reason: str) -> None:
        if self.tripped is None:
            self.tripped, self._tripped_at = reason, self.clock()
            if self.state is not None:
                self._publish(reason)

    def _publish(self, reason: str) -> None:
        """Write this trip to the shared state unless another process's trip still holds."""
        assert self.state is not None
        self.state.parent.mkdir(parents=True, exist_ok=True)
        with open(self.state.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if self._shared() is None:
                    tmp = self.state.with_suffix(f".{os.getpid()}.tmp")
                    tmp.write_text(json.dumps({"reason": reason, "at": self.wall()}))
                    os.replace(tmp, self.state)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _shared(self) -> tuple[str, float] | None:
        """Another process's trip still within its cool-down: (reason, seconds ago)."""
        if self.state is None:
            return None
        try:
            record = json.loads(self.state.read_text())
            reason, ago = str(record["reason"]), self.wall() - float(record["at"])
        except (OSError, ValueError, KeyError, TypeError):
            return None  # none yet (an unreadable one is replaced by the next trip)
        return (reason, ago) if 0 <= ago < self.seconds else None

    def check(self) -> None:
        with self._lock:
            now = self.clock()
            if self.tripped is not None and now - self._tripped_at >= self.seconds:
                self.tripped, self._consecutive, self._last_ok = None, 0, now
            if self.tripped is None and (shared := self._shared()) is not None:
                self.tripped, self._tripped_at = shared[0], now - shared[1]
            if (self._consecutive or self._throttled) and now - self._last_ok >= self.seconds:
                self._trip(
                    f"no successful API call for {self.seconds:g} s "
                    f"({self._consecutive} failures in a row"
                    f"{', rate-limited or overloaded' if self._throttled else ''})"
                )
            tripped = self.tripped
            left = self.seconds - (now - self._tripped_at)
        if tripped is not None:
            shared = (
                ""
                if self.state is None
                else f"; every process refuses calls for {left:.0f} s more (or delete {self.state})"
            )
            raise JudgeUnavailableError(
                f"judge unavailable: {tripped}",
                fix="check the API key, quota and network, then rerun (answers so far are "
                f"cached){shared}",
            )

    @contextmanager
    def first_call(self) -> Iterator[None]:
        """Until the endpoint has answered once in this process, one call at a time: a wrong
        key or endpoint then costs one request per process instead of one per thread (the
        waiting calls see the trip before sending). Afterwards calls pass straight through."""
        if self._answered:
            yield
            return
        with self._probe:
            self.check()
            try:
                yield
            except Exception as exc:
                reason, fatal, _ = self.classify(exc)
                if fatal:
                    with self._lock:
                        self._trip(reason)
                raise
            self._answered = True

    def success(self) -> None:
        with self._lock:
            self._consecutive = 0
            self._throttled = False
            self._last_ok = self.clock()

    def throttled(self) -> None:
        """A 429/529: no failure counted (the limiter backs off), but the time without a
        success runs on; the check raises once it passes `seconds`."""
        with self._lock:
            self._throttled = True
        self.check()

    def classify(self, exc: BaseException) -> tuple[str, bool, bool]:
        """(reason, fatal, transient) of a failed call, as the Anthropic SDK raises it; a
        backend whose transport raises its own errors overrides this."""
        reason = failure_reason(exc) if isinstance(exc, Exception) else type(exc).__name__
        return reason, _fatal(exc), _transient(exc)

    def failure(self, exc: BaseException) -> None:
        """Record a failed call; trip when it is fatal or one too many."""
        reason, fatal, transient = self.classify(exc)
        with self._lock:
            if fatal:
                self._trip(reason)
            elif transient:
                self._consecutive += 1
                if self._consecutive >= self.failures:
                    self._trip(f"{self._consecutive} consecutive API failures, the last: {reason}")
        self.check()


_BREAKERS: dict[str, CircuitBreaker] = {}
# Under a warehouse's cache directory: the breakers' shared state (not a response cache).
BREAKERS_DIR = "breakers"
_BREAKERS_LOCK = threading.Lock()


def breaker_for(
    base_url: str,
    key: str,
    failures: int,
    seconds: float,
    kind: type[CircuitBreaker] = CircuitBreaker,
    state_dir: Path | None = None,
) -> CircuitBreaker:
    """The process's breaker for one endpoint and key, of any LLM backend: every judge of a
    run (k scoring runs, side metrics, PluginEval) stops together once the API is known to
    be unusable; with `state_dir` (under the warehouse) every process of the instance does,
    through `<state_dir>/<endpoint and key digest>.json`. A breaker with other limits, of
    another kind or with another state file is replaced."""
    endpoint = hashlib.sha256(f"{base_url}\0{key}".encode()).hexdigest()
    state = None if state_dir is None else state_dir / f"{endpoint[:16]}.json"
    with _BREAKERS_LOCK:
        breaker = _BREAKERS.get(endpoint)
        if (
            breaker is None
            or type(breaker) is not kind
            or (breaker.failures, breaker.seconds, breaker.state) != (failures, seconds, state)
        ):
            breaker = kind(failures, seconds, state=state)
            _BREAKERS[endpoint] = breaker
        return breaker


def shared_breaker(
    client: anthropic.Anthropic, settings: ClaudeSettings, cache_dir: Path | None = None
) -> CircuitBreaker:
    """The Claude endpoint's breaker (`breaker_for`), shared by the processes of the
    warehouse whose response cache is `cache_dir` (state in `<cache_dir>/breakers`)."""
    key = getattr(client, "api_key", "") or ""
    return breaker_for(
        str(client.base_url),
        key,
        settings.breaker_failures,
        settings.breaker_seconds,
        state_dir=None if cache_dir is None else cache_dir / BREAKERS_DIR,
    )


def _fatal(exc: BaseException) -> bool:
    import anthropic

    return isinstance(
        exc,
        (
            anthropic.AuthenticationError,
            anthropic.PermissionDeniedError,
            anthropic.NotFoundError,
            anthropic.BadRequestError,
            anthropic.RequestTooLargeError,
            MalformedResponseError,
        ),
    )


def _transient(exc: BaseException) -> bool:
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return isinstance(exc, anthropic.APIConnectionError)


class MalformedResponseError(Exception):
    """The API answered 200 with a body that is not a Message (paid, unusable): the run stops
    (exit 2) with what the body said, and the body is kept so a rerun does not pay again."""


_THROTTLE_STATUS = frozenset({429, 529})
# An attempt that failed after the request left (read timeout, connection dropped) may have
# been answered and billed: it is charged at its worst case, marked `estimated`.
_NOT_SENT = ("ConnectError", "ConnectTimeout", "PoolTimeout", "UnsupportedProtocol")


def _lost_after_sending(exc: BaseException) -> bool:
    import anthropic

    if not isinstance(exc, anthropic.APIConnectionError):
        return False
    cause = exc.__cause__
    return cause is None or type(cause).__name__ not in _NOT_SENT


def _retry_after(exc: BaseException) -> float | None:
    """The server's requested wait (`retry-after-ms`, else `retry-after` seconds)."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name))
        except (TypeError, ValueError):
            continue
        if 0 <= value / scale <= 600:
            return value / scale
    return None


class RateLimiter:
    """A token bucket shared by every thread of one endpoint in this process, with adaptive
    back-off: a 429/529 empties the bucket and pauses every sender for the server's
    `retry-after` or the current back-off, whichever is longer; the back-off doubles with each
    throttle in a row (up to `max_backoff_s`) and halves with each success. A burst of 429/529
    therefore slows the run down instead of aborting it; the circuit breaker still stops a run
    that sees no success for `breaker_seconds`."""

    def __init__(
        self,
        rate_per_s: float | None,
        *,
        base_backoff_s: float = 1.0,
        max_backoff_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.rate = rate_per_s
        self.base_backoff_s = base_backoff_s
        self.max_backoff_s = max_backoff_s
        self.clock = clock
        self.sleep = sleep
        self._lock = threading.Lock()
        self._tokens = 1.0
        self._updated = clock()
        self._paused_until = 0.0
        self._backoff = 0.0

    def acquire(self) -> None:
        while True:
            with self._lock:
                now = self.clock()
                wait = self._paused_until - now
                if wait <= 0 and self.rate is not None:
                    burst = max(1.0, self.rate)
                    self._tokens = min(burst, self._tokens + (now - self._updated) * self.rate)
                    self._updated = now
                    if self._tokens >= 1:
                        self._tokens -= 1
                        return
                    wait = (1 - self._tokens) / self.rate
                elif wait <= 0:
                    return
            self.sleep(wait)

    def throttled(self, retry_after: float | None) -> None:
        with self._lock:
            self._backoff = min(self.max_backoff_s, max(self.base_backoff_s, 2 * self._backoff))
            pause = max(self._backoff, retry_after or 0.0)
            self._paused_until = max(self._paused_until, self.clock() + pause)
            # The bucket refills from the end of the pause: no burst right after it.
            self._tokens, self._updated = 0.0, self._paused_until

    def success(self) -> None:
        with self._lock:
            self._backoff /= 2


_LIMITERS: dict[str, RateLimiter] = {}


def limiter_for(base_url: str, rate_per_s: float | None) -> RateLimiter:
    """The process's limiter of one endpoint (every judge of a run shares it)."""
    with _BREAKERS_LOCK:
        limiter = _LIMITERS.get(base_url)
        if limiter is None or limiter.rate != rate_per_s:
            limiter = _LIMITERS[base_url] = RateLimiter(rate_per_s)
        return limiter


def _redact(text: str) -> str:
    secret = os.environ.get("ANTHROPIC_API_KEY")
    if secret:
        text = text.replace(secret, "[redacted]")
    return text[:400]


def _assistant_content(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A response's content blocks in the shape the API accepts back as an assistant turn."""
    out: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            if block.get("text"):
                out.append({"type": "text", "text": block["text"]})
        elif kind == "tool_use":
            out.append(
                {
                    "type": "tool_use",
                    "id": block["id"],
                    "name": block["name"],
                    "input": block.get("input"),
                }
            )
        elif kind == "thinking":
            out.append(
                {"type": "thinking", "thinking": block["thinking"], "signature": block["signature"]}
            )
        elif kind == "redacted_thinking":
            out.append({"type": "redacted_thinking", "data": block["data"]})
        else:
            out.append(block)
    return out or [{"type": "text", "text": "(empty answer)"}]


def _message_body(raw: Any) -> dict[str, Any]:
    """The response as a dict, or MalformedResponseError with what the body said."""
    try:
        message = raw.parse()
        body = message.model_dump(mode="json", exclude_none=True)
    except Exception as exc:
        raise MalformedResponseError(_redact(f"{type(exc).__name__}: {_text(raw)}")) from exc
    if (
        not isinstance(body, dict)
        or body.get("type") != "message"
        or not isinstance(body.get("content"), list)
        or not isinstance(body.get("usage"), dict)
    ):
        raise MalformedResponseError(_redact(f"not a Message: {_text(raw)}"))
    return body


def _text(raw: Any) -> str:
    """The first 200 characters of a raw response's body, on one line."""
    try:
        return " ".join(str(raw.text()).split())[:200]
    except Exception:
        return "(body unreadable)"


def _tool_result(tool_use_id: str, result: ToolResult) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": result.text,
        "is_error": result.is_error,
    }


def _with_breakpoints(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of the messages with cache breakpoints on the run-context block and, after the
    first turn, on the last block of the conversation (so turn n+1 reads turn n's prefix)."""
    out = [{**m, "content": [dict(b) for b in m["content"]]} for m in messages]
    out[0]["content"][0]["cache_control"] = dict(_EPHEMERAL)
    if len(out) > 1:
        out[-1]["content"][-1]["cache_control"] = dict(_EPHEMERAL)
    return out


def _make_client(
    settings: ClaudeSettings, base_url: str | None, http_client: Any | None
) -> anthropic.Anthropic:
    """The one place a Claude SDK client is built, for every Claude-backed judge."""
    import anthropic

    # No key is the same one line (exit 2) whichever command built the judge, never an SDK
    # error at the first request; the commands also check it before any work.
    key = require_api_key("Claude client")
    # evalflow retries itself (`ClaudeClient._send`): every attempt is budgeted and counted.
    kwargs: dict[str, Any] = {"api_key": key, "max_retries": 0, "timeout": settings.timeout_s}
    if base_url:
        kwargs["base_url"] = base_url
    if http_client is not None:
        kwargs["http_client"] = http_client
    return anthropic.Anthropic(**kwargs)


class ClaudeClient(ModelTransport):
    """One model behind the official SDK, shared by every Claude-backed judge in evalflow.

    Owns the client (`base_url`, timeout from the settings, no SDK retries), the
    content-addressed response cache (`<cache_dir>/anthropic`, keyed by model,
    `prompt_version`, the full request and the run index), the price table, the spending
    `Budget` and the usage records. `call` (`transport.ModelTransport`, shared with the OpenAI
    judge) is the one way a request reaches the API: a cache hit is replayed (and recorded as
    `cached` with its original price); otherwise the worst case of the request is reserved on
    the budget first, so nothing is sent that could pass the limit (`BudgetExceededError`).
    """

    max_field = "max_tokens"

    def __init__(
        self,
        settings: ClaudeSettings,
        *,
        prompt_version: str,
        cache_dir: Path | None = None,
        base_url: str | None = None,
        http_client: Any | None = None,
        budget: Budget | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        super().__init__(
            settings,
            prompt_version=prompt_version,
            cache_dir=cache_dir,
            cache_name="anthropic",
            budget=budget,
            prices=prices,
        )
        self.client = _make_client(settings, base_url, http_client)
        self.settings: ClaudeSettings = settings
        self.breaker = shared_breaker(self.client, settings, cache_dir)
        self.limiter = limiter_for(str(self.client.base_url), settings.requests_per_s)

    def _create(self, params: dict[str, Any]) -> Any:
        return self.client.messages.with_raw_response.create(**params)

    def _body(self, raw: Any) -> dict[str, Any]:
        return _message_body(raw)

    def _failure(self, exc: BaseException) -> Failure:
        """A 429/529 is throttled, 429/5xx and connection errors are transient; a malformed
        200 was paid, like a request lost after it left."""
        malformed = str(exc) if isinstance(exc, MalformedResponseError) else None
        return Failure(
            lost=_lost_after_sending(exc) or malformed is not None,
            throttle=getattr(exc, "status_code", None) in _THROTTLE_STATUS,
            retry=_transient(exc),
            retry_after_s=_retry_after(exc),
            malformed=malformed,
        )

    def cut(self, response: dict[str, Any]) -> bool:
        return response.get("stop_reason") == "max_tokens"

    def _unusable(self, response: dict[str, Any]) -> str | None:
        stop = response.get("stop_reason")
        return f"stop_reason {stop}" if stop in UNCACHEABLE_STOPS else None

    def _tokens(self, response: dict[str, Any]) -> dict[str, int]:
        usage = response.get("usage") or {}
        return {
            "input_tokens": int(usage.get("input_tokens") or 0),
            "output_tokens": int(usage.get("output_tokens") or 0),
            "cache_read_tokens": int(usage.get("cache_read_input_tokens") or 0),
            "cache_write_tokens": int(usage.get("cache_creation_input_tokens") or 0),
        }


class ClaudeOptions(TypedDict, total=False):
    """Where a Claude-backed judge's transport comes from (`ClaudeBacked`)."""

    transport: ClaudeClient  # an existing one: its cache, budget and usage records are shared
    cache_dir: Path | None
    base_url: str | None  # a local stand-in in tests; else ANTHROPIC_BASE_URL, else the API
    http_client: Any | None
    budget: Budget | None
    prices: PriceTable | None


class ClaudeBacked:
    """The base of every Claude-backed judge (check judge, drafter, PluginEval judge, Monte
    Carlo executor, skill pairwise judge): its `transport`, either the one given or a new
    `ClaudeClient` under the subclass's `prompt_version` — the one way each of them reaches
    the API (key lookup, endpoint, timeout and retries in `_make_client`)."""

    prompt_version: ClassVar[str]

    def __init__(
        self, settings: ClaudeSettings | None = None, **options: Unpack[ClaudeOptions]
    ) -> None:
        transport = options.pop("transport", None)
        self.transport = transport or ClaudeClient(
            settings or ClaudeSettings.from_env(), prompt_version=self.prompt_version, **options
        )

    def drain_usage(self) -> list[UsageRecord]:
        """Usage records since the last drain (the pipeline stores them as `judge_usage`)."""
        return self.transport.drain_usage()


class ToolAnswerError(Exception):
    """The model did not answer through the required tool with a valid input (after the
    one retry), or refused; the message says what was wrong."""


def ask_tool(
    transport: ClaudeClient,
    *,
    system: list[dict[str, Any]],
    user: list[dict[str, Any]],
    tool: dict[str, Any],
    parse: Callable[[Any], T],
    site: CallSite,
    max_tokens: int | None = None,
) -> tuple[T, dict[str, Any]]:
    """One question answered through one tool: `(parse(tool input), final response)`.

    The tool is declared `strict` when the settings say so, and forced where the model
    accepts a forced `tool_choice` (the same rule as the check judge). `parse` raises
    ValueError (a pydantic ValidationError is one) on an invalid input. A missing or
    invalid call gets one retry turn saying what was wrong; a second miss, or a refusal,
    raises ToolAnswerError. API failures and BudgetExceededError propagate.

    Every answer is kept in the response cache, an unusable one marked so: an unchanged
    re-run replays the same answers to the same outcome (ToolAnswerError included) without a
    request. With `settings.rejudge`, a question whose stored answers ended in
    ToolAnswerError is asked again (its unusable answers re-sent); any other is replayed.
    """
    settings = transport.settings
    name = tool["name"]
    force = settings.force_final_tool
    if force is None:
        force = forced_tool_choice_supported(settings.model)
    params: dict[str, Any] = {
        "model": settings.model,
        "max_tokens": max_tokens or settings.max_tokens,
        "system": system,
        "tools": [{**tool, "strict": True} if settings.strict_tools else dict(tool)],
        "tool_choice": {"type": "tool", "name": name} if force else {"type": "auto"},
    }
    if settings.effort is not None:
        params["output_config"] = {"effort": settings.effort}
    reask = False
    if settings.rejudge:
        try:
            _ask(transport, params, user, name, parse, site, prefetch=True, reask=False)
        except (ToolAnswerError, JudgeUnavailableError):  # the latter: a stored malformed body
            reask = True
        except PendingCallError:
            pass  # not (fully) answered before: asked as usual
    return _ask(transport, params, user, name, parse, site, prefetch=False, reask=reask)


def _ask(
    transport: ClaudeClient,
    params: dict[str, Any],
    user: list[dict[str, Any]],
    name: str,
    parse: Callable[[Any], T],
    site: CallSite,
    *,
    prefetch: bool,
    reask: bool,
) -> tuple[T, dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
    problem = ""
    for turn in (1, 2):
        call_site = CallSite(site.run_key, site.check_id, site.run, turn, site.scope)
        request = {**params, "messages": messages}
        response = transport.call(request, call_site, prefetch=prefetch, reask=reask)
        if response.get("stop_reason") == "refusal":
            raise ToolAnswerError("the model refused to answer")
        if response.get("stop_reason") == "max_tokens":
            transport.reject(request, call_site, CUT_AT_MAX_TOKENS)
            raise ToolAnswerError(CUT_AT_MAX_TOKENS)
        content = _assistant_content(response.get("content") or [])
        uses = [b for b in content if b.get("type") == "tool_use"]
        calls = [b for b in uses if b.get("name") == name]
        if calls:
            try:
                return parse(calls[0].get("input")), response
            except ValueError as exc:
                problem = _problem(exc)
        else:
            problem = f"no {name} call (stop_reason {response.get('stop_reason')})"
        transport.reject(request, call_site, problem)
        messages = [*messages, {"role": "assistant", "content": content}]
        if uses:
            retry = [
                _tool_result(
                    b["id"],
                    ToolResult(
                        f"error: {problem}. Fix it and call {name} again."
                        if b.get("name") == name
                        else f"error: only {name} is available; call it with your answer.",
                        is_error=True,
                    ),
                )
                for b in uses
            ]
        else:
            retry = [{"type": "text", "text": f"Call {name} now with your answer."}]
        messages.append({"role": "user", "content": retry})
    raise ToolAnswerError(f"malformed answer twice: {problem}")


def _problem(exc: ValueError) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "input"
        return f"{where}: {first['msg']}"
    return str(exc)[:300]


class _Messages(Dialect):
    """The check conversation in Messages API content blocks (`ClaudeJudge`'s dialect)."""

    def __init__(self, request_params: Callable[..., dict[str, Any]]) -> None:
        self.request_params = request_params

    def start(self, context: str, block: str) -> list[dict[str, Any]]:
        return [
            {
                "role": "user",
                "content": [{"type": "text", "text": context}, {"type": "text", "text": block}],
            }
        ]

    def announce_last(self, conversation: list[dict[str, Any]]) -> None:
        # Into the last user turn: the Messages API wants user and assistant turns to alternate.
        conversation[-1]["content"].append({"type": "text", "text": LAST_TURN_NOTICE})

    def params(
        self, conversation: list[dict[str, Any]], *, force: bool, context: str
    ) -> dict[str, Any]:
        return self.request_params(conversation, force=force)

    def read(self, response: dict[str, Any]) -> Answer:
        content = _assistant_content(response.get("content") or [])
        calls = [
            Call(b["id"], b["name"], b.get("input")) for b in content if b.get("type") == "tool_use"
        ]
        return Answer(
            calls,
            [{"role": "assistant", "content": content}],
            f"no submit_verdict call (stop_reason {response.get('stop_reason')})",
        )

    def tool_turn(self, results: list[tuple[str, ToolResult]]) -> list[dict[str, Any]]:
        return [{"role": "user", "content": [_tool_result(i, r) for i, r in results]}]

    def user_turn(self, text: str) -> list[dict[str, Any]]:
        return [{"role": "user", "content": [{"type": "text", "text": text}]}]


class ClaudeJudge(ClaudeBacked, ToolLoopJudge):
    """Claude through the official SDK with read-only repository tools (module docstring);
    the per-check loop is the shared `tool_loop.ToolLoopJudge`, written in Messages API
    content blocks here."""

    prompt_version = PROMPT_VERSION
    spend_cap_env = "EVALFLOW_CLAUDE_MAX_CHECK_USD"
    thread_prefix = "claude-judge"

    def __init__(
        self, settings: ClaudeSettings | None = None, **options: Unpack[ClaudeOptions]
    ) -> None:
        super().__init__(settings, **options)
        self.settings = self.transport.settings
        # The batch path (`batch`) reads these directly; they are the transport's objects.
        self.prices = self.transport.prices
        self.client = self.transport.client
        self.cache = self.transport.cache
        self.budget = self.transport.budget
        force = self.settings.force_final_tool
        self.force_final_tool = (
            forced_tool_choice_supported(self.settings.model) if force is None else force
        )
        self._tools = [
            {**t, "strict": True} if self.settings.strict_tools else dict(t) for t in CHECK_TOOLS
        ]
        self._system = [{"type": "text", "text": SYSTEM_PROMPT, "cache_control": _EPHEMERAL}]
        self._stop = threading.Event()  # set by `score` once most checks are unusable
        self._log = log
        self.dialect = _Messages(self.request_params)

    @property
    def judge_id(self) -> str:
        return f"anthropic:{self.settings.model}"

    def _backend_fields(self) -> dict[str, Any]:
        # API version 2026-10-21 accepts no sampling parameters: model default sampling.
        return {"temperature": None, "effort": self.settings.effort}

    def _prefetch(self, request: JudgeRequest) -> None:
        if self.settings.batch:
            from evalflow.judges.batch import prefetch_with_batches

            prefetch_with_batches(self, request)

    def request_params(self, messages: list[dict[str, Any]], *, force: bool) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.settings.model,
            "max_tokens": self.settings.max_tokens,
            "system": self._system,
            "tools": self._tools,
            "tool_choice": (
                {"type": "tool", "name": SUBMIT_TOOL_NAME} if force else {"type": "auto"}
            ),
            "messages": _with_breakpoints(messages),
        }
        if self.settings.effort is not None:
            params["output_config"] = {"effort": self.settings.effort}
        return params

    def _failure_reason(self, exc: Exception) -> str:
        return failure_reason(exc)


def failure_reason(exc: Exception) -> str:
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        return _redact(f"API failure: HTTP {exc.status_code} {type(exc).__name__}: {exc.message}")
    if isinstance(exc, anthropic.APITimeoutError):
        return "API failure: request timed out after retries"
    if isinstance(exc, anthropic.APIConnectionError):
        return "API failure: connection error after retries"
    if isinstance(exc, InputError):
        return _redact(f"judge error: {exc.one_line()}")
    if isinstance(exc, MalformedResponseError):
        return _redact(f"the API answered with a malformed body: {exc}")
    return _redact(f"judge error: {type(exc).__name__}: {exc}")
