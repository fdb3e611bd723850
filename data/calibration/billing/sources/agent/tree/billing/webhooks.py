"""Payment-provider webhooks: signature check and one handler per event type."""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
from collections.abc import Callable
from typing import Any, Protocol

from billing.subscriptions import set_status

SIGNATURE_HEADER = "Billing-Signature"


class Crm(Protocol):
    def notify_activation(self, sub_id: int) -> None: ...


def verify_signature(body: bytes, signature: str | None, secret: bytes) -> bool:
    """HMAC-SHA256 hex digest of the raw body, compared in constant time."""
    if not signature:
        return False
    expected = hmac.new(secret, body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


def handle_payment_succeeded(conn: sqlite3.Connection, crm: Crm, sub_id: int) -> None:
    set_status(conn, sub_id, "active")
    crm.notify_activation(sub_id)


def handle_payment_failed(conn: sqlite3.Connection, crm: Crm, sub_id: int) -> None:
    set_status(conn, sub_id, "past_due")


def handle_payment_refunded(conn: sqlite3.Connection, crm: Crm, sub_id: int) -> None:
    """A refunded payment ends the paid period at once."""
    set_status(conn, sub_id, "refunded")


HANDLERS: dict[str, Callable[[sqlite3.Connection, Crm, int], None]] = {
    "payment.succeeded": handle_payment_succeeded,
    "payment.failed": handle_payment_failed,
}


def dispatch(conn: sqlite3.Connection, crm: Crm, event: dict[str, Any]) -> bool:
    """Run the handler of a verified event; False when the type is not one billing acts on."""
    handler = HANDLERS.get(str(event.get("type", "")))
    if handler is None:
        return False
    handler(conn, crm, int(event["data"]["subscriptionId"]))
    return True
