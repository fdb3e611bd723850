"""Payment provider webhooks (Story 2.1, FR4-FR6)."""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
from collections.abc import Callable
from typing import Any

from trialist.repository import set_status

SIGNATURE_HEADER = "Trialist-Signature"


def verify_signature(body: bytes, signature: str | None, secret: bytes) -> bool:
    """NFR2: HMAC-SHA256 hex digest of the raw body, compared in constant time."""
    if not signature:
        return False
    expected = hmac.new(secret, body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


def _on_payment_succeeded(conn: sqlite3.Connection, sub_id: int) -> None:
    set_status(conn, sub_id, "active")


def _on_payment_failed(conn: sqlite3.Connection, sub_id: int) -> None:
    set_status(conn, sub_id, "past_due")


HANDLERS: dict[str, Callable[[sqlite3.Connection, int], None]] = {
    "payment.succeeded": _on_payment_succeeded,
    "payment.failed": _on_payment_failed,
}


def dispatch(conn: sqlite3.Connection, event: dict[str, Any]) -> bool:
    """Route a verified event to its handler; False when the type is not one we act on."""
    handler = HANDLERS.get(event.get("type", ""))
    if handler is None:
        return False
    handler(conn, int(event["data"]["subscriptionId"]))
    return True
