"""Vector retrievers the harness compares, and the name → factory registry the CLI uses.

Every retriever ranks by cosine similarity and breaks ties by the smaller corpus index, so a
ranking is a pure function of (vectors, query, options):

- `exact`: brute-force cosine, rows normalised once, top k by argpartition.
- `binary`: sign-bit codes (bit = component > 0), Hamming-nearest `candidates_factor × k`
  candidates, then exact cosine rescoring of those candidates.
- `ivf`: spherical k-means (Lloyd, seeded numpy Generator) into `nlist` lists; a query scans
  the `nprobe` lists whose centroids are closest, exactly.
- `binary-flipped`: the binary retriever with the query encoded under the opposite sign
  convention (bit = component < 0). Deliberately broken: it still "works" and returns k ids,
  which is the silent regression the recall gate exists to catch (SPEC §4).
- `bm25-evidence`: the code-evidence retriever of `evidence.py` (a text retriever: it is built
  from files, not vectors).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from evalflow.domain.retrieval.evidence import EvidenceRetriever
from evalflow.errors import InputError

# Bounds the (queries × chunks) float32 score block of a batch search to about 256 MB.
_BATCH_SCORE_BYTES = 256 * 1024 * 1024


def top_k_indices(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest scores, best first; equal scores go to the smaller index."""
    n = scores.shape[0]
    if k >= n:
        candidates = np.arange(n)
    else:
        # argpartition may pick any of several tied boundary values; taking everything at or
        # above the boundary and sorting by (score desc, index asc) removes that freedom.
        boundary = scores[np.argpartition(scores, n - k)[n - k]]
        candidates = np.flatnonzero(scores >= boundary)
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order[:k]]


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1).astype(vectors.dtype)


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}", fix="use k >= 1")


class _VectorIndex(ABC):
    """Shared validation and batching; subclasses implement `_search_unit`."""

    name = "vector"

    def __init__(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] == 0:
            raise InputError(
                f"vectors must be a non-empty 2-D array, got shape {matrix.shape}",
                where=self.name,
            )
        if len(ids) != matrix.shape[0]:
            raise InputError(
                f"{len(ids)} ids for {matrix.shape[0]} vectors", where=self.name,
                fix="give exactly one id per row",
            )  # fmt: skip
        if len(set(ids)) != len(ids):
            raise InputError("ids are not unique", where=self.name)
        if not np.isfinite(matrix).all():
            raise InputError("vectors contain NaN or infinity", where=self.name)
        self._ids = np.asarray(ids, dtype=object)
        self._unit = _unit_rows(matrix)

    @property
    def size(self) -> int:
        """Number of indexed vectors."""
        return int(self._unit.shape[0])

    @property
    def unit_vectors(self) -> np.ndarray:
        """The indexed vectors scaled to unit length (float32; do not modify)."""
        return self._unit

    def _unit_query(self, query: np.ndarray) -> np.ndarray:
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self._unit.shape[1]:
            raise InputError(
                f"query has {q.shape[0]} dims, the index has {self._unit.shape[1]}",
                where=self.name,
            )
        norm = float(np.linalg.norm(q))
        return q / np.float32(norm) if norm > 0 else q

    @abstractmethod
    def _search_unit(self, q: np.ndarray, k: int) -> np.ndarray:
        """Corpus indices of the top k for a unit-length query, best first."""

    def search(self, query: np.ndarray, k: int) -> list[str]:
        """The ids of the k best chunks for one query vector, best first."""
        _check_k(k)
        return self._ids[self._search_unit(self._unit_query(query), int(k))].tolist()

    def search_batch(self, queries: np.ndarray, k: int) -> list[list[str]]:
        """`search` for every row of `queries`."""
        return [self.search(q, k) for q in np.asarray(queries)]

    def retrieve_fn(self, k: int) -> Callable[[np.ndarray], list[str]]:
        """A `retrieve(query)` for `evaluate_retrieval`, fixed at cut-off k."""
        _check_k(k)
        return lambda query: self.search(query, k)


