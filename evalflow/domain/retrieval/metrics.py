"""The retrieval evaluation harness: `evaluate_retrieval(cases, retrieve, k)` (SPEC §4).

Binary-relevance metrics with the trec_eval / ir-measures definitions:

    ranked      = retrieve(query) with duplicates dropped (first occurrence kept), first k
    recall@k    = |ranked ∩ rel| / |rel|
    precision@k = |ranked ∩ rel| / k            (k even when fewer than k came back)
    RR@k        = 1 / rank of the first relevant id in ranked, else 0
    AP@k        = Σ_{i ≤ k, ranked[i] ∈ rel} precision@i / |rel|
    nDCG@k      = Σ_{i ≤ k, hit} 1/log2(i+1) / Σ_{i=1..min(k,|rel|)} 1/log2(i+1)

Duplicates are dropped before the cut at k, so a retriever that repeats an id does not lose a
slot to it; this is how a ranked list becomes a trec run (one rank per document). A case with
an empty relevant set scores 0 on every metric and still counts in the means, so a gold set
with holes lowers the score instead of silently shrinking the denominator.

`retrieve` may be a plain function or return awaitables (an `async def`, or a function
returning coroutines). Awaitables run concurrently on one event loop; results are matched to
cases by position, so the report is ordered and identical to a sequential run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalflow.errors import InputError

Retrieve = Callable[[Any], Iterable[str] | Awaitable[Iterable[str]]]


class RetrievalCase(BaseModel):
    """One query with its gold ids. `query` is opaque: it is handed to `retrieve` as is."""

    model_config = ConfigDict(frozen=True)

    id: str
    query: Any
    relevant: list[str] = Field(default_factory=list)


class CaseResult(BaseModel):
    """Per-case metrics plus the ranked ids they were computed from (for debugging)."""

    model_config = ConfigDict(frozen=True)

    id: str
    recall: float
    precision: float
    rr: float
    ap: float
    ndcg: float
    n_relevant: int
    hits: int
    ranked: list[str]


class RetrievalReport(BaseModel):
    """Means over all cases (empty-relevant cases included) and the per-case breakdown."""

    model_config = ConfigDict(frozen=True)

    k: int
    mean_recall: float
    mean_precision: float
    mrr: float
    map: float
    mean_ndcg: float
    cases: list[CaseResult]


def dedupe_cut(retrieved: Iterable[str], k: int) -> list[str]:
    """The first k distinct ids, in order (first occurrence of a repeated id kept)."""
    seen: set[str] = set()
    ranked: list[str] = []
    for doc_id in retrieved:
        if doc_id in seen:
            continue
        seen.add(doc_id)
        ranked.append(doc_id)
        if len(ranked) == k:
            break
    return ranked


def score_case(
    case_id: str, retrieved: Iterable[str], relevant: Iterable[str], k: int
) -> CaseResult:
    """All five metrics for one ranked list against one relevant set."""
    rel = set(relevant)
    ranked = dedupe_cut(retrieved, k)
    if not rel:
        return CaseResult(
            id=case_id, recall=0.0, precision=0.0, rr=0.0, ap=0.0, ndcg=0.0,
            n_relevant=0, hits=0, ranked=ranked,
        )  # fmt: skip
    hits = 0
    rr = 0.0
    precision_sum = 0.0
    dcg = 0.0
    for rank, doc_id in enumerate(ranked, start=1):
        if doc_id not in rel:
            continue
        hits += 1
        if rr == 0.0:
            rr = 1.0 / rank
        precision_sum += hits / rank
        dcg += 1.0 / math.log2(rank + 1)
    idcg = math.fsum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(rel)) + 1))
    return CaseResult(
        id=case_id,
        recall=hits / len(rel),
        precision=hits / k,
        rr=rr,
        ap=precision_sum / len(rel),
        ndcg=dcg / idcg,
        n_relevant=len(rel),
        hits=hits,
        ranked=ranked,
    )


def _parse_cases(cases: Iterable[RetrievalCase | Mapping[str, Any]]) -> list[RetrievalCase]:
    parsed: list[RetrievalCase] = []
    for index, raw in enumerate(cases):
        if isinstance(raw, RetrievalCase):
            parsed.append(raw)
            continue
        try:
            parsed.append(RetrievalCase.model_validate(raw))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "case"
            raise InputError(
                f"{field}: {first['msg']}",
                where=f"retrieval case #{index}",
                fix="a case is {id: str, query: ..., relevant: [str, ...]}",
            ) from None
    if not parsed:
        raise InputError("no retrieval cases given", fix="pass at least one case")
    seen: set[str] = set()
    for case in parsed:
        if case.id in seen:
            raise InputError(f"duplicate case id {case.id!r}", fix="give every case a unique id")
        seen.add(case.id)
    return parsed


def _check_options(k: int, max_concurrency: int | None) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}", fix="use k >= 1")
    if max_concurrency is not None and max_concurrency < 1:
        raise InputError(
            f"max_concurrency must be >= 1, got {max_concurrency}",
            fix="pass None for no limit",
        )


def _as_ids(result: Any, case_id: str) -> list[str]:
    if isinstance(result, str | bytes) or not isinstance(result, Iterable):
        raise InputError(
            f"retrieve returned {type(result).__name__}, not a sequence of ids",
            where=f"case {case_id!r}",
            fix="retrieve(query) must return a ranked list of string ids",
        )
    ids = list(result)
    for doc_id in ids:
        if not isinstance(doc_id, str):
            raise InputError(
                f"retrieve returned a non-string id {doc_id!r}",
                where=f"case {case_id!r}",
                fix="return string ids, the same kind as the case's relevant ids",
            )
    return ids


async def _await_all(pending: Sequence[Any], max_concurrency: int | None) -> list[Any]:
    semaphore = None if max_concurrency is None else asyncio.Semaphore(max_concurrency)

    async def one(item: Any) -> Any:
        if not inspect.isawaitable(item):
            return item
        if semaphore is None:
            return await item
        async with semaphore:
            return await item

    return list(await asyncio.gather(*(one(item) for item in pending)))


def _run_blocking(coro: Any) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    # Called from inside a running loop (a notebook, an async asset): asyncio.run would
    # refuse, so the awaitables get a private loop on a worker thread.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _report(parsed: Sequence[RetrievalCase], results: Sequence[Any], k: int) -> RetrievalReport:
    rows = [
        score_case(case.id, _as_ids(result, case.id), case.relevant, k)
        for case, result in zip(parsed, results, strict=True)
    ]
    n = len(rows)
    return RetrievalReport(
        k=k,
        mean_recall=math.fsum(r.recall for r in rows) / n,
        mean_precision=math.fsum(r.precision for r in rows) / n,
        mrr=math.fsum(r.rr for r in rows) / n,
        map=math.fsum(r.ap for r in rows) / n,
        mean_ndcg=math.fsum(r.ndcg for r in rows) / n,
        cases=rows,
    )


def evaluate_retrieval(
    cases: Iterable[RetrievalCase | Mapping[str, Any]],
    retrieve: Retrieve,
    k: int = 10,
    *,
    max_concurrency: int | None = None,
) -> RetrievalReport:
    """Run `retrieve` on every case's query and score the rankings at cut-off k.

    Sync or async `retrieve` both work; awaitables are gathered on one event loop (at most
    `max_concurrency` in flight when given). Usable from inside a running loop too, though
    `aevaluate_retrieval` is the natural call there.
    """
    _check_options(k, max_concurrency)
    parsed = _parse_cases(cases)
    results = [retrieve(case.query) for case in parsed]
    if any(inspect.isawaitable(r) for r in results):
        results = _run_blocking(_await_all(results, max_concurrency))
    return _report(parsed, results, k)


async def aevaluate_retrieval(
    cases: Iterable[RetrievalCase | Mapping[str, Any]],
    retrieve: Retrieve,
    k: int = 10,
    *,
    max_concurrency: int | None = None,
) -> RetrievalReport:
    """`evaluate_retrieval` for callers already inside an event loop."""
    _check_options(k, max_concurrency)
    parsed = _parse_cases(cases)
    results = [retrieve(case.query) for case in parsed]
    results = await _await_all(results, max_concurrency)
    return _report(parsed, results, k)
