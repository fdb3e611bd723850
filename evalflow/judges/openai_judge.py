"""The OpenAI-compatible judge: a second model family over the same read-only repository tools.

It speaks the Chat Completions API (`POST <base URL>/chat/completions`), which OpenAI, Gemini's
OpenAI-compatible endpoint and local servers (vLLM, Ollama, llama.cpp) all serve. Per check it
runs the Claude judge's loop with the same text (`prompt`): the system prompt, the run context,
the check block, repository answers inside the untrusted-data delimiters and the last-turn
notice. The model calls `list_files` / `grep` / `read_file` as functions, evalflow answers from
the snapshot, and the model ends with `submit_verdict`. Only evalflow answers UNSCORED, always
with the reason (malformed answer twice, loop exhausted, an API failure after retries, "budget
stop"), and every verdict then passes the shared evidence validator like any other judge's.

Request shape (Chat Completions):
- the four tools are functions declared `strict: true` (their schemas already list every
  property as required and forbid extra ones, as strict mode demands) with
  `parallel_tool_calls: false`, because strict schemas are not guaranteed for parallel calls;
  evalflow still validates every answer;
- `tool_choice` is `auto`, and names `submit_verdict` on the last turn and on the retry of a
  malformed answer (`EVALFLOW_OPENAI_FORCE_FINAL_TOOL=0` for a server that rejects a named
  tool choice);
- `max_completion_tokens` (reasoning tokens count against it); no sampling parameter unless
  `EVALFLOW_OPENAI_TEMPERATURE` is set: current OpenAI reasoning models reject `temperature`,
  while a local model may want 0. `EVALFLOW_OPENAI_REASONING_EFFORT` is sent when set.

Transport: plain HTTP from the standard library (`urllib`), not the `openai` SDK. The judge
needs one endpoint; retries must feed evalflow's circuit breaker; compatible servers differ
in what an SDK assumes; and the offline path then imports nothing new. Retries (default 4)
back off exponentially on 408/409/429/5xx, connection errors and timeouts, honouring
`retry-after-ms` / `retry-after` up to 60 s. Redirects are refused, so the key is never sent
to a second host. A 429 whose error code is `insufficient_quota` is not retried: the account
is out of credit and no retry can succeed.

Fail fast (the Claude judge's `CircuitBreaker`, one per endpoint and key in this process): the
first 401/403/404/400/422 or `insufficient_quota` aborts scoring (`JudgeUnavailableError`, exit
2) with the status and the API's message; so do `EVALFLOW_OPENAI_BREAKER_FAILURES` (5)
consecutive transient failures, or `EVALFLOW_OPENAI_BREAKER_SECONDS` (600) without a success.
A response that is not JSON or has no choice counts as a transient failure and is not retried
(the server may have billed it).

Money: prices come from the shared `prices.yaml` (`EVALFLOW_PRICES` to override). A model
without a row is refused when the judge is built, since neither a cost nor a `--max-cost`
limit could be honoured; a local server is priced by giving it a row of zeros. Usage maps
`prompt_tokens` minus `prompt_tokens_details.cached_tokens` to input tokens, the cached ones to
cache reads (OpenAI-style caching is automatic: no cache writes) and `completion_tokens`
(reasoning included) to output. The worst case of each call is reserved on the shared
`Budget` before it is sent.

Responses are cached under `<cache_dir>/openai` with the same key as Claude's (model, prompt
version, the full request, run index, run key and repo head). Every answer is kept: one that
stopped on `length` or `content_filter`, a refusal or one that failed validation is marked
unusable (`cache.ResponseCache.mark_unusable`) and replayed to the same UNSCORED outcome on an
unchanged re-run; only `--rejudge unscored` (`rejudge`) asks such a check again.

Configuration: `EVALFLOW_OPENAI_BASE_URL` (default `https://api.openai.com/v1`; Gemini:
`https://generativelanguage.googleapis.com/v1beta/openai`; Ollama: `http://localhost:11434/v1`),
`EVALFLOW_OPENAI_MODEL` (`gpt-5.5`), `EVALFLOW_OPENAI_API_KEY_ENV` (the name of the variable
holding the key, default `OPENAI_API_KEY`), `EVALFLOW_OPENAI_MAX_TOKENS` (16000),
`EVALFLOW_OPENAI_CONCURRENCY` (4), `EVALFLOW_OPENAI_MAX_TURNS` (12), `EVALFLOW_OPENAI_MAX_RETRIES`
(4), `EVALFLOW_OPENAI_TIMEOUT` (120 s), `EVALFLOW_MAX_COST_USD`. The key is read when a request
is sent, put in the `Authorization` header only, and scrubbed from every reason as a second
guard: it never reaches a record, cache entry, log line or exception message.
"""

