"""Token and dollar accounting for LLM judges, and the `--max-cost` budget.

- `PriceTable`: a dated, configurable price list (`prices.yaml` next to this module, or the
  file named by `EVALFLOW_PRICES`) in USD per million tokens for input, output, 5-minute
  cache writes and cache reads, plus the Message Batches discount.
- `UsageRecord`: one row per model call (or per response served from evalflow's response
  cache, which costs 0 USD); `usage_frame` turns records into the `judge_usage` table and
  `usage_totals` sums them per scoring run.
- `Budget`: one spending limit shared by every thread of a judge. Before each API call the
  judge reserves a conservative estimate (every input token priced as a cache write, the whole
  `max_tokens` priced as output); when spent + reserved + estimate would pass the limit the
  call is refused, the budget stops, and that check and every later one is answered UNSCORED
  with reason "budget stop". A call is never sent unless its worst case fits.
"""

from __future__ import annotations

import math
import os
import re
import threading
from datetime import date
from pathlib import Path

import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalflow.errors import InputError

PRICES_FILE = Path(__file__).with_name("prices.yaml")
PRICES_ENV = "EVALFLOW_PRICES"
BUDGET_STOP = "budget stop"
_DATED = re.compile(r"-\d{8}$")
_MTOK = 1_000_000


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
        self, model: str, *, input_chars: int, max_tokens: int, chars_per_token: float, batch: bool
    ) -> float:
        """An upper estimate of one call: all input written to the cache, all output used."""
        row = self.price(model)
        tokens = math.ceil(input_chars / chars_per_token)
        total = (tokens * max(row.input, row.cache_write) + max_tokens * row.output) / _MTOK
        return total * (1 - self.batch_discount) if batch else total


def load_prices(path: Path | None = None) -> PriceTable:
    """The price table from `path`, else `EVALFLOW_PRICES`, else the bundled `prices.yaml`."""
    env = os.environ.get(PRICES_ENV)
    source = path or (Path(env) if env else PRICES_FILE)
    try:
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
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


USAGE_COLUMNS = list(UsageRecord.model_fields)


def usage_frame(records: list[UsageRecord]) -> pd.DataFrame:
    """The `judge_usage` table: one row per record, snake_case columns, stable order."""
    return pd.DataFrame([r.model_dump() for r in records], columns=USAGE_COLUMNS)


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


class BudgetExceededError(Exception):
    """The next call could pass the spending limit; the judge answers UNSCORED instead."""


class Budget:
    """A spending limit shared by every thread of one judge (see the module docstring)."""

    def __init__(self, limit_usd: float | None = None) -> None:
        if limit_usd is not None and limit_usd < 0:
            raise InputError(f"the cost limit must be >= 0, got {limit_usd}")
        self.limit_usd = limit_usd
        self._lock = threading.Lock()
        self._spent = 0.0
        self._reserved = 0.0
        self._stopped = False

    @property
    def spent(self) -> float:
        with self._lock:
            return self._spent

    @property
    def stopped(self) -> bool:
        with self._lock:
            return self._stopped

    def reserve(self, estimate_usd: float) -> float:
        """Hold `estimate_usd` for one call, or stop the budget and raise."""
        with self._lock:
            if self._stopped:
                raise BudgetExceededError(BUDGET_STOP)
            if (
                self.limit_usd is not None
                and self._spent + self._reserved + estimate_usd > self.limit_usd
            ):
                self._stopped = True
                raise BudgetExceededError(BUDGET_STOP)
            self._reserved += estimate_usd
            return estimate_usd

    def settle(self, reserved_usd: float, actual_usd: float) -> None:
        """Replace a reservation by what the call really cost."""
        with self._lock:
            self._reserved = max(0.0, self._reserved - reserved_usd)
            self._spent += actual_usd

    def release(self, reserved_usd: float) -> None:
        """Drop a reservation whose call was never answered (no charge)."""
        self.settle(reserved_usd, 0.0)
