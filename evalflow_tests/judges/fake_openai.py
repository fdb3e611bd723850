"""A fake OpenAI API on 127.0.0.1 for tests (no network): Chat Completions and Responses.

`FakeOpenAI` is a real HTTP server (http.server in a thread) the OpenAI judge talks to through
its base URL. `POST /v1/chat/completions` and `POST /v1/responses` answer from one scripted
`responder(turn)`, which sees the conversation in either shape through `Turn`:
- `Reply`: an assistant message (tool calls and/or text, Chat-shaped) with a finish reason.
  On /v1/responses it becomes a reasoning item (with `encrypted_content`, so a test can see it
  come back), `function_call` items and a `message`; finish reason `length` is
  `status: incomplete` with `incomplete_details.reason: max_output_tokens`. Usage is computed
  from the request: prompt tokens from its size, and cached tokens as automatic prefix caching
  gives them (the longest prefix of messages or input items this server has already seen,
  counted only from 1024 tokens on and in steps of 128);
- `Fail`: an error status with an OpenAI-style error body (401, 429 storms, 5xx...);
- `Hang`: the answer comes after `seconds` (longer than the client's timeout);
- `Malformed`: a 200 whose body is not JSON (billed, like the real API's);
- `Lost`: answered and billed, then the connection drops before the body is sent.
`fail_next` scripts failures ahead of the responder. A request without `Authorization:
Bearer <key>` (or, with `expected_key`, another key) gets a 401 like the real API. Every
received request body (and its headers, for secret checks) is recorded.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from evalflow.judges.cost import ModelPrice, PriceTable
from evalflow.judges.openai_judge import OpenAIJudge, OpenAISettings

_OUTPUT_ITEMS = frozenset({"reasoning", "function_call", "message"})
_CHECK = re.compile(r"## Check (\S+) \(")
_RUN = re.compile(r"# Scoring run (\d+) of")
_PROPOSITION = re.compile(r"## Check \S+ \([^)]*\)\n(.+)")

TEST_KEY = "sk-proj-EVALFLOW-OPENAI-TEST-SECRET-7d2e"
TEST_MODEL = "gpt-5.5"
_ROUND = ModelPrice(input=2.0, output=8.0, cache_write=2.0, cache_read=0.5)
TEST_PRICES = PriceTable(as_of=date(2026, 11, 30), models={TEST_MODEL: _ROUND})


@dataclass
class Reply:
    message: dict[str, Any]
    finish_reason: str = "tool_calls"
    completion_tokens: int = 150


@dataclass
class Fail:
    status: int
    error_type: str = "rate_limit_error"
    message: str = "Rate limit reached"
    code: str | None = None


@dataclass
class Hang:
    seconds: float


@dataclass
class Malformed:
    body: bytes = b'{"id": "chatcmpl-x", "choices": [{"message": '
    completion_tokens: int = 120


@dataclass
class Lost:
    completion_tokens: int = 120


@dataclass
class Turn:
    """What the responder sees: the request and where it sits in its conversation."""

    body: dict[str, Any]
    check_id: str
    run: int
    turn: int
    proposition: str

    @property
    def responses(self) -> bool:
        return "input" in self.body

    def tool_results(self) -> list[str]:
        """The tool answers since the last assistant turn."""
        out: list[str] = []
        for item in reversed(self.body.get("messages") or self.body.get("input") or []):
            if item.get("role") == "assistant" or item.get("type") in _OUTPUT_ITEMS:
                break
            if item.get("role") == "tool" or item.get("type") == "function_call_output":
                out.insert(0, item.get("content") or item.get("output"))
        return out


Responder = Callable[[Turn], "Reply | Fail | Hang | Malformed | Lost"]


def tool_call(name: str, arguments: dict[str, Any], turn: Turn, index: int = 0) -> dict[str, Any]:
    """A function call with an id stable for (check, run, turn, index)."""
    ident = f"call_{turn.check_id}_{turn.run}_{turn.turn}_{index}".replace("-", "_")
    return {
        "id": ident,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def calls(*items: dict[str, Any]) -> Reply:
    return Reply({"role": "assistant", "content": None, "tool_calls": list(items)})


def submit(
    turn: Turn,
    status: str,
    evidence: list[dict[str, Any]] | None = None,
    searches: list[dict[str, Any]] | None = None,
    rationale: str = "scripted",
) -> Reply:
    payload = {
        "evidence": evidence or [],
        "searches": searches or [],
        "rationale": rationale,
        "status": status,
    }
    return calls(tool_call("submit_verdict", payload, turn, 9))


_WORD = re.compile(r"[A-Za-z][A-Za-z_]{4,}")
_HIT = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+): (?P<text>.*)$", re.MULTILINE)
_MEANINGFUL = re.compile(r"(?=.*\w)\S.*\S.*\S")


def grep_then_cite(turn: Turn) -> Reply:
    """Turn 1: grep the check's longest word; turn 2: MET citing the first meaningful hit
    (a test file's hit for a T-check), else UNMET with the search. Deterministic."""
    words = sorted(_WORD.findall(turn.proposition), key=lambda w: (-len(w), w))
    word = words[0] if words else "def"
    pattern = f"(?i){re.escape(word)}"
    if turn.turn == 1:
        return calls(tool_call("grep", {"pattern": pattern, "path_glob": "**"}, turn))
    answer = "\n".join(turn.tool_results())
    hits = list(_HIT.finditer(answer))
    test = turn.check_id.split("-")[-1].startswith("T")
    for hit in hits:
        in_test = "test" in hit["path"].lower()
        if in_test == test and _MEANINGFUL.search(hit["text"]):
            line = int(hit["line"])
            return submit(
                turn,
                "MET",
                evidence=[
                    {
                        "path": hit["path"],
                        "start_line": line,
                        "end_line": line,
                        "quote": hit["text"].strip(),
                    }
                ],
                searches=[{"pattern": pattern, "scope": "**", "hits": len(hits)}],
                rationale=f"{hit['path']}:{line} shows it",
            )
    return submit(
        turn,
        "UNMET",
        searches=[{"pattern": pattern, "scope": "**", "hits": len(hits)}],
        rationale="no matching code",
    )


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass
class FakeOpenAI:
    """The fake API server (use as a context manager)."""

    responder: Responder
    expected_key: str | None = None
    fail_next: list[Fail | Hang | Malformed | Lost] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    usages: list[dict[str, Any]] = field(default_factory=list)
    failures_served: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._prefixes: set[str] = set()
        self._counter = 0
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.01,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _usage(self, body: dict[str, Any], completion: int) -> dict[str, Any]:
        """Prompt tokens from the request's size; cached tokens from automatic prefix caching
        (longest already-seen prefix of tools + messages, >= 1024 tokens, steps of 128)."""
        head = _canonical(
            {
                "model": body.get("model"),
                "tools": body.get("tools"),
                "instructions": body.get("instructions"),
            }
        )
        digest = hashlib.sha256(head.encode())
        sizes = [len(head)]
        hashes = []
        for message in body.get("messages") or body.get("input") or []:
            text = _canonical(message)
            digest.update(text.encode())
            sizes.append(sizes[-1] + len(text))
            hashes.append(digest.hexdigest())
        prompt = math.ceil(sizes[-1] / 4)
        with self._lock:
            seen = [i for i, h in enumerate(hashes) if h in self._prefixes]
            self._prefixes.update(hashes)
        cached = math.ceil(sizes[max(seen) + 1] / 4) if seen else 0
        cached = (cached // 128) * 128 if cached >= 1024 else 0
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": min(cached, prompt)},
            "completion_tokens_details": {"reasoning_tokens": 0},
        }

    def answer(self, body: dict[str, Any]) -> Reply | Fail | Hang | Malformed | Lost:
        with self._lock:
            self.requests.append(body)
            scripted = self.fail_next.pop(0) if self.fail_next else None
            if scripted is not None:
                self.failures_served += 1
        if scripted is not None:
            return scripted
        items = body.get("messages") or body.get("input") or []
        user = next((m["content"] for m in items if m.get("role") == "user"), "")
        check = _CHECK.search(user)
        run = _RUN.search(user)
        proposition = _PROPOSITION.search(user)
        # An assistant turn: a Chat message, or the first output item of a Responses turn.
        kinds = [m.get("type") or m.get("role") for m in items]
        turns = sum(
            1
            for i, kind in enumerate(kinds)
            if kind == "assistant"
            or (kind in _OUTPUT_ITEMS and (i == 0 or kinds[i - 1] not in _OUTPUT_ITEMS))
        )
        turn = Turn(
            body=body,
            check_id=check.group(1) if check else "",
            run=int(run.group(1)) if run else 1,
            turn=turns + 1,
            proposition=proposition.group(1) if proposition else "",
        )
        return self.responder(turn)

    def response(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        """A Responses API answer: the Chat-shaped reply as output items."""
        chat = self._usage(body, reply.completion_tokens)
        with self._lock:
            self._counter += 1
            ident = f"resp_{self._counter:06d}"
            self.usages.append(chat)
        output: list[dict[str, Any]] = [
            {
                "type": "reasoning",
                "id": f"rs_{self._counter:06d}",
                "summary": [],
                "encrypted_content": f"enc-{self._counter:06d}",
            }
        ]
        message = reply.message
        if message.get("content") or message.get("refusal"):
            part = (
                {"type": "refusal", "refusal": message["refusal"]}
                if message.get("refusal")
                else {"type": "output_text", "text": message["content"], "annotations": []}
            )
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{self._counter:06d}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [part],
                }
            )
        for call in message.get("tool_calls") or []:
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{call['id']}",
                    "call_id": call["id"],
                    "name": call["function"]["name"],
                    "arguments": call["function"]["arguments"],
                    "status": "completed",
                }
            )
        cut = {"length": "max_output_tokens", "content_filter": "content_filter"}
        reason = cut.get(reply.finish_reason)
        return {
            "id": ident,
            "object": "response",
            "created_at": 1764547200,
            "model": body["model"],
            "status": "incomplete" if reason else "completed",
            "incomplete_details": {"reason": reason} if reason else None,
            "output": output,
            "parallel_tool_calls": bool(body.get("parallel_tool_calls", True)),
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
            "usage": {
                "input_tokens": chat["prompt_tokens"],
                "input_tokens_details": {
                    "cached_tokens": chat["prompt_tokens_details"]["cached_tokens"]
                },
                "output_tokens": chat["completion_tokens"],
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": chat["total_tokens"],
            },
        }

    def bill(self, body: dict[str, Any], completion_tokens: int) -> None:
        """An answer that never reaches the client whole (`Malformed`, `Lost`) is billed."""
        usage = self._usage(body, completion_tokens)
        with self._lock:
            self.usages.append(usage)

    def completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        usage = self._usage(body, reply.completion_tokens)
        with self._lock:
            self._counter += 1
            ident = f"chatcmpl-{self._counter:06d}"
            self.usages.append(usage)
        return {
            "id": ident,
            "object": "chat.completion",
            "created": 1764547200,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": None, **reply.message},
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": usage,
        }


