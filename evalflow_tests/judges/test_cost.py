"""Price table, usage records and frames, and the shared budget."""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from evalflow.errors import InputError
from evalflow.judges.cost import (
    PRICES_ENV,
    USAGE_COLUMNS,
    Budget,
    BudgetExceededError,
    ModelPrice,
    PriceTable,
    UsageRecord,
    input_token_bound,
    load_prices,
    usage_frame,
    usage_totals,
)

TABLE = PriceTable(
    as_of=date(2026, 11, 30),
    models={"m": ModelPrice(input=3.0, output=15.0, cache_write=3.75, cache_read=0.30)},
)


def test_bundled_table_is_dated_and_prices_the_default_model() -> None:
    table = load_prices()
    assert table.as_of == date(2026, 11, 30) and table.batch_discount == 0.5
    row = table.price("claude-sonnet-5-5")
    assert (row.input, row.output, row.cache_write, row.cache_read) == (2.0, 10.0, 2.5, 0.1)
    assert table.price("claude-sonnet-4-5-20250929") == table.price("claude-sonnet-4-5")


def test_usd_by_hand() -> None:
    usd = TABLE.usd(
        "m", input_tokens=1000, output_tokens=500, cache_read_tokens=2000, cache_write_tokens=3000
    )
    assert usd == pytest.approx((1000 * 3 + 500 * 15 + 2000 * 0.3 + 3000 * 3.75) / 1e6)
    assert TABLE.usd("m", input_tokens=1000, output_tokens=0, batch=True) == pytest.approx(0.0015)


def test_worst_case_prices_every_input_token_as_a_cache_write() -> None:
    estimate = TABLE.worst_case_usd("m", input_tokens=400, max_tokens=100, batch=False)
    assert estimate == pytest.approx((400 * 3.75 + 100 * 15) / 1e6)
    assert TABLE.worst_case_usd("m", input_tokens=400, max_tokens=100, batch=True) == (
        pytest.approx(estimate / 2)
    )


def test_token_bound_holds_for_cjk_text_whatever_the_tokenizer() -> None:
    text = "支払いが成功したら領収書をメールで送信する。" * 50
    bound = input_token_bound(text)
    # A byte-level tokenizer yields at most one token per UTF-8 byte (3 per CJK character);
    # published tokenizers give about one token per CJK character, the old 2.5 chars/token
    # estimate only 0.4.
    assert bound >= len(text.encode("utf-8")) >= 3 * len(text)
    assert bound >= len("plain ascii") and input_token_bound({"k": "é"}) >= len('{"k": "é"}')


def test_unknown_model_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no price for model 'gpt-x'"):
        TABLE.price("gpt-x")


def test_override_file_from_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "p.yaml"
    row = "{input: 1, output: 2, cache_write: 1.25, cache_read: 0.1}"
    path.write_text(f"as_of: 2027-01-01\nmodels:\n  x: {row}\n")
    monkeypatch.setenv(PRICES_ENV, str(path))
    assert load_prices().as_of == date(2027, 1, 1)
    path.write_text("as_of: 2027-01-01\nmodels:\n  x: {input: 1}\n")
    with pytest.raises(InputError, match=r"models\.x\.output"):
        load_prices()
    monkeypatch.setenv(PRICES_ENV, str(tmp_path / "missing.yaml"))
    with pytest.raises(InputError, match="cannot read the price table"):
        load_prices()


def record(run: int, usd: float, *, cached: bool = False) -> UsageRecord:
    return UsageRecord(
        run_key="b.f.r",
        check_id="C1",
        run=run,
        turn=1,
        model="m",
        attempt=0 if cached else 1,
        input_tokens=0 if cached else 10,
        output_tokens=0 if cached else 5,
        usd=0.0 if cached else usd,
        cached=cached,
    )


