"""A fake Anthropic Messages API on 127.0.0.1 for tests and the judge benchmark (no network).

`FakeAnthropic` is a real HTTP server (http.server in a thread) that the official SDK talks to
through `base_url`. It serves:
- `POST /v1/messages`: the reply comes from a scripted `responder(turn) -> Reply | Fail`;
  usage is computed from the request by `PromptCacheModel`, which models prompt caching from
  the `cache_control` breakpoints the request really carries (prefix hashes in order tools →
  system → tool_choice → messages, the minimum cacheable length, a 5-minute TTL), so cache
  reads/writes are what such a request would get, not numbers typed into the test;
- the Message Batches endpoints: create, retrieve (ends after `batch_polls_before_end` polls),
  results (JSONL), cancel; an unknown batch id is a 404. Batched requests are answered by the
  same responder: all at creation, or `batch_items_per_poll` per retrieve (so a cancelled
  batch has succeeded and canceled results, like the real API). `batch_billed` counts how
  often each custom_id was processed (= billed): a resumed run must not raise it.
Scripted failures (`fail_next`) return e.g. a 529 `overloaded_error` with `retry-after-ms`.
Misbehaviour a responder can return besides a `Reply` or a `Fail` (429/529 storms, 413): `Lost`
(the request is answered and billed, then the connection drops before the body is sent) and
`Malformed` (a billed 200 whose body is not a Message). `usages` holds what was billed, so
`hand_cost(fake.usages)` is the dollars billed, to compare with what evalflow recorded.
Requests without an `Authorization`/`X-Api-Key` header get a 401, like the real API.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from evalflow.domain.models import Anchor, BaselineAC, Check
from evalflow.judges.anthropic_judge import ClaudeJudge, ClaudeSettings
from evalflow.judges.base import JudgeRequest
from evalflow.judges.cost import ModelPrice, PriceTable
from evalflow.repo.snapshot import RepoSnapshot, SourceFile

_CHECK = re.compile(r"## Check (\S+) \(")
_RUN = re.compile(r"# Scoring run (\d+) of")


@dataclass
class Reply:
    content: list[dict[str, Any]]
    stop_reason: str = "tool_use"
    output_tokens: int = 120


@dataclass
class Fail:
    status: int
    error_type: str = "overloaded_error"
    message: str = "Overloaded"


@dataclass
class Lost:
    """Answered and billed, but the connection is dropped before the response is sent."""

    output_tokens: int = 120


@dataclass
class Malformed:
    """A billed 200 whose body is not a Message."""

    body: bytes = b'{"type": "message", "content": "truncat'
    output_tokens: int = 120


@dataclass
class Turn:
    """What the responder sees: the request and where it sits in its conversation."""

    body: dict[str, Any]
    check_id: str
    run: int
    turn: int
    batch: bool = False

    @property
    def last_user_blocks(self) -> list[dict[str, Any]]:
        content = self.body["messages"][-1]["content"]
        return content if isinstance(content, list) else [{"type": "text", "text": content}]

    def tool_results(self) -> list[dict[str, Any]]:
        return [b for b in self.last_user_blocks if b.get("type") == "tool_result"]


Responder = Callable[[Turn], "Reply | Fail | Lost | Malformed"]


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(name: str, arguments: dict[str, Any], turn: Turn, index: int = 0) -> dict[str, Any]:
    """A tool_use block with an id that is stable for (check, run, turn, index)."""
    ident = f"toolu_{turn.check_id}_{turn.run}_{turn.turn}_{index}".replace("-", "_")
    return {"type": "tool_use", "id": ident, "name": name, "input": arguments}


def submit(
    turn: Turn,
    status: str,
    evidence: list[dict[str, Any]] | None = None,
    searches: list[dict[str, Any]] | None = None,
    rationale: str = "scripted",
) -> Reply:
    payload = {
        "status": status,
        "evidence": evidence or [],
        "searches": searches or [],
        "rationale": rationale,
    }
    return Reply([tool_use("submit_verdict", payload, turn, 9)], "tool_use", 180)


def _canonical(block: Any) -> str:
    if isinstance(block, dict):
        block = {k: v for k, v in block.items() if k != "cache_control"}
    return json.dumps(block, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class PromptCacheModel:
    """Prompt caching as the API describes it, computed from the request's breakpoints."""

    def __init__(
        self, min_tokens: int = 1024, chars_per_token: float = 4.0, ttl_s: float = 300.0
    ) -> None:
        self.min_tokens = min_tokens
        self.chars_per_token = chars_per_token
        self.ttl_s = ttl_s
        self._entries: dict[str, float] = {}
        self._lock = threading.Lock()

    def tokens(self, block: Any) -> int:
        return math.ceil(len(_canonical(block)) / self.chars_per_token)

    def _blocks(self, body: dict[str, Any]) -> list[tuple[str, int, bool]]:
        out: list[tuple[str, int, bool]] = []
        for tool in body.get("tools") or []:
            out.append((_canonical(tool), self.tokens(tool), "cache_control" in tool))
        system = body.get("system") or []
        if isinstance(system, str):
            system = [{"type": "text", "text": system}]
        for block in system:
            out.append((_canonical(block), self.tokens(block), "cache_control" in block))
        # A different tool_choice invalidates the cached message prefix (not tools/system).
        out.append((_canonical({"tool_choice": body.get("tool_choice")}), 0, False))
        for message in body.get("messages") or []:
            content = message["content"]
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            for block in content:
                tagged = {"role": message["role"], **block}
                out.append((_canonical(tagged), self.tokens(block), "cache_control" in block))
        return out

    def usage(self, body: dict[str, Any], now: float) -> dict[str, int]:
        blocks = self._blocks(body)
        digest = hashlib.sha256()
        prefix_hash: list[str] = []
        cumulative: list[int] = []
        total = 0
        for canonical, tokens, _ in blocks:
            digest.update(canonical.encode())
            prefix_hash.append(digest.copy().hexdigest())
            total += tokens
            cumulative.append(total)
        breakpoints = [i for i, (_, _, marked) in enumerate(blocks) if marked]
        if len(breakpoints) > 4:
            raise ValueError("A maximum of 4 blocks with cache_control may be provided")
        read = write = 0
        with self._lock:
            hits = [
                i
                for i in breakpoints
                if self._entries.get(prefix_hash[i], -1.0) >= now
                and cumulative[i] >= self.min_tokens
            ]
            read = cumulative[max(hits)] if hits else 0
            cacheable = [i for i in breakpoints if cumulative[i] >= self.min_tokens]
            if cacheable:
                write = max(0, cumulative[max(cacheable)] - read)
            for i in cacheable:
                self._entries[prefix_hash[i]] = now + self.ttl_s
        return {
            "input_tokens": total - read - write,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
        }


