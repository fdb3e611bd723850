"""The evidence retriever judges use to propose candidate `file:start-end` evidence for a check.

Files are split into overlapping line windows (chunk id `path:start-end`, 1-based, inclusive).
Each chunk is indexed as tokens of its text and its path, where every identifier is kept whole
(lower-cased) *and* split on snake_case / camelCase / digit boundaries, so the query
"refund payment" meets `refund_payment` and `RefundPayment`, and the query `refund_payment`
still prefers the exact symbol.

Ranking is Okapi BM25 (k1 = 1.2, b = 0.75, the usual defaults; idf = ln(1 + (N − df + 0.5) /
(df + 0.5)), which stays positive for terms in most chunks), optionally fused by reciprocal
rank fusion (RRF, constant 60) with an identifier-match ranking: chunks that define (weight 2)
or mention (weight 1) the code-like identifiers of the query. A query identifier is code-like
when it splits into several parts (`parse_config`, `parseConfig`) or is written in backticks.
Equal fused scores are ordered by identifier score, then BM25 score, then chunk order (file
order, then start line), so the ranking is a pure function of (files, query, options).
Chunks that match nothing are never returned.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalflow.domain.retrieval.metrics import RetrievalCase, RetrievalReport, evaluate_retrieval
from evalflow.errors import InputError

BM25_K1 = 1.2
BM25_B = 0.75
RRF_K = 60
DEFAULT_WINDOW = 20
DEFAULT_OVERLAP = 5

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_BACKTICKED = re.compile(r"`([^`]+)`")
_DEFINITION = re.compile(
    r"^\s*(?:export\s+)?(?:async\s+)?(?:def|class|function|const|let|var|interface|type)"
    r"\s+([A-Za-z_$][A-Za-z0-9_$]*)",
    re.MULTILINE,
)
# English function words only: code keywords stay, BM25's idf already discounts them.
_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "does",
        "for",
        "from",
        "how",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "with",
    }
)


@dataclass(frozen=True, slots=True)
class CodeChunk:
    """Lines `start`..`end` (1-based, inclusive) of `path`."""

    id: str
    path: str
    start: int
    end: int
    text: str


def chunk_files(
    files: Iterable[tuple[str, str]],
    *,
    window: int = DEFAULT_WINDOW,
    overlap: int = DEFAULT_OVERLAP,
) -> list[CodeChunk]:
    """Overlapping line windows of every file, in file order; an empty file has no chunk."""
    if window < 1 or not 0 <= overlap < window:
        raise InputError(
            f"window={window}, overlap={overlap}",
            where="evidence chunking",
            fix="use window >= 1 and 0 <= overlap < window",
        )
    step = window - overlap
    chunks: list[CodeChunk] = []
    seen: set[str] = set()
    for path, text in files:
        if path in seen:
            raise InputError(f"file {path!r} given twice", where="evidence chunking")
        seen.add(path)
        lines = text.splitlines()
        start = 1
        while start <= len(lines):
            end = min(start + window - 1, len(lines))
            body = "\n".join(lines[start - 1 : end])
            chunks.append(CodeChunk(f"{path}:{start}-{end}", path, start, end, body))
            if end == len(lines):
                break
            start += step
    return chunks


def identifier_parts(identifier: str) -> list[str]:
    """Lower-cased snake_case / camelCase / digit parts: `HTTPServer_v2` → http, server, v, 2."""
    return [part.lower() for piece in identifier.split("_") for part in _CAMEL_PART.findall(piece)]


def tokenize(text: str) -> list[str]:
    """Each identifier lower-cased whole, then its parts when it has several; stopwords and
    one-character parts dropped."""
    tokens: list[str] = []
    for match in _IDENTIFIER.finditer(text):
        word = match.group()
        whole = word.lower()
        if whole not in _STOPWORDS and len(whole.strip("_")) > 1:
            tokens.append(whole)
        parts = identifier_parts(word)
        if len(parts) > 1:
            tokens.extend(p for p in parts if len(p) > 1 and p not in _STOPWORDS)
    return tokens


def code_identifiers(query: str) -> list[str]:
    """The query's code-like identifiers, lower-cased, in first-seen order."""
    found: dict[str, None] = {}
    for quoted in _BACKTICKED.findall(query):
        for match in _IDENTIFIER.finditer(quoted):
            found.setdefault(match.group().lower())
    for match in _IDENTIFIER.finditer(query):
        if len(identifier_parts(match.group())) > 1:
            found.setdefault(match.group().lower())
    return list(found)


