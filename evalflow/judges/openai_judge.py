"""The OpenAI-compatible judge: a second model family over the same read-only repository tools.

Per check it runs the Claude judge's loop (`tool_loop.ToolLoopJudge`, the same code) with the
same text (`prompt`): the system prompt, the run context, the check block, repository answers
inside the untrusted-data delimiters and the last-turn notice. The model calls `list_files` /
`grep` / `read_file` as functions, evalflow answers from the snapshot, and the model ends with
`submit_verdict`. Only evalflow answers
UNSCORED, always with the reason (malformed answer twice, loop exhausted, the per-check spend
cap, an answer cut at the output limit twice, an API failure after retries, "budget stop"), and
every verdict then passes the shared evidence validator like any other judge's. As Claude's, a
scoring run of at least 8 checks stops (exit 2) once most of them have no usable answer.

Transport: the official `openai` SDK, in one of two wire APIs (`EVALFLOW_OPENAI_API`):
- `responses` (the default for api.openai.com): `POST /responses`. The system prompt goes in
  `instructions`; every output item of a turn (reasoning items included, with their
  `encrypted_content`) is passed back in `input` before the `function_call_output` items, so a
  reasoning model keeps its reasoning across tool turns while nothing is stored at OpenAI
  (`store: false`; a `previous_response_id` would need stored responses, and a request that
  carries the whole conversation is also what the response cache is keyed by).
  `prompt_cache_key` names the run context, so the checks and k runs of one framework run reach
  the same prompt cache. The output limit is `max_output_tokens`; a cut answer is
  `status: incomplete` with `incomplete_details.reason: max_output_tokens`.
- `chat` (the default for any other base URL: vLLM, Ollama, llama.cpp, Gemini's
  OpenAI-compatible endpoint): `POST /chat/completions` with `max_completion_tokens`; a cut
  answer is `finish_reason: length`. Such servers do not all know `prompt_cache_key`, so it is
  not sent there.
Both declare the four tools as functions with `strict: true` (their schemas list every property
as required and forbid extra ones, as strict mode demands) and `parallel_tool_calls: false`
(strict schemas are not guaranteed for parallel calls); evalflow still validates every answer.
`tool_choice` is `auto`, and names `submit_verdict` on the last turn and on the retry of a
malformed answer (`EVALFLOW_OPENAI_FORCE_FINAL_TOOL=0` for a server that rejects a named tool
choice). No sampling parameter unless `EVALFLOW_OPENAI_TEMPERATURE` is set: current OpenAI
reasoning models reject `temperature`, while a local model may want 0.
`EVALFLOW_OPENAI_REASONING_EFFORT` is sent when set.

Spend and faults are the Claude judge's, through the same code (`transport.ModelTransport`,
the base of both transports, and `anthropic_judge`'s breaker and limiter registries):
the SDK's own retries are off and redirects are refused (the key never follows one to another
host); each attempt passes the endpoint's `CircuitBreaker` and `RateLimiter` and reserves its
worst case on the shared `Budget` first. A 429 (other than `insufficient_quota`) pauses every
sender behind the limiter with adaptive back-off and `retry-after`, and is retried for up to
`EVALFLOW_OPENAI_MAX_THROTTLE_S` (120 s); 408/409/5xx, timeouts and dropped connections are
retried `EVALFLOW_OPENAI_MAX_RETRIES` (4) times. An attempt lost after the request left may have
been billed: it is recorded at its worst case, `estimated`. The first 400/401/403/404/413/422,
`insufficient_quota`, a redirect or a 200 whose body is not a response (paid, recorded
estimated, and kept in the response cache: a rerun or a step retry stops on it again without
paying, `--rejudge unscored` asks again) stops scoring (`JudgeUnavailableError`, exit 2) with
the status and the API's message; so do `EVALFLOW_OPENAI_BREAKER_FAILURES` (5) consecutive
transient failures or `EVALFLOW_OPENAI_BREAKER_SECONDS` (600) without a success. An answer
cut at the output limit is asked once more with twice the room; a second cut ends the check
UNSCORED. A check's conversation stops UNSCORED once its answers cost
`EVALFLOW_OPENAI_MAX_CHECK_USD` (0.5).

Money: prices come from the shared `prices.yaml` (`EVALFLOW_PRICES` to override). A model
without a row is refused when the judge is built, since neither a cost nor a `--max-cost`
limit could be honoured; a local server is priced by giving it a row of zeros. Input tokens
minus the cached ones are input, the cached ones cache reads (OpenAI-style caching is
automatic: no cache writes), output tokens (reasoning included) output.

Responses are cached under `<cache_dir>/openai` with the same key as Claude's (model, prompt
version, the full request, run index and run key). Every answer is kept: one cut at the output
limit or withheld by a content filter, a refusal or one that failed validation is marked
unusable (`cache.ResponseCache.mark_unusable`) and replayed to the same UNSCORED outcome on an
unchanged re-run (a malformed body, to the same stop); only `--rejudge unscored` (`rejudge`)
asks such a check again.

Configuration: `EVALFLOW_OPENAI_BASE_URL` (default `https://api.openai.com/v1`; Gemini:
`https://generativelanguage.googleapis.com/v1beta/openai`; Ollama: `http://localhost:11434/v1`),
`EVALFLOW_OPENAI_API` (`responses` | `chat`, default by the base URL as above),
`EVALFLOW_OPENAI_MODEL` (`gpt-5.5`), `EVALFLOW_OPENAI_API_KEY_ENV` (the name of the variable
holding the key, default `OPENAI_API_KEY`), `EVALFLOW_OPENAI_MAX_TOKENS` (16000),
`EVALFLOW_OPENAI_CONCURRENCY` (4), `EVALFLOW_OPENAI_MAX_TURNS` (12), `EVALFLOW_OPENAI_MAX_RETRIES`
(4), `EVALFLOW_OPENAI_TIMEOUT` (120 s), `EVALFLOW_OPENAI_REQUESTS_PER_S` (unset),
`EVALFLOW_MAX_COST_USD`. The key is read when the judge is built, handed to the SDK only, and
scrubbed from every reason as a second guard: it never reaches a record, cache entry, log line
or exception message.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import urllib.parse
from abc import abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalflow.errors import InputError
from evalflow.judges.anthropic_judge import (
    _NOT_SENT,
    BREAKERS_DIR,
    CircuitBreaker,
    _retry_after,
    breaker_for,
    limiter_for,
)
from evalflow.judges.base import JudgeRequest
from evalflow.judges.cost import (
    Budget,
    PriceTable,
)
from evalflow.judges.prompt import (
    LAST_TURN_NOTICE,
    PROMPT_VERSION,
    SUBMIT_TOOL_NAME,
    SYSTEM_PROMPT,
)
from evalflow.judges.registry import missing_key
from evalflow.judges.repo_tools import ToolLimits, ToolResult
from evalflow.judges.submission import (
    env_value,
)
from evalflow.judges.tool_loop import CHECK_TOOLS, Answer, Call, Dialect, ToolLoopJudge
from evalflow.judges.transport import Failure, ModelTransport

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
OPENAI_HOST = "api.openai.com"
DEFAULT_MODEL = "gpt-5.5"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
WireAPI = Literal["responses", "chat"]
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]
# Why an answer is of no use (cut at the output limit, withheld): kept, marked unusable.
_CUT = frozenset({"length", "max_output_tokens"})
_WITHHELD = frozenset({"content_filter"})
_FATAL_STATUS = frozenset({400, 401, 403, 404, 413, 422})
_RETRY_STATUS = frozenset({408, 409})


class OpenAISettings(BaseModel):
    """Every knob of the OpenAI-compatible judge, with its documented default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = DEFAULT_BASE_URL
    api: WireAPI | None = Field(
        default=None, description="None: responses on api.openai.com, chat elsewhere"
    )
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
    max_check_usd: float | None = Field(
        default=0.5, gt=0, description="what one check's conversation may cost"
    )
    max_throttle_s: float = Field(
        default=120.0, gt=0, description="how long one call keeps retrying 429s"
    )
    requests_per_s: float | None = Field(default=None, gt=0, description="token-bucket rate")

    @classmethod
    def from_env(cls, **overrides: Any) -> OpenAISettings:
        """Defaults, then the EVALFLOW_OPENAI_* / EVALFLOW_MAX_COST_USD variables, then
        `overrides` (a bad value is an InputError naming the variable)."""
        variables = {
            "base_url": "EVALFLOW_OPENAI_BASE_URL",
            "api": "EVALFLOW_OPENAI_API",
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
            "max_check_usd": "EVALFLOW_OPENAI_MAX_CHECK_USD",
            "max_throttle_s": "EVALFLOW_OPENAI_MAX_THROTTLE_S",
            "requests_per_s": "EVALFLOW_OPENAI_REQUESTS_PER_S",
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
    def wire_api(self) -> WireAPI:
        """The API spoken: as set, else Responses where OpenAI itself serves, else Chat
        Completions (what every OpenAI-compatible server speaks)."""
        if self.api is not None:
            return self.api
        host = urllib.parse.urlsplit(self.base_url).hostname
        return "responses" if host == OPENAI_HOST else "chat"

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
        raise missing_key(
            settings.api_key_env,
            "--judge openai",
            " (or name the variable that holds it in EVALFLOW_OPENAI_API_KEY_ENV; a local "
            "server without keys takes any value)",
        )
    return key


class OpenAIAPIError(Exception):
    """A failed call, already classified; `reason` is one line, scrubbed of the key."""

    def __init__(
        self,
        reason: str,
        *,
        status: int | None,
        fatal: bool = False,
        retry: bool = False,
        throttle: bool = False,
        lost: bool = False,
        malformed: bool = False,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.fatal = fatal
        self.retry = retry
        self.throttle = throttle
        self.lost = lost  # the request left: the API may have answered and billed it
        self.malformed = malformed  # a 200 whose body is not an answer: kept in the cache
        self.retry_after_s = retry_after_s


class _Breaker(CircuitBreaker):
    """The Claude judge's breaker, fed with this transport's failures (fatal or transient)."""

    def classify(self, exc: BaseException) -> tuple[str, bool, bool]:
        if not isinstance(exc, OpenAIAPIError):
            # Not an answer from the API (an interrupt, a local error): nothing to count.
            return "", False, False
        return exc.reason, exc.fatal, not exc.fatal


def shared_breaker(settings: OpenAISettings, key: str, cache_dir: Path | None) -> _Breaker:
    """The endpoint's breaker, from the one registry every LLM backend shares, with its state
    in `<cache_dir>/breakers` for every process of the warehouse (as Claude's)."""
    breaker = breaker_for(
        settings.endpoint,
        key,
        settings.breaker_failures,
        settings.breaker_seconds,
        _Breaker,
        state_dir=None if cache_dir is None else cache_dir / BREAKERS_DIR,
    )
    return cast(_Breaker, breaker)


def _scrub(text: str, key_env: str) -> str:
    key = env_value(key_env)
    if key:
        text = text.replace(key, "[redacted]")
    return " ".join(text.split())[:400]


def classify(exc: Exception, key_env: str) -> OpenAIAPIError:
    """An SDK exception as this transport handles it (module docstring)."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        error = exc.body if isinstance(exc.body, dict) else {}
        error = error.get("error", error) if isinstance(error.get("error"), dict) else error
        message = str(error.get("message") or exc.message or "")
        code = str(error.get("code") or error.get("type") or "")
        quota = status == 429 and code == "insufficient_quota"
        reason = f"API failure: HTTP {status}{f' {code}' if code else ''}: {message}"
        return OpenAIAPIError(
            _scrub(reason.rstrip(": "), key_env),
            status=status,
            # A redirect is refused (the key must not follow it): the base URL is wrong.
            fatal=status in _FATAL_STATUS or quota or 300 <= status < 400,
            retry=not quota and (status in _RETRY_STATUS or status >= 500),
            throttle=status == 429 and not quota,
            retry_after_s=_retry_after(exc),
        )
    if isinstance(exc, openai.APIConnectionError):
        what = (
            "timed out"
            if isinstance(exc, openai.APITimeoutError)
            else f"connection error ({type(exc.__cause__ or exc).__name__})"
        )
        return OpenAIAPIError(
            f"API failure: request {what}",
            status=None,
            retry=True,
            lost=type(exc.__cause__).__name__ not in _NOT_SENT,
        )
    raise exc


def _make_client(settings: OpenAISettings, key: str) -> openai.OpenAI:
    """The SDK client: evalflow retries itself (every attempt budgeted and recorded), and a
    redirect is an error, never followed with the key."""
    import openai

    return openai.OpenAI(
        api_key=key,
        base_url=settings.base_url,
        timeout=settings.timeout_s,
        max_retries=0,
        http_client=openai.DefaultHttpxClient(follow_redirects=False),
    )


def _call(ident: str, name: Any, raw_arguments: Any) -> Call:
    """A function call; arguments that are not a JSON object are answered with an error."""
    try:
        arguments = json.loads(raw_arguments or "")
    except (TypeError, ValueError):
        arguments = None
    parsed = isinstance(arguments, dict)
    return Call(ident, str(name or ""), arguments if parsed else None, parsed)


class _Wire(Dialect):
    """What differs between the two wire APIs; the judge's loop is the same over both."""

    max_field: str

    def __init__(self, settings: OpenAISettings) -> None:
        self.settings = settings

    @abstractmethod
    def create(self, client: openai.OpenAI, params: dict[str, Any]) -> Any:
        """Send `params` through the SDK: its raw response."""

    @abstractmethod
    def body(self, raw: Any) -> dict[str, Any]:
        """The raw response as a dict, or a fatal OpenAIAPIError (`_parsed`)."""

    @abstractmethod
    def tool_output(self, call_id: str, text: str) -> dict[str, Any]:
        """One tool call's answer."""

    @abstractmethod
    def tokens(self, response: dict[str, Any]) -> tuple[int, int, int]:
        """(input tokens, of which cached, output tokens)."""

    @abstractmethod
    def stop(self, response: dict[str, Any]) -> str | None:
        """Why the answer ended early: length / max_output_tokens / content_filter."""

    def user(self, text: str) -> dict[str, Any]:
        return {"role": "user", "content": text}

    def announce_last(self, conversation: list[dict[str, Any]]) -> None:
        conversation.append(self.user(LAST_TURN_NOTICE))

    def tool_turn(self, results: list[tuple[str, ToolResult]]) -> list[dict[str, Any]]:
        return [self.tool_output(i, r.text) for i, r in results]

    def user_turn(self, text: str) -> list[dict[str, Any]]:
        return [self.user(text)]

    def _answer(
        self, calls: list[Call], refusal: str | None, response: dict[str, Any], items: list[Any]
    ) -> Answer:
        stop = self.stop(response)
        no_submit = (
            f"the model refused: {' '.join(refusal.split())[:200]}"
            if refusal
            else f"no submit_verdict call (stopped: {stop or 'completed'})"
        )
        return Answer(calls, items, no_submit, refusal)

    def _common(self) -> dict[str, Any]:
        s = self.settings
        params: dict[str, Any] = {"model": s.model, self.max_field: s.max_tokens}
        if s.strict_tools:
            params["parallel_tool_calls"] = False
        if s.temperature is not None:
            params["temperature"] = s.temperature
        return params


def _parsed(raw: Any, shape_ok: Any, what: str, key_env: str) -> dict[str, Any]:
    """The response as a dict, or a fatal OpenAIAPIError saying what the body was (it was
    paid: `lost`, so recorded at its worst case)."""
    try:
        body = raw.parse().model_dump(mode="json", exclude_none=True)
        ok = isinstance(body, dict) and shape_ok(body)
    except Exception:
        body, ok = None, False
    if not ok:
        try:
            text = str(raw.text)
        except Exception:
            text = "(body unreadable)"
        raise OpenAIAPIError(
            _scrub(f"API failure: the body is not {what}: {text[:200]}", key_env),
            status=200,
            fatal=True,
            lost=True,
            malformed=True,
        )
    return cast(dict[str, Any], body)


class _Chat(_Wire):
    max_field = "max_completion_tokens"

    def __init__(self, settings: OpenAISettings) -> None:
        super().__init__(settings)
        self.tools = [_chat_function(t, settings.strict_tools) for t in CHECK_TOOLS]

    def create(self, client: openai.OpenAI, params: dict[str, Any]) -> Any:
        return client.chat.completions.with_raw_response.create(**params)

    def body(self, raw: Any) -> dict[str, Any]:
        def ok(body: dict[str, Any]) -> bool:
            choices = body.get("choices")
            return bool(choices) and isinstance(choices[0].get("message"), dict)

        return _parsed(raw, ok, "a chat completion", self.settings.api_key_env)

    def start(self, context: str, block: str) -> list[dict[str, Any]]:
        return [{"role": "system", "content": SYSTEM_PROMPT}, self.user(f"{context}\n{block}")]

    def params(
        self, conversation: list[dict[str, Any]], *, force: bool, context: str
    ) -> dict[str, Any]:
        params = {
            **self._common(),
            "messages": conversation,
            "tools": self.tools,
            "tool_choice": (
                {"type": "function", "function": {"name": SUBMIT_TOOL_NAME}} if force else "auto"
            ),
        }
        if self.settings.reasoning_effort is not None:
            params["reasoning_effort"] = self.settings.reasoning_effort
        return params

    def read(self, response: dict[str, Any]) -> Answer:
        choice = response["choices"][0]
        message = choice.get("message") or {}
        raw_calls = message.get("tool_calls") or []
        calls = [
            _call(
                str(c.get("id") or f"call_{i}"),
                (c.get("function") or {}).get("name"),
                (c.get("function") or {}).get("arguments"),
            )
            for i, c in enumerate(raw_calls)
        ]
        turn: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
        if raw_calls:
            turn["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": (raw.get("function") or {}).get("name"),
                        "arguments": (raw.get("function") or {}).get("arguments"),
                    },
                }
                for call, raw in zip(calls, raw_calls, strict=True)
            ]
        return self._answer(calls, message.get("refusal"), response, [turn])

    def tool_output(self, call_id: str, text: str) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": call_id, "content": text}

    def tokens(self, response: dict[str, Any]) -> tuple[int, int, int]:
        usage = response.get("usage") or {}
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
        return (
            int(usage.get("prompt_tokens") or 0),
            int(cached or 0),
            int(usage.get("completion_tokens") or 0),
        )

    def stop(self, response: dict[str, Any]) -> str | None:
        finish = response["choices"][0].get("finish_reason")
        return finish if finish in _CUT | _WITHHELD else None