def test_usage_frame_and_totals() -> None:
    assert list(usage_frame([]).columns) == USAGE_COLUMNS
    assert usage_totals(usage_frame([])).empty
    frame = usage_frame([record(1, 0.5), record(1, 0.25), record(1, 9, cached=True), record(2, 1)])
    assert list(frame.columns) == USAGE_COLUMNS
    totals = usage_totals(frame).set_index("run")
    assert totals.loc[1, "requests"] == 2 and totals.loc[1, "cached_responses"] == 1
    assert totals.loc[1, "usd"] == pytest.approx(0.75) and totals.loc[2, "input_tokens"] == 10


def test_budget_refuses_what_cannot_fit_but_the_stop_is_not_sticky() -> None:
    budget = Budget(1.0)
    held = budget.reserve(0.6)
    budget.settle(held, 0.2)
    assert budget.spent == pytest.approx(0.2)
    with pytest.raises(BudgetExceededError):
        budget.reserve(0.9)
    budget.release(budget.reserve(0.7))  # a smaller call after the refusal still fits
    budget.settle(budget.reserve(0.8), 0.8)
    assert budget.spent == pytest.approx(1.0)
    with pytest.raises(BudgetExceededError):
        budget.reserve(0.01)
    assert budget.reserve(0.0) == 0.0
    unlimited = Budget(None)
    unlimited.settle(unlimited.reserve(1e9), 5.0)
    assert unlimited.spent == 5.0
    with pytest.raises(InputError):
        Budget(-1)


def test_a_call_waits_for_calls_in_flight_instead_of_stopping() -> None:
    budget = Budget(1.0)
    held = budget.reserve(0.7)  # another thread's call in flight, worst case 0.7
    granted: list[float] = []
    waiter = threading.Thread(target=lambda: granted.append(budget.reserve(0.5)))
    waiter.start()
    waiter.join(timeout=0.3)
    assert waiter.is_alive() and not granted  # 0.7 + 0.5 > 1: it waits, not refused
    budget.settle(held, 0.1)  # the call cost far less than its worst case
    waiter.join(timeout=5)
    assert granted == [0.5] and budget.spent == pytest.approx(0.1)
    # A thread never waits for its own reservations (a batch reserves several first).
    mine = Budget(1.0)
    mine.reserve(0.7)
    with pytest.raises(BudgetExceededError):
        mine.reserve(0.5)


def test_budget_gives_up_waiting_after_wait_s() -> None:
    budget = Budget(1.0, wait_s=0.1)
    blocker = threading.Thread(target=lambda: budget.reserve(0.9))
    blocker.start()
    blocker.join()
    with pytest.raises(BudgetExceededError):
        budget.reserve(0.5)


def _spend_in_child(ledger: str, results: Any) -> None:
    budget = Budget(1.0, ledger=Path(ledger))
    spent = 0.0
    for _ in range(40):
        try:
            held = budget.reserve(0.05)
        except BudgetExceededError:
            break
        budget.settle(held, 0.05)
        spent += 0.05
    results.put(spent)


def test_a_ledger_shares_one_budget_between_processes(tmp_path: Path) -> None:
    ledger = tmp_path / "budget.json"
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    children = [
        context.Process(target=_spend_in_child, args=(str(ledger), results)) for _ in range(3)
    ]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=60)
    total = sum(results.get(timeout=5) for _ in children)
    assert total == pytest.approx(1.0) and Budget(1.0, ledger=ledger).spent == pytest.approx(1.0)
    again = Budget(1.0, ledger=ledger)  # a retried step of the same run sees what was spent
    with pytest.raises(BudgetExceededError):
        again.reserve(0.05)


def test_budget_is_safe_across_threads() -> None:
    budget = Budget(1.0)
    granted: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(50):
            try:
                held = budget.reserve(0.01)
            except BudgetExceededError:
                return
            budget.settle(held, 0.01)
            with lock:
                granted.append(0.01)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(granted) <= 1.0 + 1e-9
    assert budget.spent == pytest.approx(sum(granted))


