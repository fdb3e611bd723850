"""The harness against ir-measures (pytrec_eval) and the SPEC §4 edge-case rules."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import ir_measures
import numpy as np
import pytest
from ir_measures import AP, RR, P, R, nDCG

from evalflow.domain.retrieval.metrics import (
    RetrievalCase,
    aevaluate_retrieval,
    dedupe_cut,
    evaluate_retrieval,
    score_case,
)
from evalflow.errors import InputError

METRIC_FIELDS = ("recall", "precision", "rr", "ap", "ndcg")


def _lookup(runs: dict[str, list[str]]) -> Any:
    return lambda query: runs[query]


def _oracle(
    cases: list[dict[str, Any]],
    runs: dict[str, list[str]],
    judged_negative: dict[str, list[str]],
    k: int,
) -> dict[str, dict[str, float]]:
    """Per-query ir-measures values; queries it leaves undefined are absent."""
    qrels = [ir_measures.Qrel(c["id"], d, 1) for c in cases for d in c["relevant"]]
    qrels += [ir_measures.Qrel(q, d, 0) for q, docs in judged_negative.items() for d in docs]
    # Strictly decreasing scores: trec_eval sorts by score, so ties would reorder by docid.
    run = [
        ir_measures.ScoredDoc(c["id"], d, float(-rank))
        for c in cases
        for rank, d in enumerate(dedupe_cut(runs[c["query"]], 10**9))
    ]
    names = {R @ k: "recall", P @ k: "precision", RR @ k: "rr", AP @ k: "ap", nDCG @ k: "ndcg"}
    out: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(list(names), qrels, run):
        out.setdefault(metric.query_id, {})[names[metric.measure]] = metric.value
    return out


@pytest.mark.parametrize("k", [1, 3, 5, 10, 20])
def test_random_cases_match_ir_measures(k: int) -> None:
    rng = np.random.default_rng(20240917 + k)
    pool = [f"d{i:02d}" for i in range(30)]
    cases: list[dict[str, Any]] = []
    runs: dict[str, list[str]] = {}
    negatives: dict[str, list[str]] = {}
    for i in range(150):
        n_rel = int(rng.integers(1, 9))
        relevant = sorted(rng.choice(pool, size=n_rel, replace=False).tolist())
        # With replacement: duplicates appear and must be dropped, keeping the first.
        retrieved = rng.choice(pool, size=int(rng.integers(0, 16)), replace=True).tolist()
        qid = f"q{i:03d}"
        cases.append({"id": qid, "query": f"query {qid}", "relevant": relevant})
        runs[f"query {qid}"] = retrieved
        negatives[qid] = [d for d in pool[:3] if d not in relevant]

    report = evaluate_retrieval(cases, _lookup(runs), k=k)
    oracle = _oracle(cases, runs, negatives, k)
    assert len(oracle) == len(cases)
    for row in report.cases:
        for field in METRIC_FIELDS:
            assert getattr(row, field) == pytest.approx(oracle[row.id][field], abs=1e-12), (
                row.id,
                field,
            )
    # Every query has judgments, so ir-measures defines all of them (an empty run scores 0)
    # and its aggregate is the plain mean over all cases, like ours.
    agg = ir_measures.calc_aggregate([R @ k, P @ k, RR @ k, AP @ k, nDCG @ k], [
        ir_measures.Qrel(c["id"], d, 1) for c in cases for d in c["relevant"]
    ], [
        ir_measures.ScoredDoc(c["id"], d, float(-r))
        for c in cases for r, d in enumerate(dedupe_cut(runs[c["query"]], 10**9))
    ])  # fmt: skip
    assert any(not retrieved for retrieved in runs.values())
    assert report.mean_recall == pytest.approx(agg[R @ k], abs=1e-12)
    assert report.mean_precision == pytest.approx(agg[P @ k], abs=1e-12)
    assert report.mrr == pytest.approx(agg[RR @ k], abs=1e-12)
    assert report.map == pytest.approx(agg[AP @ k], abs=1e-12)
    assert report.mean_ndcg == pytest.approx(agg[nDCG @ k], abs=1e-12)


def test_k_differs_from_relevant_count() -> None:
    row = score_case("c", ["a", "x", "c", "y"], ["a", "b", "c"], k=2)
    assert (row.recall, row.precision, row.rr) == (1 / 3, 1 / 2, 1.0)
    assert row.ap == pytest.approx(1 / 3)
    assert row.ndcg == pytest.approx(1 / (1 + 1 / math.log2(3)))
    wide = score_case("c", ["a", "x", "c", "y"], ["a", "b", "c"], k=4)
    assert wide.recall == pytest.approx(2 / 3)
    assert wide.ap == pytest.approx((1 + 2 / 3) / 3)


def test_precision_divides_by_k_when_fewer_come_back() -> None:
    row = score_case("c", ["a"], ["a", "b"], k=5)
    assert row.precision == pytest.approx(1 / 5)
    assert row.recall == pytest.approx(1 / 2)
    assert row.ap == pytest.approx(1 / 2)
    assert row.ndcg == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert row.ranked == ["a"]


def test_first_hit_beyond_k_scores_zero() -> None:
    row = score_case("c", ["x", "y", "a"], ["a"], k=2)
    assert (row.recall, row.precision, row.rr, row.ap, row.ndcg, row.hits) == (0, 0, 0, 0, 0, 0)
    assert score_case("c", ["x", "y", "a"], ["a"], k=3).rr == pytest.approx(1 / 3)


def test_empty_relevant_set_scores_zero_and_is_counted() -> None:
    cases = [
        {"id": "full", "query": "q1", "relevant": ["a"]},
        {"id": "empty", "query": "q2", "relevant": []},
    ]
    report = evaluate_retrieval(cases, _lookup({"q1": ["a"], "q2": ["a", "b"]}), k=1)
    empty = report.cases[1]
    assert [getattr(empty, f) for f in METRIC_FIELDS] == [0.0] * 5
    assert empty.n_relevant == 0
    assert report.mean_recall == 0.5
    assert report.mean_precision == 0.5
    assert (report.mrr, report.map, report.mean_ndcg) == (0.5, 0.5, 0.5)


def test_empty_relevant_agrees_with_ir_measures_where_it_is_defined() -> None:
    # A query judged only non-relevant: trec_eval defines every metric as 0, as we do.
    # A query with no judgments at all: ir-measures drops it; our rule (0, counted) applies.
    qrels = [ir_measures.Qrel("judged", "x", 0)]
    run = [ir_measures.ScoredDoc("judged", "x", 1.0), ir_measures.ScoredDoc("unjudged", "x", 1.0)]
    values = list(ir_measures.iter_calc([R @ 5, P @ 5, RR @ 5, AP @ 5, nDCG @ 5], qrels, run))
    assert {m.query_id for m in values} == {"judged"}
    assert all(m.value == 0.0 for m in values)
    ours = score_case("judged", ["x"], [], k=5)
    assert [getattr(ours, f) for f in METRIC_FIELDS] == [0.0] * 5


def test_duplicates_dropped_keeping_first_occurrence() -> None:
    assert dedupe_cut(["a", "a", "b", "a", "c"], 2) == ["a", "b"]
    row = score_case("c", ["a", "a", "b", "a", "c"], ["b", "c"], k=2)
    assert row.ranked == ["a", "b"]
    assert (row.recall, row.precision, row.rr, row.hits) == (0.5, 0.5, 0.5, 1)
    full = score_case("c", ["b", "b", "b", "c"], ["b", "c"], k=3)
    assert (full.recall, full.hits, full.ap) == (1.0, 2, 1.0)
    assert full.precision == pytest.approx(2 / 3)


def test_relevant_duplicates_count_once() -> None:
    row = score_case("c", ["a"], ["a", "a"], k=1)
    assert (row.n_relevant, row.recall, row.ndcg) == (1, 1.0, 1.0)


def test_accepts_models_and_dicts_and_passes_query_through() -> None:
    seen: list[Any] = []

    def retrieve(query: Any) -> tuple[str, ...]:
        seen.append(query)
        return ("a", "b")

    vector = np.arange(3.0)
    cases = [RetrievalCase(id="m", query=vector, relevant=["b"]), {"id": "d", "query": 7}]
    report = evaluate_retrieval(cases, retrieve, k=2)
    assert seen[0] is vector and seen[1] == 7
    assert [c.id for c in report.cases] == ["m", "d"]
    assert report.cases[0].rr == 0.5
    assert report.model_dump()["cases"][1]["n_relevant"] == 0


async def _slow_lookup(query: str) -> list[str]:
    # Later cases finish first, so completion order differs from case order.
    await asyncio.sleep(0.001 * (20 - int(query[1:])))
    return [f"d{int(query[1:]) % 4}", "d1", "d2"]


def _async_cases() -> list[dict[str, Any]]:
    return [{"id": f"c{i}", "query": f"q{i}", "relevant": ["d1", f"d{i % 3}"]} for i in range(20)]


def _sync_lookup(query: str) -> list[str]:
    return [f"d{int(query[1:]) % 4}", "d1", "d2"]


def test_async_retrieve_is_ordered_and_equals_sync() -> None:
    sync_report = evaluate_retrieval(_async_cases(), _sync_lookup, k=2)
    async_report = evaluate_retrieval(_async_cases(), _slow_lookup, k=2)
    assert async_report == sync_report

    def returns_coroutines(query: str) -> Any:
        # Not a coroutine function itself: the harness must notice the awaitable results.
        return _slow_lookup(query)

    wrapped = evaluate_retrieval(_async_cases(), returns_coroutines, k=2)
    assert wrapped == sync_report


def test_async_concurrency_limit_and_running_loop() -> None:
    in_flight = 0
    peak = 0

    async def tracked(query: str) -> list[str]:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.001)
        in_flight -= 1
        return _sync_lookup(query)

    expected = evaluate_retrieval(_async_cases(), _sync_lookup, k=3)
    assert evaluate_retrieval(_async_cases(), tracked, k=3, max_concurrency=2) == expected
    assert peak == 2

    async def inside_loop() -> tuple[Any, Any]:
        blocking = evaluate_retrieval(_async_cases(), _slow_lookup, k=3)
        native = await aevaluate_retrieval(_async_cases(), _slow_lookup, k=3)
        return blocking, native

    blocking, native = asyncio.run(inside_loop())
    assert blocking == expected
    assert native == expected


@pytest.mark.parametrize(
    ("cases", "retrieve", "k", "message"),
    [
        ([], _sync_lookup, 10, "no retrieval cases"),
        ([{"id": "a", "query": "q1"}, {"id": "a", "query": "q2"}], _sync_lookup, 10, "duplicate"),
        ([{"query": "q1"}], _sync_lookup, 10, "id"),
        ([{"id": "a", "query": "q1", "relevant": "d1"}], _sync_lookup, 10, "relevant"),
        ([{"id": "a", "query": "q1"}], _sync_lookup, 0, "k must be"),
        ([{"id": "a", "query": "q1"}], lambda q: "d1", 10, "not a sequence"),
        ([{"id": "a", "query": "q1"}], lambda q: [1, 2], 10, "non-string"),
    ],
)
def test_bad_input_raises_one_line_input_error(
    cases: list[dict[str, Any]], retrieve: Any, k: int, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        evaluate_retrieval(cases, retrieve, k=k)


def test_bad_concurrency_limit() -> None:
    with pytest.raises(InputError, match="max_concurrency"):
        evaluate_retrieval(_async_cases(), _slow_lookup, max_concurrency=0)
