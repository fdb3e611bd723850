"""Token and dollar accounting for LLM judges, and the `--max-cost` budget.

- `PriceTable`: a dated, configurable price list (`prices.yaml` next to this module, or the
  file named by `EVALFLOW_PRICES`) in USD per million tokens for input, output, 5-minute
  cache writes and cache reads, plus the Message Batches discount.
- `UsageRecord`: one row per model call (or per response served from evalflow's response
  cache, which costs 0 USD); `usage_frame` turns records into the `judge_usage` table and
  `usage_totals` sums them per scoring run.
- `Budget`: one spending limit for one framework run, shared by every judge of it (scoring
  runs, side-metric judging) and every thread; with a `ledger` file also by every process of
  the run and every later invocation on the same run key (a killed run's rerun continues from
  what was spent). Before each API call the judge reserves the call's worst case
  (`input_token_bound` input tokens priced as cache writes, the whole `max_tokens` as output);
  the reservation is replaced by the real price when the call finishes, or dropped when it
  fails. A call whose worst case fits beside what is spent and what is in flight is sent; one
  that would fit once the calls in flight have settled waits for them; one that cannot fit
  even then is refused (`BudgetExceededError`: that check is UNSCORED, "budget stop"). The
  stop is not sticky: a later, smaller call may still fit. Spent never passes the limit
  (beyond a nano-dollar of float rounding).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalflow.domain.yaml_text import load_yaml
from evalflow.errors import InputError

PRICES_FILE = Path(__file__).with_name("prices.yaml")
PRICES_ENV = "EVALFLOW_PRICES"
BUDGET_STOP = "budget stop"
_DATED = re.compile(r"-\d{8}$")
_MTOK = 1_000_000
# The tool-use system prompt the API adds (a few hundred tokens, per Anthropic's docs).
_API_PREAMBLE_TOKENS = 1024
# Float sums of many small prices drift by ~1e-16; a nano-dollar of slack keeps an exact fit.
_SLACK_USD = 1e-9


class ModelPrice(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_write: float = Field(ge=0, description="5-minute ephemeral cache write")
    cache_read: float = Field(ge=0)


class PriceTable(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    as_of: date
    currency: str = "USD"
    batch_discount: float = Field(default=0.5, ge=0, le=1)
    models: dict[str, ModelPrice]

    def price(self, model: str) -> ModelPrice:
        """The row of `model` (a dated id falls back to its undated row)."""
        for name in (model, _DATED.sub("", model)):
            if name in self.models:
                return self.models[name]
        raise InputError(
            f"no price for model {model!r} in the price table (as of {self.as_of})",
            fix=f"add it to {PRICES_FILE.name} or point {PRICES_ENV} at a table that has it",
        )

    def usd(
        self,
        model: str,
        *,
        input_tokens: int,
        output_tokens: int,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        batch: bool = False,
    ) -> float:
        row = self.price(model)
        total = (
            input_tokens * row.input
            + output_tokens * row.output
            + cache_read_tokens * row.cache_read
            + cache_write_tokens * row.cache_write
        ) / _MTOK
        return total * (1 - self.batch_discount) if batch else total

    def worst_case_usd(
        self, model: str, *, input_tokens: int, max_tokens: int, batch: bool
    ) -> float:
        """An upper estimate of one call: all input written to the cache, all output used."""
        row = self.price(model)
        total = (input_tokens * max(row.input, row.cache_write) + max_tokens * row.output) / _MTOK
        return total * (1 - self.batch_discount) if batch else total


def input_token_bound(request: dict[str, Any] | str) -> int:
    """An upper bound of a request's input tokens, whatever the model's tokenizer.

    Byte-level BPE tokenizers (every current model family) never put less than one byte of
    UTF-8 in a token, so the UTF-8 size of the request's JSON bounds its tokens — also for
    CJK text (3 bytes a character), which a characters-per-token ratio undercounts. The JSON
    framing (keys, quotes, cache markers) is not tokenized and more than covers the
    API's own tool-use preamble, which `_API_PREAMBLE_TOKENS` adds for very small requests.
    """
    text = request if isinstance(request, str) else json.dumps(request, ensure_ascii=False)
    return len(text.encode("utf-8")) + _API_PREAMBLE_TOKENS


def load_prices(path: Path | None = None) -> PriceTable:
    """The price table from `path`, else `EVALFLOW_PRICES`, else the bundled `prices.yaml`."""
    env = os.environ.get(PRICES_ENV)
    source = path or (Path(env) if env else PRICES_FILE)
    try:
        data = load_yaml(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(
            f"cannot read the price table: {exc.strerror}",
            where=str(source),
            fix=f"check {PRICES_ENV}",
        ) from exc
    except yaml.YAMLError as exc:
        raise InputError(f"price table is not valid YAML: {exc}", where=str(source)) from exc
    try:
        return PriceTable.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(part) for part in first["loc"])
        raise InputError(
            f"invalid price table at {loc}: {first['msg']}", where=str(source)
        ) from exc


class UsageRecord(BaseModel):
    """One model call of a judge (a row of the `judge_usage` table)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_key: str
    check_id: str
    run: int = Field(ge=1)
    turn: int = Field(ge=1, description="turn of the check's tool-use conversation")
    model: str
    request_id: str | None = None
    attempt: int = Field(ge=0, description="HTTP attempts (1 + SDK retries); 0 when cached")
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cache_read_tokens: int = Field(default=0, ge=0)
    cache_write_tokens: int = Field(default=0, ge=0)
    usd: float = Field(default=0.0, ge=0, description="the call's price (also when cached)")
    cached: bool = Field(
        default=False, description="served from evalflow's response cache: nothing paid now"
    )
    batch: bool = Field(default=False, description="answered through the Message Batches API")
    estimated: bool = Field(
        default=False,
        description="an attempt the API may have billed but whose answer was lost (a read "
        "timeout, a dropped connection, a malformed body): `usd` is its worst case",
    )