class ExactCosineRetriever(_VectorIndex):
    """Brute-force cosine similarity over every indexed vector."""

    name = "exact"

    def _search_unit(self, q: np.ndarray, k: int) -> np.ndarray:
        return top_k_indices(self._unit @ q, k)

    def search_batch(self, queries: np.ndarray, k: int) -> list[list[str]]:
        """One matrix product per block of queries, then a top-k per row."""
        _check_k(k)
        rows = np.asarray(queries, dtype=np.float32)
        if rows.ndim != 2 or rows.shape[1] != self._unit.shape[1]:
            raise InputError(
                f"queries must have shape (n, {self._unit.shape[1]}), got {rows.shape}",
                where=self.name,
            )
        unit = _unit_rows(rows)
        block = max(1, _BATCH_SCORE_BYTES // (4 * self.size))
        ranked: list[list[str]] = []
        for start in range(0, unit.shape[0], block):
            scores = unit[start : start + block] @ self._unit.T
            ranked.extend(self._ids[top_k_indices(row, k)].tolist() for row in scores)
        return ranked


class BinaryQuantRetriever(_VectorIndex):
    """Sign-bit codes, Hamming candidates, exact rescoring.

    `flipped_query_sign=True` encodes queries with the opposite sign convention to the
    indexed vectors; it exists only so tests can show the recall gate catches that bug.
    """

    name = "binary"

    def __init__(
        self,
        ids: Sequence[str],
        vectors: np.ndarray,
        *,
        candidates_factor: int = 4,
        rescore: bool = True,
        flipped_query_sign: bool = False,
    ) -> None:
        super().__init__(ids, vectors)
        if candidates_factor < 1:
            raise InputError(
                f"candidates_factor must be >= 1, got {candidates_factor}", where=self.name
            )
        self._factor = int(candidates_factor)
        self._rescore = rescore
        self._flipped = flipped_query_sign
        self._codes = np.packbits(self._unit > 0, axis=1)
        if flipped_query_sign:
            self.name = "binary-flipped"

    def _query_code(self, q: np.ndarray) -> np.ndarray:
        bits = q < 0 if self._flipped else q > 0
        return np.packbits(bits)

    def _search_unit(self, q: np.ndarray, k: int) -> np.ndarray:
        distance = np.bitwise_count(self._codes ^ self._query_code(q)).sum(axis=1, dtype=np.int64)
        n_candidates = min(self.size, k * self._factor) if self._rescore else k
        candidates = top_k_indices(-distance, n_candidates)
        if not self._rescore:
            return candidates
        # Sorted candidates make positional tie-breaks equal to corpus-index tie-breaks.
        candidates = np.sort(candidates)
        return candidates[top_k_indices(self._unit[candidates] @ q, k)]


class IVFRetriever(_VectorIndex):
    """Inverted file: spherical k-means lists, exact scan of the `nprobe` nearest lists."""

    name = "ivf"

    def __init__(
        self,
        ids: Sequence[str],
        vectors: np.ndarray,
        *,
        nlist: int = 16,
        nprobe: int = 4,
        seed: int = 0,
        max_iter: int = 25,
    ) -> None:
        super().__init__(ids, vectors)
        if nlist < 1 or nprobe < 1 or max_iter < 1:
            raise InputError(
                f"nlist, nprobe and max_iter must be >= 1 (got {nlist}, {nprobe}, {max_iter})",
                where=self.name,
            )
        self.nlist = min(int(nlist), self.size)
        self.nprobe = min(int(nprobe), self.nlist)
        self.centroids, assignment = self._kmeans(np.random.default_rng(seed), max_iter)
        self._lists = [np.flatnonzero(assignment == j) for j in range(self.nlist)]

    def _kmeans(self, rng: np.random.Generator, max_iter: int) -> tuple[np.ndarray, np.ndarray]:
        unit = self._unit.astype(np.float64)
        centroids = unit[np.sort(rng.choice(self.size, size=self.nlist, replace=False))]
        assignment = np.full(self.size, -1, dtype=np.int64)
        for _ in range(max_iter):
            # argmax returns the first maximum: ties go to the lower list id.
            new = np.argmax(unit @ centroids.T, axis=1)
            if np.array_equal(new, assignment):
                break
            assignment = new
            sums = np.zeros_like(centroids)
            np.add.at(sums, assignment, unit)
            norms = np.linalg.norm(sums, axis=1)
            # A list that lost every member keeps its old centroid rather than collapsing.
            filled = norms > 0
            centroids[filled] = sums[filled] / norms[filled, None]
        return centroids.astype(np.float32), assignment

    def list_sizes(self) -> list[int]:
        """Members per inverted list."""
        return [int(members.size) for members in self._lists]

    def _search_unit(self, q: np.ndarray, k: int) -> np.ndarray:
        probe = top_k_indices(self.centroids @ q, self.nprobe)
        candidates = np.sort(np.concatenate([self._lists[j] for j in probe]))
        return candidates[top_k_indices(self._unit[candidates] @ q, k)]


RetrieverKind = Literal["vector", "text"]


@dataclass(frozen=True, slots=True)
class RetrieverSpec:
    """A registry entry. Vector factories take (ids, vectors, **options); text factories
    take (files, **options) with files a sequence of (path, text)."""

    name: str
    kind: RetrieverKind
    description: str
    factory: Callable[..., Any]


def _binary_flipped(ids: Sequence[str], vectors: np.ndarray, **options: Any) -> Any:
    return BinaryQuantRetriever(ids, vectors, flipped_query_sign=True, **options)


REGISTRY: Mapping[str, RetrieverSpec] = MappingProxyType(
    {
        spec.name: spec
        for spec in (
            RetrieverSpec("exact", "vector", "brute-force cosine", ExactCosineRetriever),
            RetrieverSpec(
                "binary", "vector", "sign bits + Hamming candidates + exact rescoring",
                BinaryQuantRetriever,
            ),
            RetrieverSpec("ivf", "vector", "spherical k-means inverted file", IVFRetriever),
            RetrieverSpec(
                "binary-flipped", "vector",
                "deliberately broken: query sign convention flipped (must fail the gate)",
                _binary_flipped,
            ),
            RetrieverSpec(
                "bm25-evidence", "text", "BM25 + identifier-match fusion over code chunks",
                EvidenceRetriever,
            ),
        )
    }
)  # fmt: skip


def retriever_names(kind: RetrieverKind | None = None) -> list[str]:
    """Registered names in registry order, optionally only one kind."""
    return [name for name, spec in REGISTRY.items() if kind is None or spec.kind == kind]


def make_retriever(name: str, *args: Any, **options: Any) -> Any:
    """Build the registered retriever `name`; unknown names list the valid ones."""
    spec = REGISTRY.get(name)
    if spec is None:
        raise InputError(
            f"unknown retriever {name!r}",
            fix=f"use one of: {', '.join(REGISTRY)}",
        )
    return spec.factory(*args, **options)
