"""The evidence retriever on a small in-test code base with known answers."""

from __future__ import annotations

import math

import pytest

from evalflow.domain.retrieval.evidence import (
    BM25Index,
    EvidenceCase,
    EvidenceRetriever,
    chunk_files,
    code_identifiers,
    evaluate_evidence_retriever,
    identifier_parts,
    parse_location,
    tokenize,
)
from evalflow.errors import InputError


def _filler(prefix: str, count: int) -> str:
    return "".join(
        f"\n\ndef {prefix}_helper_{i}(value):\n    return value + {i}\n" for i in range(count)
    )


REFUNDS = (
    '"""Refunds for captured payments."""\n'
    "from billing.gateway import Gateway\n"
    + _filler("billing", 4)
    + "\n\ndef refund_payment(order_id, amount, gateway: Gateway):\n"
    "    if amount <= 0:\n"
    "        raise ValueError('refund amount must be positive')\n"
    "    captured = gateway.captured_total(order_id)\n"
    "    if amount > captured:\n"
    "        raise ValueError('cannot refund more than was captured')\n"
    "    return gateway.refund(order_id, amount)\n" + _filler("ledger", 4)
)
SESSIONS = (
    '"""Session storage."""\n'
    "import time\n" + _filler("session", 5) + "\n\nclass SessionStore:\n"
    "    def __init__(self, ttl_seconds):\n"
    "        self.ttl_seconds = ttl_seconds\n"
    "        self.sessions = {}\n"
    "\n"
    "    def expire_sessions(self, now=None):\n"
    "        now = time.time() if now is None else now\n"
    "        stale = [k for k, s in self.sessions.items() if now - s.created > self.ttl_seconds]\n"
    "        for key in stale:\n"
    "            del self.sessions[key]\n"
    "        return len(stale)\n"
)
WEBHOOKS = (
    '"""Inbound payment provider webhooks."""\n'
    "import hmac\n"
    "from billing.refunds import refund_payment\n"
    + _filler("webhook", 3)
    + "\n\ndef verifyWebhookSignature(payload, signature, secret):\n"
    "    expected = hmac.new(secret, payload, 'sha256').hexdigest()\n"
    "    return hmac.compare_digest(expected, signature)\n"
    "\n\ndef handle_chargeback(event):\n"
    "    return refund_payment(event['order_id'], event['amount'], event['gateway'])\n"
)
FILES = [
    ("billing/refunds.py", REFUNDS),
    ("auth/sessions.py", SESSIONS),
    ("api/webhooks.py", WEBHOOKS),
]


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if needle in line)


def _chunk_holding(retriever: EvidenceRetriever, path: str, line: int) -> str:
    """The first chunk whose window contains the line."""
    return next(c.id for c in retriever.chunks if c.path == path and c.start <= line <= c.end)


@pytest.fixture(scope="module")
def retriever() -> EvidenceRetriever:
    return EvidenceRetriever(FILES)


def test_chunks_overlap_and_cover_every_line() -> None:
    chunks = chunk_files([("a.py", "\n".join(f"x{i}" for i in range(1, 48)))], window=20, overlap=5)
    assert [c.id for c in chunks] == ["a.py:1-20", "a.py:16-35", "a.py:31-47"]
    assert chunks[1].text.splitlines()[0] == "x16"
    assert chunk_files([("empty.py", "")]) == []
    assert [c.id for c in chunk_files([("s.py", "one\n")])] == ["s.py:1-1"]
    with pytest.raises(InputError):
        chunk_files([("a.py", "x")], window=5, overlap=5)
    with pytest.raises(InputError, match="twice"):
        chunk_files([("a.py", "x"), ("a.py", "y")])


def test_identifiers_split_and_stay_whole() -> None:
    assert identifier_parts("verifyWebhookSignature") == ["verify", "webhook", "signature"]
    assert identifier_parts("HTTPServer_v2") == ["http", "server", "v", "2"]
    assert tokenize("def refund_payment(orderId):") == [
        "def", "refund_payment", "refund", "payment", "orderid", "order", "id",
    ]  # fmt: skip
    assert tokenize("where is the session") == ["session"]
    assert code_identifiers("where is `refund` and parse_config, OrderId or plain") == [
        "refund", "parse_config", "orderid",
    ]  # fmt: skip


def test_bm25_matches_the_okapi_formula() -> None:
    index = BM25Index([["a", "b"], ["a"], ["c"]], k1=1.2, b=0.75)
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    avgdl = 4 / 3
    expected0 = idf * 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 2 / avgdl))
    expected1 = idf * 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 1 / avgdl))
    assert index.scores(["a", "a", "zzz"]).tolist() == pytest.approx([expected0, expected1, 0.0])
    assert index.idf("zzz") == 0.0