@dataclass
class _Batch:
    id: str
    requests: list[dict[str, Any]]
    created: float
    results: list[dict[str, Any]] = field(default_factory=list)
    polls: int = 0
    canceled: bool = False

    @property
    def unprocessed(self) -> list[dict[str, Any]]:
        return self.requests[len(self.results) :]


@dataclass
class FakeAnthropic:
    """The fake API server (use as a context manager)."""

    responder: Responder
    latency_s: float = 0.0
    batch_polls_before_end: int = 1
    batch_items_per_poll: int | None = None
    cache_model: PromptCacheModel = field(default_factory=PromptCacheModel)
    fail_next: list[Fail] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    batch_requests: list[dict[str, Any]] = field(default_factory=list)
    usages: list[dict[str, int]] = field(default_factory=list)
    failures_served: int = 0
    batch_calls: dict[str, int] = field(
        default_factory=lambda: {"create": 0, "retrieve": 0, "results": 0, "cancel": 0}
    )
    batch_billed: dict[str, int] = field(default_factory=dict)
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._batches: dict[str, _Batch] = {}
        self._counter = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeAnthropic:
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.01,), daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._counter += 1
            return f"{prefix}_{self._counter:06d}"

    def answer(self, body: dict[str, Any], *, batch: bool) -> tuple[int, Any]:
        """The status and JSON body for one Messages request (status 0: drop the connection;
        a bytes body: sent as it is)."""
        with self._lock:
            (self.batch_requests if batch else self.requests).append(body)
            failure = self.fail_next.pop(0) if self.fail_next and not batch else None
            if failure is not None:
                self.failures_served += 1
        if failure is not None:
            return failure.status, {
                "type": "error",
                "error": {"type": failure.error_type, "message": failure.message},
            }
        first = body["messages"][0]["content"]
        first_text = (
            "\n".join(b.get("text", "") for b in first) if isinstance(first, list) else first
        )
        check = _CHECK.search(first_text)
        run = _RUN.search(first_text)
        turn = Turn(
            body=body,
            check_id=check.group(1) if check else "",
            run=int(run.group(1)) if run else 1,
            turn=sum(1 for m in body["messages"] if m["role"] == "assistant") + 1,
            batch=batch,
        )
        reply = self.responder(turn)
        if isinstance(reply, Fail):
            return reply.status, {
                "type": "error",
                "error": {"type": reply.error_type, "message": reply.message},
            }
        try:
            usage = self.cache_model.usage(body, self.clock())
        except ValueError as exc:
            return 400, {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": str(exc)},
            }
        usage["output_tokens"] = reply.output_tokens
        with self._lock:
            self.usages.append(dict(usage))
        if isinstance(reply, Lost):
            return 0, {}
        if isinstance(reply, Malformed):
            return 200, reply.body
        return 200, {
            "id": self._next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": reply.content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }

    def _process(self, batch: _Batch, count: int) -> None:
        """Answer (and bill) the next `count` requests of a batch."""
        for item in batch.unprocessed[:count]:
            status, answer = self.answer(item["params"], batch=True)
            result = (
                {"type": "succeeded", "message": answer}
                if status == 200
                else {"type": "errored", "error": answer}
            )
            with self._lock:
                self.batch_billed[item["custom_id"]] = (
                    self.batch_billed.get(item["custom_id"], 0) + 1
                )
            batch.results.append({"custom_id": item["custom_id"], "result": result})

    def create_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        batch_id = self._next_id("msgbatch")
        batch = _Batch(batch_id, list(body["requests"]), self.clock())
        if self.batch_items_per_poll is None:
            self._process(batch, len(batch.requests))
        with self._lock:
            self._batches[batch_id] = batch
            self.batch_calls["create"] += 1
        return self.batch_json(batch_id)

    def has_batch(self, batch_id: str) -> bool:
        with self._lock:
            return batch_id in self._batches

    def batch_json(self, batch_id: str, *, poll: bool = False) -> dict[str, Any]:
        with self._lock:
            batch = self._batches[batch_id]
        if poll and not batch.canceled and self.batch_items_per_poll is not None:
            self._process(batch, self.batch_items_per_poll)
        with self._lock:
            if poll:
                batch.polls += 1
                self.batch_calls["retrieve"] += 1
            ended = batch.canceled or (
                batch.polls >= self.batch_polls_before_end and not batch.unprocessed
            )
        n = len(batch.results)
        succeeded = sum(1 for r in batch.results if r["result"]["type"] == "succeeded")
        return {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else len(batch.requests),
                "succeeded": succeeded if ended else 0,
                "errored": n - succeeded if ended else 0,
                "canceled": len(batch.unprocessed) if ended else 0,
                "expired": 0,
            },
            "created_at": "2026-11-30T00:00:00Z",
            "expires_at": "2026-12-01T00:00:00Z",
            "ended_at": "2026-11-30T00:01:00Z" if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.base_url}/v1/messages/batches/{batch_id}/results"
            if ended
            else None,
        }

    def batch_results(self, batch_id: str) -> bytes:
        with self._lock:
            self.batch_calls["results"] += 1
            batch = self._batches[batch_id]
            results = list(batch.results)
            results += [
                {"custom_id": item["custom_id"], "result": {"type": "canceled"}}
                for item in batch.unprocessed
            ]
        return "".join(json.dumps(r) + "\n" for r in results).encode()

    def cancel_batch(self, batch_id: str) -> dict[str, Any]:
        with self._lock:
            self._batches[batch_id].canceled = True
            self.batch_calls["cancel"] += 1
        return self.batch_json(batch_id)