class _Responses(_Wire):
    max_field = "max_output_tokens"

    def __init__(self, settings: OpenAISettings) -> None:
        super().__init__(settings)
        self.tools = [_responses_function(t, settings.strict_tools) for t in CHECK_TOOLS]

    def create(self, client: openai.OpenAI, params: dict[str, Any]) -> Any:
        return client.responses.with_raw_response.create(**params)

    def body(self, raw: Any) -> dict[str, Any]:
        def ok(body: dict[str, Any]) -> bool:
            return isinstance(body.get("output"), list) and isinstance(body.get("usage"), dict)

        return _parsed(raw, ok, "a response", self.settings.api_key_env)

    def start(self, context: str, block: str) -> list[dict[str, Any]]:
        return [self.user(f"{context}\n{block}")]

    def params(
        self, conversation: list[dict[str, Any]], *, force: bool, context: str
    ) -> dict[str, Any]:
        params = {
            **self._common(),
            "instructions": SYSTEM_PROMPT,
            "input": conversation,
            "tools": self.tools,
            "tool_choice": {"type": "function", "name": SUBMIT_TOOL_NAME} if force else "auto",
            # Stateless: reasoning travels back encrypted in `input`, nothing is kept at OpenAI.
            "store": False,
            "include": ["reasoning.encrypted_content"],
            # One key per run context: its checks and k runs share one prompt-cache prefix.
            "prompt_cache_key": "evalflow-"
            + hashlib.sha256(f"{self.settings.model}\0{context}".encode()).hexdigest()[:32],
        }
        if self.settings.reasoning_effort is not None:
            params["reasoning"] = {"effort": self.settings.reasoning_effort}
        return params

    def read(self, response: dict[str, Any]) -> Answer:
        items = [i for i in response["output"] if isinstance(i, dict)]
        calls = [
            _call(str(i.get("call_id") or ""), i.get("name"), i.get("arguments"))
            for i in items
            if i.get("type") == "function_call"
        ]
        refusals = [
            str(part.get("refusal"))
            for i in items
            if i.get("type") == "message"
            for part in i.get("content") or []
            if isinstance(part, dict) and part.get("type") == "refusal"
        ]
        # Every output item goes back as it arrived, reasoning first: the model's own turn.
        return self._answer(calls, refusals[0] if refusals else None, response, items)

    def tool_output(self, call_id: str, text: str) -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": call_id, "output": text}

    def tokens(self, response: dict[str, Any]) -> tuple[int, int, int]:
        usage = response.get("usage") or {}
        cached = (usage.get("input_tokens_details") or {}).get("cached_tokens")
        return (
            int(usage.get("input_tokens") or 0),
            int(cached or 0),
            int(usage.get("output_tokens") or 0),
        )

    def stop(self, response: dict[str, Any]) -> str | None:
        if response.get("status") != "incomplete":
            return None
        reason = (response.get("incomplete_details") or {}).get("reason")
        return reason if reason in _CUT | _WITHHELD else "incomplete"


