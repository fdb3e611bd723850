"""Benchmark the SPEC §4 retrieval harness and exact cosine scoring throughput.

1. Harness: corpus generation + index build + `evaluate_retrieval` over the default synthetic
   corpus (240 chunks, 120 queries), per retriever; median of repeats; target < 1 s.
2. Exact scoring over a large synthetic corpus (1M chunks × 96 dims float32; 100k with
   --quick). That corpus comes from numpy's default_rng (seeded), not mulberry32: it only
   needs to be big, not byte-identical to the JavaScript stream. Reports chunks/s (query ×
   chunk similarities per second) and queries/s for the vectorised path, and the same for a
   plain per-chunk Python loop measured on a small subsample and extrapolated to the full
   corpus (the loop over 1M chunks would take minutes).

Run from the repository root: `.venv/bin/python benchmarks/bench_retrieval.py [--quick]`.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from evalflow.domain.retrieval.corpus import generate_corpus
from evalflow.domain.retrieval.metrics import evaluate_retrieval
from evalflow.domain.retrieval.retrievers import ExactCosineRetriever, make_retriever

HARNESS_TARGET_S = 1.0
DIMS = 96
SEED = 20240917


def _median_seconds(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    times: list[float] = []
    result: object = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def bench_harness(repeats: int) -> None:
    print(f"== harness over the default synthetic corpus (median of {repeats}) ==")
    for name in ("exact", "binary", "ivf", "binary-flipped"):

        def run(name: str = name) -> float:
            corpus = generate_corpus()
            index = make_retriever(name, corpus.chunk_ids, corpus.chunk_vectors)
            return evaluate_retrieval(corpus.cases(), index.retrieve_fn(10), 10).mean_recall

        seconds, recall = _median_seconds(run, repeats)
        verdict = "ok" if seconds < HARNESS_TARGET_S else "OVER TARGET"
        print(
            f"  {name:<15} {seconds * 1000:8.1f} ms  recall@10 {recall:.4f}  "
            f"(target < {HARNESS_TARGET_S:.0f} s: {verdict})"
        )
    seconds, _ = _median_seconds(generate_corpus, repeats)
    print(f"  corpus generation alone {seconds * 1000:.1f} ms")


def _python_loop_scores(unit_chunks: list[list[float]], query: list[float]) -> list[float]:
    scores = []
    for chunk in unit_chunks:
        total = 0.0
        for a, b in zip(chunk, query, strict=True):
            total += a * b
        scores.append(total)
    return scores


def bench_throughput(n_chunks: int, n_queries: int, sample: int, repeats: int) -> None:
    print(
        f"\n== exact cosine scoring: {n_chunks:,} chunks × {DIMS} dims float32, "
        f"{n_queries} queries (median of {repeats}) =="
    )
    print(f"  corpus: numpy default_rng({SEED}).standard_normal, not mulberry32")
    rng = np.random.default_rng(SEED)
    chunks = rng.standard_normal((n_chunks, DIMS), dtype=np.float32)
    queries = rng.standard_normal((n_queries, DIMS), dtype=np.float32)
    ids = [f"c{i}" for i in range(n_chunks)]

    start = time.perf_counter()
    index = ExactCosineRetriever(ids, chunks)
    print(f"  index build (validate + normalise once): {time.perf_counter() - start:.2f} s")
    del chunks
    unit = index.unit_vectors
    unit_queries = queries / np.linalg.norm(queries, axis=1, keepdims=True)

    score_s, _ = _median_seconds(lambda: unit_queries @ unit.T, repeats)
    search_s, _ = _median_seconds(lambda: index.search_batch(queries, 10), repeats)
    pairs = n_chunks * n_queries
    print(
        f"  numpy scoring only     {score_s * 1000:9.1f} ms  {pairs / score_s:14,.0f} chunks/s  "
        f"{n_queries / score_s:10,.1f} queries/s"
    )
    print(
        f"  numpy scoring + top-10 {search_s * 1000:9.1f} ms  {pairs / search_s:14,.0f} chunks/s  "
        f"{n_queries / search_s:10,.1f} queries/s"
    )

    sub_chunks = unit[:sample].tolist()
    sub_query = unit_queries[0].tolist()
    loop_s, _ = _median_seconds(lambda: _python_loop_scores(sub_chunks, sub_query), repeats)
    loop_rate = sample / loop_s
    print(
        f"  python per-chunk loop  measured on {sample:,} chunks × 1 query: {loop_s * 1000:.1f} ms "
        f"-> {loop_rate:,.0f} chunks/s; extrapolated to the full corpus: "
        f"{n_chunks / loop_rate:.1f} s per query, {loop_rate / n_chunks:.3f} queries/s"
    )
    print(
        f"  ratio numpy scoring / python loop (extrapolated): {pairs / score_s / loop_rate:,.0f}×"
    )
    end_to_end = pairs / search_s / loop_rate
    print(f"  ratio numpy scoring+top-10 / python loop (extrapolated): {end_to_end:,.0f}×")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller corpus, fewer repeats")
    parser.add_argument("--smoke", action="store_true", help="tiny corpus, 1 repeat (CI)")
    args = parser.parse_args()
    if args.smoke:
        bench_harness(repeats=1)
        bench_throughput(n_chunks=10_000, n_queries=4, sample=500, repeats=1)
    elif args.quick:
        bench_harness(repeats=3)
        bench_throughput(n_chunks=100_000, n_queries=16, sample=2_000, repeats=3)
    else:
        bench_harness(repeats=7)
        bench_throughput(n_chunks=1_000_000, n_queries=64, sample=10_000, repeats=5)


if __name__ == "__main__":
    main()