class _QuietServer(ThreadingHTTPServer):
    """A client that went away mid-request (killed, timed out) is part of the scenarios, not
    an error worth a traceback on stderr."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_fake: FakeAnthropic

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    def _send(
        self, status: int, body: bytes, content_type: str = "application/json", **headers: str
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.send_header("request-id", self.server_fake._next_id("req"))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        extra = {"retry_after_ms": "1"} if status in {429, 529} or status >= 500 else {}
        self._send(status, json.dumps(payload).encode(), **extra)

    def _authorised(self) -> bool:
        if self.headers.get("authorization") or self.headers.get("x-api-key"):
            return True
        self._json(
            401,
            {"type": "error", "error": {"type": "authentication_error", "message": "no key"}},
        )
        return False

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if not self._authorised():
            return
        fake = self.server_fake
        path = self.path.split("?", 1)[0]
        if path == "/v1/messages":
            if fake.latency_s:
                time.sleep(fake.latency_s)
            status, payload = fake.answer(body, batch=False)
            if status == 0:  # Lost: billed, then the connection drops
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
            elif isinstance(payload, bytes):
                self._send(status, payload)
            else:
                self._json(status, payload)
        elif path == "/v1/messages/batches":
            self._json(200, fake.create_batch(body))
        elif (match := re.fullmatch(r"/v1/messages/batches/([\w-]+)/cancel", path)) and (
            fake.has_batch(match.group(1))
        ):
            self._json(200, fake.cancel_batch(match.group(1)))
        else:
            self._json(
                404, {"type": "error", "error": {"type": "not_found_error", "message": path}}
            )

    def do_GET(self) -> None:
        if not self._authorised():
            return
        fake = self.server_fake
        path = self.path.split("?", 1)[0]
        match = re.fullmatch(r"/v1/messages/batches/([\w-]+)(/results)?", path)
        if match and not fake.has_batch(match.group(1)):
            message = f"batch {match.group(1)} not found"
            self._json(
                404, {"type": "error", "error": {"type": "not_found_error", "message": message}}
            )
        elif match and match.group(2):
            self._send(200, fake.batch_results(match.group(1)), "application/binary")
        elif match:
            self._json(200, fake.batch_json(match.group(1), poll=True))
        else:
            self._json(
                404, {"type": "error", "error": {"type": "not_found_error", "message": path}}
            )


# --- scenario helpers shared by the Claude judge tests and benchmarks/bench_judge.py -------

APP_CORE = """\
def greet(name):
    return f"Hello, {name}"