class BM25Index:
    """Okapi BM25 over pre-tokenised documents (postings as numpy arrays)."""

    def __init__(
        self, documents: Sequence[Sequence[str]], *, k1: float = BM25_K1, b: float = BM25_B
    ) -> None:
        self.k1 = k1
        self.b = b
        self.n_docs = len(documents)
        lengths = np.array([len(doc) for doc in documents], dtype=np.float64)
        avgdl = float(lengths.mean()) if self.n_docs and lengths.sum() > 0 else 1.0
        self._norm = k1 * (1.0 - b + b * lengths / avgdl)
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for index, doc in enumerate(documents):
            for term, tf in Counter(doc).items():
                docs, tfs = postings.setdefault(term, ([], []))
                docs.append(index)
                tfs.append(tf)
        self._postings = {
            term: (np.array(docs, dtype=np.int64), np.array(tfs, dtype=np.float64))
            for term, (docs, tfs) in postings.items()
        }

    def idf(self, term: str) -> float:
        """ln(1 + (N − df + 0.5) / (df + 0.5)); 0 for an unseen term."""
        posting = self._postings.get(term)
        if posting is None:
            return 0.0
        df = posting[0].size
        return math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))

    def scores(self, query_terms: Iterable[str]) -> np.ndarray:
        """BM25 score of every document; each distinct query term counts once."""
        scores = np.zeros(self.n_docs, dtype=np.float64)
        for term in dict.fromkeys(query_terms):
            posting = self._postings.get(term)
            if posting is None:
                continue
            docs, tf = posting
            scores[docs] += self.idf(term) * tf * (self.k1 + 1.0) / (tf + self._norm[docs])
        return scores


def _ranked_positive(scores: np.ndarray) -> np.ndarray:
    """Indices with a positive score, best first, ties by index."""
    hits = np.flatnonzero(scores > 0)
    return hits[np.lexsort((hits, -scores[hits]))]


class EvidenceRetriever:
    """BM25 (+ identifier RRF) over line-window chunks of the given files."""

    name = "bm25-evidence"

    def __init__(
        self,
        files: Iterable[tuple[str, str]],
        *,
        window: int = DEFAULT_WINDOW,
        overlap: int = DEFAULT_OVERLAP,
        k1: float = BM25_K1,
        b: float = BM25_B,
        fusion: bool = True,
        rrf_k: int = RRF_K,
    ) -> None:
        self.chunks: tuple[CodeChunk, ...] = tuple(
            chunk_files(files, window=window, overlap=overlap)
        )
        self.fusion = fusion
        self.rrf_k = rrf_k
        self._ids = np.array([c.id for c in self.chunks], dtype=object)
        self._index = BM25Index(
            [tokenize(c.path) + tokenize(c.text) for c in self.chunks], k1=k1, b=b
        )
        self._mentions = [
            frozenset(m.group().lower() for m in _IDENTIFIER.finditer(c.text)) for c in self.chunks
        ]
        self._defines = [
            frozenset(name.lower() for name in _DEFINITION.findall(c.text)) for c in self.chunks
        ]

    def _identifier_scores(self, identifiers: Sequence[str]) -> np.ndarray:
        return np.array(
            [
                sum(2 * (ident in defines) + (ident in mentions) for ident in identifiers)
                for defines, mentions in zip(self._defines, self._mentions, strict=True)
            ],
            dtype=np.float64,
        )

    def ranking(self, query: str) -> list[str]:
        """Every matching chunk id, best first."""
        bm25_scores = self._index.scores(tokenize(query))
        bm25 = _ranked_positive(bm25_scores)
        identifiers = code_identifiers(query)
        if not self.fusion or not identifiers:
            return self._ids[bm25].tolist()
        ident_scores = self._identifier_scores(identifiers)
        fused = np.zeros(len(self.chunks), dtype=np.float64)
        for ranked in (bm25, _ranked_positive(ident_scores)):
            fused[ranked] += 1.0 / (self.rrf_k + np.arange(1, ranked.size + 1))
        hits = np.flatnonzero(fused > 0)
        # Two lists that swap a pair give that pair equal RRF scores; the exact-symbol signal
        # (definitions before mentions) decides, then BM25, then chunk order.
        order = np.lexsort((hits, -bm25_scores[hits], -ident_scores[hits], -fused[hits]))
        return self._ids[hits[order]].tolist()

    def retrieve(self, query: str, k: int = 10) -> list[str]:
        """The k best chunk ids for `query` (fewer when fewer chunks match)."""
        if k < 1:
            raise InputError(f"k must be >= 1, got {k}", where=self.name)
        return self.ranking(query)[:k]

    def retrieve_fn(self, k: int) -> Callable[[str], list[str]]:
        """A `retrieve(query)` for `evaluate_retrieval`, fixed at cut-off k."""
        return lambda query: self.retrieve(query, k)

    def chunks_overlapping(self, location: str) -> list[str]:
        """Chunk ids overlapping a `path:line` or `path:start-end` location, in chunk order."""
        path, start, end = parse_location(location)
        found = [c.id for c in self.chunks if c.path == path and c.start <= end and c.end >= start]
        if not found:
            raise InputError(
                f"no chunk overlaps {location!r}",
                where=self.name,
                fix="check the path is among the indexed files and the lines exist",
            )
        return found