def hand_cost(usages: list[dict[str, Any]], price: ModelPrice = _ROUND) -> float:
    """Dollars of the fake server's usages, computed by hand from the price row."""
    total = 0.0
    for u in usages:
        cached = u["prompt_tokens_details"]["cached_tokens"]
        total += (
            (u["prompt_tokens"] - cached) * price.input
            + cached * price.cache_read
            + u["completion_tokens"] * price.output
        )
    return total / 1_000_000


def openai_judge(fake: FakeOpenAI, cache_dir: Path | None, **settings: Any) -> OpenAIJudge:
    """An OpenAI judge pointed at the fake server, with round test prices (the caller sets
    the key variable, OPENAI_API_KEY unless `api_key_env` says otherwise)."""
    return OpenAIJudge(
        OpenAISettings(**{"base_url": fake.base_url, "timeout_s": 20.0, **settings}),
        cache_dir=cache_dir,
        prices=TEST_PRICES,
    )


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that timed out (`Hang`) has gone when the answer is written: expected."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_fake: FakeOpenAI

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    def _send(self, status: int, body: bytes, **headers: str) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.send_header("x-request-id", f"req_{threading.get_ident()}_{time.monotonic_ns()}")
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, error_type: str, message: str, code: str | None) -> None:
        payload = {"error": {"message": message, "type": error_type, "param": None, "code": code}}
        extra = {"retry_after_ms": "1"} if status == 429 or status >= 500 else {}
        if 300 <= status < 400:  # a redirect to another path of this server
            extra = {"location": "/v1/elsewhere"}
        self._send(status, json.dumps(payload).encode(), **extra)

    def do_POST(self) -> None:
        fake = self.server_fake
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with fake._lock:
            fake.headers.append({k.lower(): v for k, v in self.headers.items()})
        auth = self.headers.get("authorization") or ""
        key = auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else ""
        if not key or (fake.expected_key is not None and key != fake.expected_key):
            with fake._lock:
                fake.requests.append(body)
            shown = f"{key[:3]}***{key[-4:]}" if key else "(none)"
            self._error(
                401,
                "invalid_request_error",
                f"Incorrect API key provided: {shown}",
                "invalid_api_key",
            )
            return
        path = self.path.split("?", 1)[0]
        if path not in {"/v1/chat/completions", "/v1/responses"}:
            self._error(404, "invalid_request_error", f"Unknown path {self.path}", None)
            return
        outcome = fake.answer(body)
        if isinstance(outcome, Hang):
            time.sleep(outcome.seconds)
            outcome = Fail(504, "server_error", "gateway timeout")
        if isinstance(outcome, Malformed | Lost):
            fake.bill(body, outcome.completion_tokens)
        if isinstance(outcome, Lost):
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        elif isinstance(outcome, Malformed):
            self._send(200, outcome.body)
        elif isinstance(outcome, Fail):
            self._error(outcome.status, outcome.error_type, outcome.message, outcome.code)
        elif path == "/v1/responses":
            self._send(200, json.dumps(fake.response(body, outcome)).encode())
        else:
            self._send(200, json.dumps(fake.completion(body, outcome)).encode())