def bye():
    return "bye"
"""
TEST_CORE = """\
from app.core import bye, greet


def test_greet():
    assert greet("Ada") == "Hello, Ada"
"""


def demo_snapshot(extra: dict[str, str] | None = None) -> RepoSnapshot:
    files = {"app/core.py": APP_CORE, "tests/test_core.py": TEST_CORE, "README.md": "demo\n"}
    files.update(extra or {})
    return RepoSnapshot(
        commit="c0ffee",
        files={p: SourceFile(p, t) for p, t in files.items()},
        notes=("assets/logo.png: skipped, binary file",),
    )


DEMO_CHECKS = (
    Check(id="S1-AC1-I1", kind="I", proposition="greet(name) returns a greeting with the name"),
    Check(id="S1-AC1-T1", kind="T", level="unit", proposition="a unit test asserts the greeting"),
    Check(id="S2-AC1-I1", kind="I", proposition="bye() says goodbye"),
    Check(id="S2-AC1-T1", kind="T", level="unit", proposition="a unit test asserts bye()"),
)


def demo_request(
    run: int = 1,
    checks: tuple[Check, ...] = DEMO_CHECKS,
    *,
    snapshot: RepoSnapshot | None = None,
    author_model: str | None = None,
    anchors: tuple[Anchor, ...] = (),
) -> JudgeRequest:
    ac = BaselineAC(id="S1-AC1", text="The service greets by name.", checks=checks)
    return JudgeRequest(
        run_key="mini.good.r1",
        run=run,
        checks=tuple((ac, c) for c in checks),
        snapshot=snapshot or demo_snapshot(),
        diff_paths=("app/core.py", "tests/test_core.py"),
        anchors=anchors,
        author_model=author_model,
    )


def grep_then_submit(turn: Turn) -> Reply:
    """Turn 1: grep for the check's symbol; turn 2: MET citing the matching line."""
    target = "bye" if turn.check_id.startswith("S2") else "greet"
    test = turn.check_id.endswith(("T1",))
    if turn.turn == 1:
        return Reply([tool_use("grep", {"pattern": rf"\b{target}\(", "path_glob": "**"}, turn)])
    if test and target == "bye":
        return submit(
            turn,
            "UNMET",
            searches=[{"pattern": rf"\b{target}\(", "scope": "**", "hits": 1}],
            rationale="no test asserts bye()",
        )
    path, line, quote = (
        ("tests/test_core.py", 5, 'assert greet("Ada") == "Hello, Ada"')
        if test
        else ("app/core.py", 2, 'return f"Hello, {name}"')
        if target == "greet"
        else ("app/core.py", 6, 'return "bye"')
    )
    return submit(
        turn,
        "MET",
        evidence=[{"path": path, "start_line": line, "end_line": line, "quote": quote}],
        # What evalflow's grep returns on the demo snapshot (claimed hits are checked).
        searches=[
            {"pattern": rf"\b{target}\(", "scope": "**", "hits": 2 if target == "greet" else 1}
        ],
        rationale=f"{path}:{line} shows it",
    )


TEST_KEY = "sk-ant-api03-EVALFLOW-TEST-SECRET-3f9a1c"
_ROUND = ModelPrice(input=3.0, output=15.0, cache_write=3.75, cache_read=0.30)
TEST_PRICES = PriceTable(
    as_of=date(2026, 11, 30),
    models={"claude-sonnet-5-5": _ROUND, "claude-opus-4-6": _ROUND},
)


def claude_judge(fake: FakeAnthropic, cache_dir: Path | None, **settings: Any) -> ClaudeJudge:
    """A Claude judge pointed at the fake server, with round test prices."""
    return ClaudeJudge(
        ClaudeSettings(**{"timeout_s": 20.0, **settings}),
        cache_dir=cache_dir,
        base_url=fake.base_url,
        prices=TEST_PRICES,
    )


def hand_cost(usages: list[dict[str, int]], price: ModelPrice = _ROUND) -> float:
    """Dollars of the fake server's usages, computed by hand from the price row."""
    return (
        sum(
            u["input_tokens"] * price.input
            + u["output_tokens"] * price.output
            + u["cache_creation_input_tokens"] * price.cache_write
            + u["cache_read_input_tokens"] * price.cache_read
            for u in usages
        )
        / 1_000_000
    )