def parse_location(location: str) -> tuple[str, int, int]:
    """`path:line` or `path:start-end` → (path, start, end)."""
    path, sep, lines = location.rpartition(":")
    match = re.fullmatch(r"(\d+)(?:-(\d+))?", lines)
    if not sep or not path or match is None:
        raise InputError(f"bad location {location!r}", fix="write path:line or path:start-end")
    start = int(match.group(1))
    end = int(match.group(2) or start)
    if start < 1 or end < start:
        raise InputError(f"bad line range in {location!r}", fix="lines are 1-based, start <= end")
    return path, start, end


class EvidenceCase(BaseModel):
    """A query with gold evidence: exact chunk ids and/or file:line ranges (mapped to every
    chunk overlapping them)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    query: str
    gold_chunks: list[str] = Field(default_factory=list)
    gold_ranges: list[str] = Field(default_factory=list)


def gold_relevant(retriever: EvidenceRetriever, case: EvidenceCase) -> list[str]:
    """The case's relevant chunk ids, in chunk order; unknown chunk ids are an input error."""
    known = {c.id for c in retriever.chunks}
    relevant = set()
    for chunk_id in case.gold_chunks:
        if chunk_id not in known:
            raise InputError(
                f"gold chunk {chunk_id!r} is not a chunk of the indexed files",
                where=f"evidence case {case.id!r}",
                fix="use gold_ranges for file:line evidence, or match the chunk window",
            )
        relevant.add(chunk_id)
    for location in case.gold_ranges:
        relevant.update(retriever.chunks_overlapping(location))
    return [c.id for c in retriever.chunks if c.id in relevant]


def evaluate_evidence_retriever(
    retriever: EvidenceRetriever,
    cases: Iterable[EvidenceCase | Mapping[str, Any]],
    k: int = 10,
) -> RetrievalReport:
    """Score the retriever on gold evidence cases with the SPEC §4 harness."""
    parsed: list[EvidenceCase] = []
    for index, raw in enumerate(cases):
        try:
            parsed.append(
                raw if isinstance(raw, EvidenceCase) else EvidenceCase.model_validate(raw)
            )
        except ValidationError as exc:
            first = exc.errors()[0]
            raise InputError(
                f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}",
                where=f"evidence case #{index}",
                fix="a case is {id, query, gold_chunks?: [chunk id], gold_ranges?: [path:lines]}",
            ) from None
    retrieval_cases = [
        RetrievalCase(id=c.id, query=c.query, relevant=gold_relevant(retriever, c)) for c in parsed
    ]
    return evaluate_retrieval(retrieval_cases, retriever.retrieve_fn(k), k)