from __future__ import annotations

import http.client
import json
import logging
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalflow.domain.models import BaselineAC, Check, Verdict
from evalflow.errors import InputError, JudgeUnavailableError
from evalflow.judges.anthropic_judge import CallSite, CircuitBreaker, PendingCallError, breaker_for
from evalflow.judges.base import JudgeRequest
from evalflow.judges.cache import ResponseCache, cache_key
from evalflow.judges.cost import (
    BUDGET_STOP,
    Budget,
    BudgetExceededError,
    PriceTable,
    UsageRecord,
    input_token_bound,
    load_prices,
)
from evalflow.judges.family import same_family
from evalflow.judges.prompt import (
    LAST_TURN_NOTICE,
    PROMPT_VERSION,
    RETRY_NO_SUBMIT,
    SUBMIT_TOOL,
    SUBMIT_TOOL_NAME,
    SYSTEM_PROMPT,
    check_block,
    run_context,
    untrusted,
)
from evalflow.judges.repo_tools import TOOL_DEFINITIONS, RepoTools, ToolLimits, ToolResult
from evalflow.judges.submission import (
    env_value,
    unscored_verdict,
    verdict_from_submission,
    warn_self_preference,
)

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-5.5"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_K = 3
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]
# Finish reasons whose answer is incomplete or withheld: never cached, never replayed.
UNCACHEABLE_FINISH = frozenset({"length", "content_filter"})
_FATAL_STATUS = frozenset({400, 401, 403, 404, 422})
_RETRY_STATUS = frozenset({408, 409, 429})
_MAX_RETRY_AFTER_S = 60.0