USAGE_COLUMNS = list(UsageRecord.model_fields)


def usage_frame(records: list[UsageRecord]) -> pd.DataFrame:
    """The `judge_usage` table: one row per record, snake_case columns, stable order."""
    return pd.DataFrame([r.model_dump() for r in records], columns=USAGE_COLUMNS)


def usage_sums(records: list[UsageRecord]) -> dict[str, Any]:
    """The calls paid now, tokens and dollars of some records (a verdict's, a skill's):
    `cost_usd` counts replayed answers at their original price, `spent_usd` only the paid."""
    return {
        "api_calls": sum(not r.cached for r in records),
        "input_tokens": sum(r.input_tokens for r in records),
        "output_tokens": sum(r.output_tokens for r in records),
        "cache_read_tokens": sum(r.cache_read_tokens for r in records),
        "cache_write_tokens": sum(r.cache_write_tokens for r in records),
        "cost_usd": sum((r.usd for r in records), 0.0),
        "spent_usd": sum((r.usd for r in records if not r.cached), 0.0),
    }


def usage_totals(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (run_key, run): API requests, cache-served responses, tokens and dollars."""
    columns = [
        "run_key",
        "run",
        "requests",
        "cached_responses",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "usd",
    ]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    work = frame.assign(
        requests=~frame["cached"].astype(bool), cached_responses=frame["cached"].astype(bool)
    )
    totals = (work.groupby(["run_key", "run"], sort=True)[columns[2:]].sum().reset_index()).astype(
        {"requests": "int64", "cached_responses": "int64"}
    )
    return totals[columns]


# The judges `--rejudge unscored` asks again (a model's answers are stored and replayed); an
# offline judge (heuristic, labels) decides afresh on every scoring and asks nothing.
MODEL_JUDGES = ("anthropic", "openai", "hybrid")


def rejudge_estimate(verdict_frames: list[pd.DataFrame], judge: str) -> tuple[int, float]:
    """What `--rejudge unscored` with `judge` (a `--judge` name) would ask again, from stored
    scoring-run tables: the checks a model's answer in `judge`'s result left UNSCORED (other
    judges' results of the run are not re-judged; a panel's offline member asks nothing;
    `cache.unanswered` ones are resumed anyway) and what their conversations cost when first
    asked (`cost_usd`: paid and replayed calls), the estimate of asking them again."""
    from evalflow.judges.cache import unanswered

    count, usd = 0, 0.0
    for frame in verdict_frames:
        rows = frame[(frame["status"] == "UNSCORED") & (frame["judge_name"] == judge)]
        asked = [
            str(judge_id).split(":", 1)[0] in MODEL_JUDGES and not unanswered(reason)
            for judge_id, reason in zip(rows["judge_id"], rows["rationale"], strict=True)
        ]
        rows = rows[asked]
        count += len(rows)
        usd += float(rows["cost_usd"].sum()) if "cost_usd" in rows else 0.0
    return count, usd


class BudgetExceededError(Exception):
    """The next call could pass the spending limit; the judge answers UNSCORED instead."""


@dataclass
class _Ledger:
    """What a budget knows beyond this object: dollars spent, of which `estimated` were calls
    in flight in a process that died (killed mid-call: the API may have answered and billed,
    so they count at their reserved worst case), and dollars in flight per live holder."""

    spent: float = 0.0
    estimated: float = 0.0
    in_flight: dict[str, float] = field(default_factory=dict)


def _started(pid: int) -> str:
    """The process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22), so
    a pid reused by another process after a kill or a reboot is not taken for the holder;
    "" where /proc is unavailable (then only the pid is checked)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[1].split()[19]


def _alive(holder: str) -> bool:
    """Whether the process of holder `<pid>:<start>:<budget id>@<host>` still runs. One of
    another host (workers sharing the warehouse) cannot be checked from here: it is taken
    for alive, its calls in flight wait for it to settle."""
    name, _, host = holder.partition("@")
    if host and host != socket.gethostname():
        return True
    parts = name.split(":")
    pid, started = int(parts[0]), parts[1] if len(parts) > 2 else ""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return not started or _started(pid) in ("", started)