def _chat_function(tool: dict[str, Any], strict: bool) -> dict[str, Any]:
    function = {
        "name": tool["name"],
        "description": tool["description"],
        "parameters": tool["input_schema"],
    }
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def _responses_function(tool: dict[str, Any], strict: bool) -> dict[str, Any]:
    return {"type": "function", **_chat_function(tool, strict)["function"]}


def _failure_reason(exc: Exception, key_env: str) -> str:
    if isinstance(exc, OpenAIAPIError):
        return exc.reason
    text = f"judge error: {type(exc).__name__}: {exc}"
    if isinstance(exc, InputError):
        text = f"judge error: {exc.one_line()}"
    return _scrub(text, key_env)


class OpenAITransport(ModelTransport):
    """One model behind one OpenAI-compatible endpoint: the SDK client and the wire API; the
    response cache, budget, breaker, rate limiter, retries and usage records are the shared
    `transport.ModelTransport`'s, as for Claude."""

    def __init__(
        self,
        settings: OpenAISettings,
        *,
        cache_dir: Path | None = None,
        budget: Budget | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        super().__init__(
            settings,
            prompt_version=PROMPT_VERSION,
            cache_dir=cache_dir,
            cache_name="openai",
            budget=budget,
            prices=prices,
        )
        key = api_key(settings)
        self.wire: _Wire = (_Responses if settings.wire_api == "responses" else _Chat)(settings)
        self.max_field = self.wire.max_field
        self.client = _make_client(settings, key)
        self.settings: OpenAISettings = settings
        self.breaker = shared_breaker(settings, key, cache_dir)
        self.limiter = limiter_for(settings.endpoint, settings.requests_per_s)

    def _create(self, params: dict[str, Any]) -> Any:
        try:
            return self.wire.create(self.client, params)
        except Exception as exc:
            raise classify(exc, self.settings.api_key_env) from None

    def _body(self, raw: Any) -> dict[str, Any]:
        return self.wire.body(raw)

    def _failure(self, exc: BaseException) -> Failure:
        if not isinstance(exc, OpenAIAPIError):
            return Failure()  # not an answer from the API (an interrupt, a local error)
        return Failure(
            lost=exc.lost,
            throttle=exc.throttle,
            retry=exc.retry or exc.throttle,
            retry_after_s=exc.retry_after_s,
            malformed=exc.reason if exc.malformed else None,
        )

    def cut(self, response: dict[str, Any]) -> bool:
        return self.wire.stop(response) in _CUT

    def _unusable(self, response: dict[str, Any]) -> str | None:
        if (stop := self.wire.stop(response)) is not None:
            return f"stopped: {stop}"
        return "refusal" if self.wire.read(response).refusal else None

    def _tokens(self, response: dict[str, Any]) -> dict[str, int]:
        """Input tokens minus the cached ones are input, the cached ones cache reads (caching
        is automatic: no writes), output (reasoning included) output."""
        prompt, cached, output = self.wire.tokens(response)
        return {
            "input_tokens": max(0, prompt - cached),
            "output_tokens": output,
            "cache_read_tokens": min(cached, prompt),
            "cache_write_tokens": 0,
        }


class OpenAIJudge(ToolLoopJudge):
    """A model behind an OpenAI-compatible API, Responses or Chat Completions (module
    docstring); the per-check loop is the shared `tool_loop.ToolLoopJudge`, written in the
    wire API's items here."""

    spend_cap_env = "EVALFLOW_OPENAI_MAX_CHECK_USD"
    thread_prefix = "openai-judge"

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
        self.wire = self.dialect = self.transport.wire
        self.force_final_tool = self.settings.force_final_tool
        self._stop = threading.Event()  # set by `score` once most checks are unusable
        self._log = log

    @property
    def judge_id(self) -> str:
        return f"openai:{self.settings.model}"

    def _backend_fields(self) -> dict[str, Any]:
        s = self.settings
        return {
            "endpoint": s.endpoint,
            "api": s.wire_api,
            "temperature": s.temperature,
            "reasoning_effort": s.reasoning_effort,
        }

    def _prefetch(self, request: JudgeRequest) -> None:
        """Nothing is fetched ahead: no batch API here."""

    def _failure_reason(self, exc: Exception) -> str:
        return _failure_reason(exc, self.settings.api_key_env)
