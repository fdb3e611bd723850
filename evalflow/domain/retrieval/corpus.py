"""The deterministic synthetic retrieval corpus of SPEC §4 (Marian) and its byte digest.

Defaults: 24 topics × 10 chunks (240 chunks), 5 queries per topic (120 queries), 96 dims,
noise 0.2, seed 42. The relevant set of a query is every chunk of its topic.

All randomness comes from one mulberry32 stream seeded with `seed`, consumed in this order,
each vector taking `dims` consecutive draws u ∈ [0, 1):

1. topic centres, topic 0..T-1: component = 2u − 1, then the vector is scaled to unit length;
2. chunks, topic-major (topic 0 chunk 0, topic 0 chunk 1, …): centre + (2u − 1) · noise;
3. queries, topic-major: centre + (2u − 1) · noise.

Centres are normalised draws from the cube [−1, 1]^dims rather than Box–Muller Gaussians:
that direction distribution leans slightly towards the cube's diagonals, which does not
matter here, and it needs only IEEE-exact operations (+, −, ×, ÷, √ and an exactly rounded
sum), whereas log/cos results can differ in the last bit between libm builds and numpy SIMD
paths. So the corpus is identical byte for byte on every machine. Chunks come before queries
so that changing `queries_per_topic` leaves the chunks unchanged.

Vectors are computed in float64 and stored as float32; `to_bytes` / `digest` cover the
config, every id and every float32 value (little-endian).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalflow.domain.retrieval.metrics import RetrievalCase
from evalflow.domain.retrieval.prng import Mulberry32

FORMAT_TAG = b"evalflow-synthetic-corpus/v1\n"


class CorpusConfig(BaseModel):
    """Generator parameters; the defaults are SPEC §4's."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    topics: int = Field(24, ge=1)
    chunks_per_topic: int = Field(10, ge=1)
    queries_per_topic: int = Field(5, ge=1)
    dims: int = Field(96, ge=1)
    noise: float = Field(0.2, ge=0.0)
    seed: int = Field(42, ge=0, le=0xFFFFFFFF)


def _width(count: int, minimum: int) -> int:
    return max(minimum, len(str(count - 1)))


@dataclass(frozen=True, slots=True)
class SyntheticCorpus:
    """Generated vectors and ids. Arrays are float32, read-only, rows aligned with ids."""

    config: CorpusConfig
    centres: np.ndarray
    chunk_ids: tuple[str, ...]
    chunk_topics: np.ndarray
    chunk_vectors: np.ndarray
    query_ids: tuple[str, ...]
    query_topics: np.ndarray
    query_vectors: np.ndarray

    def cases(self) -> list[RetrievalCase]:
        """One case per query; `query` is the query's float32 vector (a read-only row)."""
        by_topic: dict[int, list[str]] = {}
        for cid, topic in zip(self.chunk_ids, self.chunk_topics.tolist(), strict=True):
            by_topic.setdefault(topic, []).append(cid)
        return [
            RetrievalCase(id=qid, query=self.query_vectors[i], relevant=by_topic[topic])
            for i, (qid, topic) in enumerate(
                zip(self.query_ids, self.query_topics.tolist(), strict=True)
            )
        ]

    def to_bytes(self) -> bytes:
        """Stable serialisation: tag, canonical config JSON, ids, then float32 LE arrays."""
        header = json.dumps(self.config.model_dump(), sort_keys=True, separators=(",", ":"))
        ids = "\n".join((*self.chunk_ids, *self.query_ids))
        parts = [FORMAT_TAG, header.encode(), b"\n", ids.encode(), b"\n"]
        parts += [
            np.ascontiguousarray(a, dtype="<f4").tobytes()
            for a in (self.centres, self.chunk_vectors, self.query_vectors)
        ]
        return b"".join(parts)

    def digest(self) -> str:
        """sha256 hex of `to_bytes()`."""
        return hashlib.sha256(self.to_bytes()).hexdigest()


def _unit_rows(rows: np.ndarray) -> np.ndarray:
    # math.fsum is exactly rounded, so the norm does not depend on numpy's summation order.
    norms = np.array([math.sqrt(math.fsum((row * row).tolist())) for row in rows])
    return rows / np.where(norms > 0.0, norms, 1.0)[:, None]


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def generate_corpus(config: CorpusConfig | None = None) -> SyntheticCorpus:
    """Build the corpus for `config` (SPEC defaults when omitted) from one mulberry32 stream."""
    cfg = config or CorpusConfig()
    t, c, q, d = cfg.topics, cfg.chunks_per_topic, cfg.queries_per_topic, cfg.dims
    stream = Mulberry32(cfg.seed)

    centres = _unit_rows(2.0 * stream.uniforms(t * d).reshape(t, d) - 1.0)
    chunk_jitter = (2.0 * stream.uniforms(t * c * d).reshape(t, c, d) - 1.0) * cfg.noise
    query_jitter = (2.0 * stream.uniforms(t * q * d).reshape(t, q, d) - 1.0) * cfg.noise
    chunks = (centres[:, None, :] + chunk_jitter).reshape(t * c, d)
    queries = (centres[:, None, :] + query_jitter).reshape(t * q, d)

    tw, cw, qw = _width(t, 2), _width(c, 2), _width(q, 1)
    chunk_ids = tuple(f"t{ti:0{tw}d}-c{ci:0{cw}d}" for ti in range(t) for ci in range(c))
    query_ids = tuple(f"q-t{ti:0{tw}d}-{qi:0{qw}d}" for ti in range(t) for qi in range(q))
    return SyntheticCorpus(
        config=cfg,
        centres=_readonly(centres.astype(np.float32)),
        chunk_ids=chunk_ids,
        chunk_topics=_readonly(np.repeat(np.arange(t, dtype=np.int64), c)),
        chunk_vectors=_readonly(chunks.astype(np.float32)),
        query_ids=query_ids,
        query_topics=_readonly(np.repeat(np.arange(t, dtype=np.int64), q)),
        query_vectors=_readonly(queries.astype(np.float32)),
    )
