"""Retrievers on the default corpus: the gate passes the sound ones and fails the broken one."""

from __future__ import annotations

import numpy as np
import pytest

from evalflow.domain.retrieval.corpus import SyntheticCorpus, generate_corpus
from evalflow.domain.retrieval.evidence import EvidenceRetriever
from evalflow.domain.retrieval.metrics import evaluate_retrieval
from evalflow.domain.retrieval.retrievers import (
    REGISTRY,
    BinaryQuantRetriever,
    ExactCosineRetriever,
    IVFRetriever,
    make_retriever,
    retriever_names,
    top_k_indices,
)
from evalflow.errors import InputError


@pytest.fixture(scope="module")
def corpus() -> SyntheticCorpus:
    return generate_corpus()


def _recall(corpus: SyntheticCorpus, name: str, k: int = 10, **options: object) -> float:
    index = make_retriever(name, corpus.chunk_ids, corpus.chunk_vectors, **options)
    return evaluate_retrieval(corpus.cases(), index.retrieve_fn(k), k).mean_recall


def test_top_k_breaks_ties_by_index() -> None:
    scores = np.array([1.0, 3.0, 3.0, 2.0, 3.0])
    assert top_k_indices(scores, 2).tolist() == [1, 2]
    assert top_k_indices(scores, 4).tolist() == [1, 2, 4, 3]
    assert top_k_indices(scores, 9).tolist() == [1, 2, 4, 3, 0]
    flat = np.zeros(1000)
    assert top_k_indices(flat, 3).tolist() == [0, 1, 2]


def test_exact_reaches_spec_recall(corpus: SyntheticCorpus) -> None:
    assert _recall(corpus, "exact") >= 0.95


def test_binary_with_rescoring_passes_the_gate(corpus: SyntheticCorpus) -> None:
    assert _recall(corpus, "binary") >= 0.6


def test_flipped_sign_binary_fails_the_gate(corpus: SyntheticCorpus) -> None:
    assert _recall(corpus, "binary-flipped") < 0.6


def test_ivf_passes_and_full_probe_equals_exact(corpus: SyntheticCorpus) -> None:
    assert _recall(corpus, "ivf") >= 0.9
    ivf = IVFRetriever(corpus.chunk_ids, corpus.chunk_vectors, nlist=8, nprobe=8)
    exact = ExactCosineRetriever(corpus.chunk_ids, corpus.chunk_vectors)
    for q in corpus.query_vectors[:20]:
        assert ivf.search(q, 10) == exact.search(q, 10)
    assert sum(ivf.list_sizes()) == 240


def test_ivf_is_deterministic_per_seed(corpus: SyntheticCorpus) -> None:
    a = IVFRetriever(corpus.chunk_ids, corpus.chunk_vectors, nprobe=2, seed=3)
    b = IVFRetriever(corpus.chunk_ids, corpus.chunk_vectors, nprobe=2, seed=3)
    assert np.array_equal(a.centroids, b.centroids)
    assert a.search_batch(corpus.query_vectors, 10) == b.search_batch(corpus.query_vectors, 10)


def test_exact_batch_equals_single_search(corpus: SyntheticCorpus) -> None:
    exact = ExactCosineRetriever(corpus.chunk_ids, corpus.chunk_vectors)
    batch = exact.search_batch(corpus.query_vectors, 10)
    assert batch == [exact.search(q, 10) for q in corpus.query_vectors]
    # A query equal to a chunk finds that chunk first, whatever its scale.
    assert exact.search(3.0 * corpus.chunk_vectors[17], 1) == [corpus.chunk_ids[17]]


def test_binary_without_rescoring_is_hamming_order(corpus: SyntheticCorpus) -> None:
    plain = BinaryQuantRetriever(corpus.chunk_ids, corpus.chunk_vectors, rescore=False)
    query = corpus.query_vectors[0]
    codes = corpus.chunk_vectors > 0
    distance = (codes != (query > 0)).sum(axis=1)
    expected = np.lexsort((np.arange(240), distance))[:10]
    assert plain.search(query, 10) == [corpus.chunk_ids[i] for i in expected]


def test_registry_names_and_unknown_name() -> None:
    assert retriever_names() == ["exact", "binary", "ivf", "binary-flipped", "bm25-evidence"]
    assert retriever_names("vector") == ["exact", "binary", "ivf", "binary-flipped"]
    assert REGISTRY["bm25-evidence"].kind == "text"
    with pytest.raises(InputError, match="exact, binary, ivf, binary-flipped, bm25-evidence"):
        make_retriever("hnsw")
    text = make_retriever("bm25-evidence", [("a.py", "def alpha():\n    return 1\n")])
    assert isinstance(text, EvidenceRetriever)
    assert text.retrieve("alpha", 1) == ["a.py:1-2"]


def test_bad_vectors_are_input_errors(corpus: SyntheticCorpus) -> None:
    with pytest.raises(InputError, match="ids for"):
        ExactCosineRetriever(corpus.chunk_ids[:3], corpus.chunk_vectors)
    with pytest.raises(InputError, match="NaN"):
        ExactCosineRetriever(["a"], np.array([[np.nan, 1.0]]))
    with pytest.raises(InputError, match="unique"):
        ExactCosineRetriever(["a", "a"], np.ones((2, 2)))
    exact = ExactCosineRetriever(corpus.chunk_ids, corpus.chunk_vectors)
    with pytest.raises(InputError, match="dims"):
        exact.search(np.ones(5), 3)
    with pytest.raises(InputError, match="k must"):
        exact.search(corpus.query_vectors[0], 0)