def test_budgets_on_one_ledger_see_each_others_calls_in_flight(tmp_path: Path) -> None:
    first = Budget(1.0, ledger=tmp_path / "budget.json", wait_s=0.1)
    second = Budget(1.0, ledger=tmp_path / "budget.json", wait_s=0.1)
    held = first.reserve(0.7)
    with pytest.raises(BudgetExceededError):  # waited for the other's call, which never ends
        second.reserve(0.5)
    second.settle(second.reserve(0.3), 0.3)
    first.settle(held, 0.2)
    assert first.spent == pytest.approx(0.5) and second.spent == pytest.approx(0.5)


def _reserve_and_die(ledger: str) -> None:
    Budget(1.0, ledger=Path(ledger)).reserve(0.4)
    os._exit(0)  # killed mid-call: the reservation is never settled


def test_a_dead_processs_calls_in_flight_count_as_spent(tmp_path: Path) -> None:
    """The API may have answered (and billed) a call whose process was killed: its worst case
    stays spent, marked estimated, never dropped."""
    ledger = tmp_path / "budget.json"
    child = multiprocessing.get_context("spawn").Process(
        target=_reserve_and_die, args=(str(ledger),)
    )
    child.start()
    child.join(timeout=60)
    budget = Budget(1.0, ledger=ledger)
    assert budget.spent == pytest.approx(0.4)
    assert json.loads(ledger.read_text()) == {"estimated": 0.4, "in_flight": {}, "spent": 0.4}
    with pytest.raises(BudgetExceededError):
        budget.reserve(0.7)


def test_a_reused_pid_is_not_taken_for_the_holder(tmp_path: Path) -> None:
    ledger = tmp_path / "budget.json"
    pid = os.getpid()  # alive, but started at another time than the recorded holder
    ledger.write_text(json.dumps({"spent": 0.0, "in_flight": {f"{pid}:1:gone": 0.25}}))
    assert Budget(1.0, ledger=ledger).spent == pytest.approx(0.25)


def test_a_holder_on_another_host_is_not_taken_for_dead(tmp_path: Path) -> None:
    """Workers sharing a warehouse: a pid of another machine says nothing here."""
    ledger = tmp_path / "budget.json"
    held = {f"{os.getpid() + 10**6}:1:x@another-host": 0.25}
    ledger.write_text(json.dumps({"spent": 0.0, "in_flight": held}))
    budget = Budget(1.0, ledger=ledger, wait_s=0.1)
    assert budget.spent == 0.0
    assert json.loads(ledger.read_text())["in_flight"] == held


def test_the_rejudge_estimate_counts_only_the_selected_judges_model_answers() -> None:
    """A run keeps several judges' results: `--rejudge unscored --judge anthropic` asks again
    only anthropic's UNSCORED checks, and an offline judge's (heuristic, labels: a panel
    member too) are decided afresh, never asked."""
    import pandas as pd

    from evalflow.judges.cost import rejudge_estimate

    def rows(judge_name: str, judge_id: str, costs: list[float]) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "judge_name": judge_name,
                "judge_id": judge_id,
                "status": ["UNSCORED"] * len(costs),
                "rationale": "refused",
                "cost_usd": costs,
            }
        )

    frames = [
        rows("anthropic", "anthropic:m", [0.25, 0.5]),
        rows("openai", "openai:g", [2.0]),
        rows("heuristic", "heuristic", [0.0, 0.0, 0.0]),
        rows("panel:heuristic,openai", "heuristic", [0.0]),
        rows("panel:heuristic,openai", "openai:g", [1.0]),
    ]
    assert rejudge_estimate(frames, "anthropic") == (2, 0.75)
    assert rejudge_estimate(frames, "openai") == (1, 2.0)
    assert rejudge_estimate(frames, "heuristic") == (0, 0.0)
    assert rejudge_estimate(frames, "panel:heuristic,openai") == (1, 1.0)