class Budget:
    """A spending limit shared by every judge, thread and process of one framework run (see
    the module docstring). `ledger` (a JSON file, locked while read and written, replaced
    atomically) is where the processes of one run and every later invocation on it meet: the
    limit bounds what was spent there in total, so a killed run's rerun continues from what
    the first one spent (its calls in flight when it died count at their worst case).
    Without it the budget lives in this object only. A call that waits for others to settle
    gives up after `wait_s` seconds (then: budget stop)."""

    def __init__(
        self, limit_usd: float | None = None, *, ledger: Path | None = None, wait_s: float = 900.0
    ) -> None:
        if limit_usd is not None and limit_usd < 0:
            raise InputError(f"the cost limit must be >= 0, got {limit_usd}")
        self.limit_usd = limit_usd
        self.ledger = ledger
        self.wait_s = wait_s
        self._cond = threading.Condition()
        self._memory = _Ledger()
        self._held: dict[int, float] = {}  # thread id -> dollars it has in flight
        self._id = uuid.uuid4().hex
        self._holder = (0, "")

    @property
    def _owner(self) -> str:
        """This process's holder name on the ledger (a forked child gets its own)."""
        pid = os.getpid()
        if self._holder[0] != pid:
            self._holder = (pid, f"{pid}:{_started(pid)}:{self._id}@{socket.gethostname()}")
        return self._holder[1]

    @contextmanager
    def _state(self) -> Iterator[_Ledger]:
        """The shared ledger, locked and written back (callers hold `_cond`)."""
        if self.ledger is None:
            yield self._memory
            return
        self.ledger.parent.mkdir(parents=True, exist_ok=True)
        with open(self.ledger.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                raw = json.loads(self.ledger.read_text()) if self.ledger.exists() else {}
                state = _Ledger(float(raw.get("spent", 0.0)), float(raw.get("estimated", 0.0)))
                for holder, usd in raw.get("in_flight", {}).items():
                    if _alive(holder):
                        state.in_flight[holder] = float(usd)
                    else:  # died mid-call: may have been billed, never settles
                        state.spent += float(usd)
                        state.estimated += float(usd)
                yield state
                body = {
                    "spent": state.spent,
                    "estimated": state.estimated,
                    "in_flight": state.in_flight,
                }
                tmp = self.ledger.with_suffix(".tmp")
                tmp.write_text(json.dumps(body, sort_keys=True))
                os.replace(tmp, self.ledger)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _publish(self, state: _Ledger) -> None:
        mine = sum(self._held.values())
        if mine > 0:
            state.in_flight[self._owner] = mine
        else:
            state.in_flight.pop(self._owner, None)

    @property
    def spent(self) -> float:
        with self._cond, self._state() as state:
            return state.spent

    def reserve(self, estimate_usd: float) -> float:
        """Hold `estimate_usd` for one call (waiting for calls in flight when only they stand
        in the way), or raise BudgetExceededError when it cannot fit."""
        me = threading.get_ident()
        deadline = time.monotonic() + self.wait_s
        with self._cond:
            while True:
                with self._state() as state:
                    in_flight = sum(state.in_flight.values()) - state.in_flight.get(
                        self._owner, 0.0
                    )
                    in_flight += sum(self._held.values())
                    limit = self.limit_usd
                    if (
                        limit is None
                        or state.spent + in_flight + estimate_usd <= limit + _SLACK_USD
                    ):
                        self._held[me] = self._held.get(me, 0.0) + estimate_usd
                        self._publish(state)
                        return estimate_usd
                    # Waiting helps only if someone else's call is in flight: a thread never
                    # waits for its own reservations (a batch reserves many before sending).
                    others = in_flight - self._held.get(me, 0.0)
                    if (
                        state.spent + estimate_usd > limit + _SLACK_USD
                        or others <= _SLACK_USD
                        or time.monotonic() >= deadline
                    ):
                        raise BudgetExceededError(BUDGET_STOP)
                # Settles in this process notify; another process's are seen by polling.
                self._cond.wait(timeout=0.05)

    def settle(self, reserved_usd: float, actual_usd: float) -> None:
        """Replace a reservation by what the call really cost."""
        me = threading.get_ident()
        with self._cond:
            with self._state() as state:
                left = reserved_usd
                # The reserving thread normally settles; otherwise take it from any holder.
                for holder in [me, *self._held]:
                    take = min(left, self._held.get(holder, 0.0))
                    self._held[holder] = self._held.get(holder, 0.0) - take
                    left -= take
                    if self._held[holder] <= _SLACK_USD:
                        del self._held[holder]
                state.spent += actual_usd
                self._publish(state)
            self._cond.notify_all()

    def release(self, reserved_usd: float) -> None:
        """Drop a reservation whose call was never answered (no charge)."""
        self.settle(reserved_usd, 0.0)