class OpenAISettings(BaseModel):
    """Every knob of the OpenAI-compatible judge, with its documented default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = DEFAULT_BASE_URL
    model: str = DEFAULT_MODEL
    api_key_env: str = Field(default=DEFAULT_KEY_ENV, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    max_tokens: int = Field(default=16000, ge=256, description="max_completion_tokens")
    concurrency: int = Field(default=4, ge=1, le=64)
    max_turns: int = Field(default=12, ge=2, le=100)
    max_retries: int = Field(default=4, ge=0, le=20)
    timeout_s: float = Field(default=120.0, gt=0)
    temperature: float | None = Field(default=None, ge=0, le=2)
    reasoning_effort: ReasoningEffort | None = None
    force_final_tool: bool = True
    strict_tools: bool = True
    max_cost_usd: float | None = Field(default=None, ge=0)
    limits: ToolLimits = ToolLimits()
    rejudge: bool = Field(
        default=False,
        description="--rejudge unscored: ask again what stored answers left without a verdict",
    )
    breaker_failures: int = Field(default=5, ge=1)
    breaker_seconds: float = Field(default=600.0, gt=0)

    @classmethod
    def from_env(cls, **overrides: Any) -> OpenAISettings:
        """Defaults, then the EVALFLOW_OPENAI_* / EVALFLOW_MAX_COST_USD variables, then
        `overrides` (a bad value is an InputError naming the variable)."""
        variables = {
            "base_url": "EVALFLOW_OPENAI_BASE_URL",
            "model": "EVALFLOW_OPENAI_MODEL",
            "api_key_env": "EVALFLOW_OPENAI_API_KEY_ENV",
            "max_tokens": "EVALFLOW_OPENAI_MAX_TOKENS",
            "concurrency": "EVALFLOW_OPENAI_CONCURRENCY",
            "max_turns": "EVALFLOW_OPENAI_MAX_TURNS",
            "max_retries": "EVALFLOW_OPENAI_MAX_RETRIES",
            "timeout_s": "EVALFLOW_OPENAI_TIMEOUT",
            "temperature": "EVALFLOW_OPENAI_TEMPERATURE",
            "reasoning_effort": "EVALFLOW_OPENAI_REASONING_EFFORT",
            "force_final_tool": "EVALFLOW_OPENAI_FORCE_FINAL_TOOL",
            "max_cost_usd": "EVALFLOW_MAX_COST_USD",
            "breaker_failures": "EVALFLOW_OPENAI_BREAKER_FAILURES",
            "breaker_seconds": "EVALFLOW_OPENAI_BREAKER_SECONDS",
        }
        values: dict[str, Any] = {}
        for field_name, env_name in variables.items():
            if (value := env_value(env_name)) is not None:
                values[field_name] = value
        values.update(overrides)
        try:
            settings = cls.model_validate(values)
        except ValidationError as exc:
            first = exc.errors()[0]
            field_name = str(first["loc"][0]) if first["loc"] else ""
            raise InputError(
                f"invalid OpenAI judge setting {field_name}: {first['msg']}",
                where=variables.get(field_name, "the OpenAI judge settings"),
                fix="check the EVALFLOW_OPENAI_* / EVALFLOW_MAX_COST_USD environment variables",
            ) from exc
        url = urllib.parse.urlsplit(settings.base_url)
        if url.scheme not in {"http", "https"} or not url.hostname:
            raise InputError(
                f"EVALFLOW_OPENAI_BASE_URL={settings.base_url!r} is not an http(s) URL",
                fix="e.g. https://api.openai.com/v1 or http://localhost:11434/v1",
            )
        return settings

    @property
    def endpoint(self) -> str:
        """The base URL without credentials, query or trailing slash (safe to record)."""
        url = urllib.parse.urlsplit(self.base_url)
        host = url.hostname or ""
        netloc = f"{host}:{url.port}" if url.port else host
        return urllib.parse.urlunsplit((url.scheme, netloc, url.path.rstrip("/"), "", ""))


def api_key(settings: OpenAISettings) -> str:
    """The key from the variable `settings.api_key_env`, or a one-line InputError."""
    key = env_value(settings.api_key_env)
    if key is None:
        raise InputError(
            f"{settings.api_key_env} is not set",
            where="judge 'openai'",
            fix=f"export {settings.api_key_env}=<your key> (or name the variable that holds it "
            "in EVALFLOW_OPENAI_API_KEY_ENV; a local server without keys takes any value), "
            "or use --judge heuristic (the offline default, no key needed)",
        )
    return key


class OpenAIAPIError(Exception):
    """A failed Chat Completions call; `reason` is one line, already scrubbed of the key."""

    def __init__(self, reason: str, *, status: int | None, fatal: bool, retry: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.fatal = fatal
        self.retry = retry
        self.retry_after_s: float | None = None


class _Breaker(CircuitBreaker):
    """The Claude judge's breaker, fed with this transport's failures (fatal or transient)."""

    def failure(self, exc: BaseException) -> None:
        if not isinstance(exc, OpenAIAPIError):
            # Not an answer from the API (an interrupt, a local error): nothing to count.
            self.check()
            return
        with self._lock:
            if exc.fatal:
                self._trip(exc.reason)
            else:
                self._consecutive += 1
                if self._consecutive >= self.failures:
                    self._trip(
                        f"{self._consecutive} consecutive API failures, the last: {exc.reason}"
                    )
        self.check()


def shared_breaker(settings: OpenAISettings, key: str) -> _Breaker:
    """The endpoint's breaker, from the one registry every LLM backend shares."""
    breaker = breaker_for(
        settings.endpoint, key, settings.breaker_failures, settings.breaker_seconds, _Breaker
    )
    return cast(_Breaker, breaker)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class ChatClient:
    """POST <base URL>/chat/completions with retries (module docstring); returns the JSON body,
    the request id and the number of HTTP attempts."""

    def __init__(self, settings: OpenAISettings) -> None:
        self.settings = settings
        self.url = settings.base_url.rstrip("/") + "/chat/completions"
        self._opener = urllib.request.build_opener(_NoRedirect)

    def _scrub(self, text: str) -> str:
        key = env_value(self.settings.api_key_env)
        if key:
            text = text.replace(key, "[redacted]")
        return " ".join(text.split())[:400]

    def _error(self, exc: urllib.error.HTTPError) -> OpenAIAPIError:
        try:
            body = json.loads(exc.read() or b"{}")
        except (OSError, ValueError):
            body = {}
        error = body.get("error") if isinstance(body, dict) else None
        error = error if isinstance(error, dict) else {}
        message = str(error.get("message") or exc.reason or "")
        code = str(error.get("code") or error.get("type") or "")
        status = exc.code
        quota = status == 429 and code == "insufficient_quota"
        reason = self._scrub(
            f"API failure: HTTP {status}{f' {code}' if code else ''}: {message}".rstrip(": ")
        )
        failure = OpenAIAPIError(
            reason,
            status=status,
            # A redirect is refused (the key must not follow it): the base URL is wrong.
            fatal=status in _FATAL_STATUS or quota or 300 <= status < 400,
            retry=not quota and (status in _RETRY_STATUS or status >= 500),
        )
        failure.retry_after_s = _retry_after(exc.headers)
        return failure

    def post(self, body: dict[str, Any]) -> tuple[dict[str, Any], str | None, int]:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        attempts = self.settings.max_retries + 1
        for attempt in range(1, attempts + 1):
            request = urllib.request.Request(
                self.url,
                data=data,
                method="POST",
                headers={
                    "Content-Type": "application/json",
                    "Accept": "application/json",
                    "Authorization": f"Bearer {api_key(self.settings)}",
                },
            )
            try:
                with self._opener.open(request, timeout=self.settings.timeout_s) as response:
                    raw = response.read()
                    request_id = response.headers.get("x-request-id")
            except urllib.error.HTTPError as exc:
                failure = self._error(exc)
            except (TimeoutError, urllib.error.URLError, OSError, http.client.HTTPException) as exc:
                timed_out = isinstance(exc, TimeoutError) or "timed out" in str(exc)
                what = "timed out" if timed_out else f"connection error ({type(exc).__name__})"
                failure = OpenAIAPIError(
                    f"API failure: request {what} after {attempt} attempt(s)",
                    status=None,
                    fatal=False,
                    retry=True,
                )
            else:
                return _parse_body(raw), request_id, attempt
            if not failure.retry or attempt == attempts:
                raise failure
            delay = failure.retry_after_s
            time.sleep(delay if delay is not None else min(8.0, 0.5 * 2 ** (attempt - 1)))
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def _retry_after(headers: Any) -> float | None:
    """The server's requested wait (`retry-after-ms`, else `retry-after` seconds), if sane."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        try:
            seconds = float(value) / scale if value is not None else None
        except ValueError:
            seconds = None
        if seconds is not None and 0 <= seconds <= _MAX_RETRY_AFTER_S:
            return seconds
    return None


def _parse_body(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise OpenAIAPIError(
            "API failure: the response is not a chat completion (malformed JSON or no choice)",
            status=200,
            fatal=False,
            retry=False,
        )
    return body


def _failure_reason(exc: Exception, key_env: str) -> str:
    if isinstance(exc, OpenAIAPIError):
        return exc.reason
    text = f"judge error: {type(exc).__name__}: {exc}"
    if isinstance(exc, InputError):
        text = f"judge error: {exc.one_line()}"
    key = env_value(key_env)
    return (text.replace(key, "[redacted]") if key else text)[:400]


class OpenAITransport:
    """One model behind one OpenAI-compatible endpoint: the response cache, the price table,
    the shared budget, the breaker and the usage records (`ClaudeClient`'s roles)."""

    def __init__(
        self,
        settings: OpenAISettings,
        *,
        cache_dir: Path | None = None,
        budget: Budget | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        self.settings = settings
        self.prices = prices or load_prices()
        self.prices.price(settings.model)  # an unpriced model is refused here (docstring)
        self.client = ChatClient(settings)
        self.cache = ResponseCache(cache_dir / "openai") if cache_dir is not None else None
        self.budget = budget if budget is not None else Budget(settings.max_cost_usd)
        self.breaker = shared_breaker(settings, api_key(settings))
        self._usage: list[UsageRecord] = []
        self._usage_lock = threading.Lock()

    def drain_usage(self) -> list[UsageRecord]:
        with self._usage_lock:
            records, self._usage = self._usage, []
        return records

    def key_for(self, params: dict[str, Any], site: CallSite) -> str:
        scope = f"{site.run_key}@{site.scope}" if site.scope else site.run_key
        return cache_key(self.settings.model, PROMPT_VERSION, params, site.run, scope)

    def reject(self, params: dict[str, Any], site: CallSite, problem: str) -> None:
        """Mark the cached answer to `params` unusable (kept and replayed, see `call`)."""
        if self.cache is not None:
            self.cache.mark_unusable(self.key_for(params, site), problem)

    def call(
        self,
        params: dict[str, Any],
        site: CallSite,
        *,
        prefetch: bool = False,
        reask: bool = False,
    ) -> dict[str, Any]:
        """The completion for `params`: from the cache (whatever it was, unless `reask` and
        it is marked unusable), else one paid, budgeted request. `prefetch` only replays: a
        call that would be sent raises PendingCallError and nothing is recorded."""
        key = self.key_for(params, site)
        found = self.cache.get_with_meta(key) if self.cache is not None else None
        if found is not None and not (reask and found[1].get("unusable")):
            hit = found[0]
            if not prefetch:
                record = self.usage(site, hit, request_id=None, attempt=0)
                with self._usage_lock:
                    self._usage.append(record.model_copy(update={"cached": True}))
                if self.cache is not None:
                    self.cache.record_hit(record.usd)
            return hit
        if prefetch:
            raise PendingCallError(key, params, site)
        if self.cache is not None:
            self.cache.record_miss()
        estimate = self.prices.worst_case_usd(
            self.settings.model,
            input_tokens=input_token_bound(params),
            max_tokens=int(params["max_completion_tokens"]),
            batch=False,
        )
        self.breaker.check()
        reserved = self.budget.reserve(estimate)
        try:
            response, request_id, attempts = self.client.post(params)
        except BaseException as exc:
            self.budget.release(reserved)
            self.breaker.failure(exc)
            raise
        self.breaker.success()
        record = self.usage(site, response, request_id=request_id, attempt=attempts)
        self.budget.settle(reserved, record.usd)
        with self._usage_lock:
            self._usage.append(record)
        choice = response["choices"][0]
        if self.cache is not None:
            meta = self.cache_meta(site)
            if (choice.get("message") or {}).get("refusal"):
                meta["unusable"] = "refusal"
            elif (finish := choice.get("finish_reason")) in UNCACHEABLE_FINISH:
                meta["unusable"] = f"finish_reason {finish}"
            self.cache.put(key, response, meta)
        return response

    def cache_meta(self, site: CallSite) -> dict[str, Any]:
        """What a cache entry records beside the response, as the Claude judge's do: the
        fields `evalflow cache prune` selects on (`judges.cache`)."""
        return {
            "model": self.settings.model,
            "prompt_version": PROMPT_VERSION,
            "run_key": site.run_key,
            "run": site.run,
            "batch": False,
        }

    def usage(
        self, site: CallSite, response: dict[str, Any], *, request_id: str | None, attempt: int
    ) -> UsageRecord:
        usage = response.get("usage") or {}
        prompt = int(usage.get("prompt_tokens") or 0)
        cached = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
        tokens = {
            "input_tokens": max(0, prompt - cached),
            "output_tokens": int(usage.get("completion_tokens") or 0),
            "cache_read_tokens": min(cached, prompt),
            "cache_write_tokens": 0,
        }
        return UsageRecord(
            run_key=site.run_key,
            check_id=site.check_id,
            run=site.run,
            turn=site.turn,
            model=self.settings.model,
            request_id=request_id,
            attempt=attempt,
            usd=self.prices.usd(self.settings.model, **tokens),
            **tokens,
        )


@dataclass(frozen=True)
class _Call:
    """One function call of an assistant message; `arguments` None when not a JSON object."""

    id: str
    name: str
    arguments: dict[str, Any] | None


def _calls(message: dict[str, Any]) -> list[_Call]:
    out = []
    for index, raw in enumerate(message.get("tool_calls") or []):
        function = raw.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "")
        except (TypeError, ValueError):
            arguments = None
        out.append(
            _Call(
                str(raw.get("id") or f"call_{index}"),
                str(function.get("name") or ""),
                arguments if isinstance(arguments, dict) else None,
            )
        )
    return out


def _assistant_turn(message: dict[str, Any]) -> dict[str, Any]:
    """The assistant message as the API accepts it back in the conversation."""
    turn: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    if message.get("tool_calls"):
        turn["tool_calls"] = [
            {
                "id": call.get("id"),
                "type": "function",
                "function": {
                    "name": (call.get("function") or {}).get("name"),
                    "arguments": (call.get("function") or {}).get("arguments"),
                },
            }
            for call in message["tool_calls"]
        ]
    return turn


def _tool_message(call_id: str, result: ToolResult) -> dict[str, Any]:
    """A tool answer: repository text inside the untrusted-data delimiters, evalflow's own
    error messages outside them."""
    text = result.text if result.is_error else untrusted(result.text)
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def _function(tool: dict[str, Any], strict: bool) -> dict[str, Any]:
    function = {
        "name": tool["name"],
        "description": tool["description"],
        "parameters": tool["input_schema"],
    }
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


class OpenAIJudge:
    """A model behind an OpenAI-compatible Chat Completions API (module docstring)."""

    def __init__(
        self,
        settings: OpenAISettings | None = None,
        *,
        cache_dir: Path | None = None,
        budget: Budget | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        self.settings = settings or OpenAISettings.from_env()
        self.transport = OpenAITransport(
            self.settings, cache_dir=cache_dir, budget=budget, prices=prices
        )
        self.budget = self.transport.budget
        self._tools = [
            _function(t, self.settings.strict_tools) for t in (*TOOL_DEFINITIONS, SUBMIT_TOOL)
        ]

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def judge_id(self) -> str:
        return f"openai:{self.settings.model}"

    @property
    def deterministic(self) -> bool:
        return False

    def fingerprint_fields(self) -> dict[str, Any]:
        s = self.settings
        return {
            "judge": self.judge_id,
            "model": s.model,
            "endpoint": s.endpoint,
            "prompt_version": PROMPT_VERSION,
            "temperature": s.temperature,
            "reasoning_effort": s.reasoning_effort,
            "max_tokens": s.max_tokens,
            "max_turns": s.max_turns,
            "final_tool_choice": "forced" if s.force_final_tool else "auto",
            "strict_tools": s.strict_tools,
            "tool_limits": s.limits.model_dump(),
        }

    def drain_usage(self) -> list[UsageRecord]:
        return self.transport.drain_usage()

    def score(self, request: JudgeRequest) -> list[Verdict]:
        warn_self_preference(log, self.settings.model, request.author_model)
        pool = ThreadPoolExecutor(
            max_workers=self.settings.concurrency, thread_name_prefix="openai-judge"
        )
        try:
            futures = [pool.submit(self.score_check, ac, c, request) for ac, c in request.checks]
            return [f.result() for f in futures]
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def score_check(self, ac: BaselineAC, check: Check, request: JudgeRequest) -> Verdict:
        """One check's verdict; every failure inside it becomes UNSCORED with the reason."""
        reask = False
        if self.settings.rejudge:
            # --rejudge unscored: only a conversation whose stored answers end UNSCORED is
            # asked again (its unusable answers re-sent); the others replay as before.
            dry = RepoTools(request.snapshot, request.diff_paths, self.settings.limits)
            try:
                replayed = self._converse(ac, check, request, dry, prefetch=True)
                reask = replayed.status == "UNSCORED"
            except PendingCallError:
                pass  # never fully answered: asked as usual
        tools = RepoTools(request.snapshot, request.diff_paths, self.settings.limits)
        try:
            return self._converse(ac, check, request, tools, reask=reask)
        except JudgeUnavailableError:
            raise
        except BudgetExceededError:
            return self._unscored(check, request.run, tools, BUDGET_STOP)
        except Exception as exc:
            return self._unscored(
                check, request.run, tools, _failure_reason(exc, self.settings.api_key_env)
            )

    def _unscored(self, check: Check, run: int, tools: RepoTools, reason: str) -> Verdict:
        return unscored_verdict(
            check_id=check.id,
            run=run,
            judge_id=self.judge_id,
            executed=tools.searches,
            reason=reason,
        )

    def request_params(self, messages: list[dict[str, Any]], *, force: bool) -> dict[str, Any]:
        s = self.settings
        params: dict[str, Any] = {
            "model": s.model,
            "messages": messages,
            "tools": self._tools,
            "tool_choice": (
                {"type": "function", "function": {"name": SUBMIT_TOOL_NAME}} if force else "auto"
            ),
            "max_completion_tokens": s.max_tokens,
        }
        if s.strict_tools:
            params["parallel_tool_calls"] = False
        if s.temperature is not None:
            params["temperature"] = s.temperature
        if s.reasoning_effort is not None:
            params["reasoning_effort"] = s.reasoning_effort
        return params

    def _converse(
        self,
        ac: BaselineAC,
        check: Check,
        request: JudgeRequest,
        tools: RepoTools,
        *,
        prefetch: bool = False,
        reask: bool = False,
    ) -> Verdict:
        k = int(request.extra.get("k", DEFAULT_K))
        context = run_context(
            request.diff_paths,
            request.anchors,
            request.test_levels,
            same_family(self.settings.model, request.author_model),
        )
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"{context}\n{check_block(ac, check, request.run, k)}"},
        ]
        retried = False
        problem = ""
        for turn in range(1, self.settings.max_turns + 1):
            last = turn == self.settings.max_turns
            if last:
                messages.append({"role": "user", "content": LAST_TURN_NOTICE})
            force = self.settings.force_final_tool and (retried or last)
            site = CallSite(request.run_key, check.id, request.run, turn)  # no commit: `cache`
            params = self.request_params(list(messages), force=force)
            response = self.transport.call(params, site, prefetch=prefetch, reask=reask)
            choice = response["choices"][0]
            message = choice.get("message") or {}
            messages.append(_assistant_turn(message))
            calls = _calls(message)
            submits = [c for c in calls if c.name == SUBMIT_TOOL_NAME]
            if submits:
                verdict, problem = self._verdict_from(submits[0].arguments, check, request, tools)
                if verdict is not None:
                    return verdict
                self.transport.reject(params, site, problem)
            elif calls:
                messages += [_tool_message(c.id, self._run_tool(c, tools)) for c in calls]
                continue
            else:
                refusal = message.get("refusal")
                problem = (
                    f"the model refused: {' '.join(str(refusal).split())[:200]}"
                    if refusal
                    else f"no submit_verdict call (finish_reason {choice.get('finish_reason')})"
                )
                self.transport.reject(params, site, problem)
            if retried:
                return self._unscored(
                    check, request.run, tools, f"malformed answer twice: {problem}"
                )
            retried = True
            messages += self._retry_messages(calls, problem, tools)
        return self._unscored(
            check,
            request.run,
            tools,
            f"tool loop exhausted: no verdict after {self.settings.max_turns} turns",
        )

    @staticmethod
    def _run_tool(call: _Call, tools: RepoTools) -> ToolResult:
        if call.arguments is None:
            return ToolResult(
                f"error: the arguments of {call.name} are not a JSON object", is_error=True
            )
        return tools.call(call.name, call.arguments)

    def _retry_messages(
        self, calls: list[_Call], problem: str, tools: RepoTools
    ) -> list[dict[str, Any]]:
        """Every call of the rejected turn answered (the API requires it), then the retry."""
        if not calls:
            return [{"role": "user", "content": RETRY_NO_SUBMIT}]
        out = []
        for call in calls:
            if call.name == SUBMIT_TOOL_NAME:
                result = ToolResult(
                    f"error: invalid submit_verdict input: {problem}. Fix it and call "
                    "submit_verdict again.",
                    is_error=True,
                )
            else:
                result = self._run_tool(call, tools)
            out.append(_tool_message(call.id, result))
        return out

    def _verdict_from(
        self, payload: Any, check: Check, request: JudgeRequest, tools: RepoTools
    ) -> tuple[Verdict | None, str]:
        return verdict_from_submission(
            payload,
            check_id=check.id,
            run=request.run,
            judge_id=self.judge_id,
            executed=tools.searches,
        )