def test_finds_the_implementing_chunk(retriever: EvidenceRetriever) -> None:
    refund_line = _line_of(REFUNDS, "def refund_payment")
    expire_line = _line_of(SESSIONS, "def expire_sessions")
    verify_line = _line_of(WEBHOOKS, "def verifyWebhookSignature")
    assert retriever.retrieve("refund amount larger than captured is rejected", 1) == [
        _chunk_holding(retriever, "billing/refunds.py", refund_line)
    ]
    assert retriever.retrieve("expire stale sessions after ttl", 1) == [
        _chunk_holding(retriever, "auth/sessions.py", expire_line)
    ]
    assert retriever.retrieve("verify webhook signature with hmac", 1) == [
        _chunk_holding(retriever, "api/webhooks.py", verify_line)
    ]


def test_identifier_fusion_puts_the_definition_first(retriever: EvidenceRetriever) -> None:
    top = retriever.retrieve("where is `refund_payment` implemented", 3)
    refund_line = _line_of(REFUNDS, "def refund_payment")
    assert top[0] == _chunk_holding(retriever, "billing/refunds.py", refund_line)
    assert any(cid.startswith("api/webhooks.py") for cid in top)


def test_fusion_prefers_the_definition_over_a_dense_caller() -> None:
    caller = (
        "from billing.refunds import refund_payment\n"
        "def retry_refunds(batch):\n"
        "    for order in batch:\n"
        "        refund_payment(order.id, order.amount, order.gateway)\n"
        "    return refund_payment\n"
    )
    files = [*FILES, ("jobs/retry.py", caller)]
    query = "`refund_payment`"
    # A short chunk repeating the symbol wins on BM25 alone ...
    assert EvidenceRetriever(files, fusion=False).retrieve(query, 1) == ["jobs/retry.py:1-5"]
    # ... the identifier ranking knows where it is defined.
    refund_line = _line_of(REFUNDS, "def refund_payment")
    fused = EvidenceRetriever(files).retrieve(query, 2)
    assert fused == [
        _chunk_holding(EvidenceRetriever(files), "billing/refunds.py", refund_line),
        "jobs/retry.py:1-5",
    ]


def test_evaluation_with_gold_ranges_and_chunks(retriever: EvidenceRetriever) -> None:
    refund_line = _line_of(REFUNDS, "raise ValueError('cannot refund")
    verify_line = _line_of(WEBHOOKS, "hmac.compare_digest")
    cases = [
        EvidenceCase(
            id="refund-cap",
            query="refund more than was captured raises ValueError",
            gold_ranges=[f"billing/refunds.py:{refund_line}"],
        ),
        {
            "id": "webhook-sig",
            "query": "compare digest of webhook signature",
            "gold_chunks": [_chunk_holding(retriever, "api/webhooks.py", verify_line)],
        },
    ]
    report = evaluate_evidence_retriever(retriever, cases, k=3)
    assert report.mean_recall == 1.0
    assert report.mrr == 1.0
    assert report.cases[0].n_relevant == len(
        retriever.chunks_overlapping(f"billing/refunds.py:{refund_line}")
    )


def test_is_deterministic_with_ties_in_file_order() -> None:
    twin = "def shared_name():\n    return 1\n"
    twins = EvidenceRetriever([("b.py", twin), ("a.py", twin)])
    assert twins.retrieve("shared_name", 5) == ["b.py:1-2", "a.py:1-2"]
    assert EvidenceRetriever(FILES).ranking("payment refund") == EvidenceRetriever(FILES).ranking(
        "payment refund"
    )
    assert twins.retrieve("nothing matches here", 5) == []


def test_fusion_off_is_plain_bm25() -> None:
    plain = EvidenceRetriever(FILES, fusion=False)
    assert plain.retrieve("verify webhook signature", 1)[0].startswith("api/webhooks.py")


def test_bad_gold_and_locations(retriever: EvidenceRetriever) -> None:
    assert parse_location("src/a.py:10-20") == ("src/a.py", 10, 20)
    assert parse_location("a.py:3") == ("a.py", 3, 3)
    for bad in ("a.py", "a.py:0", "a.py:9-3", ":4", "a.py:x"):
        with pytest.raises(InputError):
            parse_location(bad)
    with pytest.raises(InputError, match="not a chunk"):
        evaluate_evidence_retriever(
            retriever,
            [EvidenceCase(id="x", query="refund", gold_chunks=["billing/refunds.py:2-9"])],
        )
    with pytest.raises(InputError, match="evidence case #0"):
        evaluate_evidence_retriever(retriever, [{"id": "x", "query": "q", "gold": ["a.py:1"]}])
    with pytest.raises(InputError, match="no chunk overlaps"):
        retriever.chunks_overlapping("missing.py:1")
