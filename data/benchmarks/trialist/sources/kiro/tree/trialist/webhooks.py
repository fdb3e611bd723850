"""Payment webhooks (Requirement 2): signature check and per-type handlers."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from typing import Any

from trialist.store import Store

SIGNATURE_HEADER = "X-Signature"


def verify_signature(secret: str, payload: bytes, signature: str) -> bool:
    expected = hmac.new(secret.encode(), payload, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


def handle_payment_succeeded(store: Store, data: dict[str, Any]) -> None:
    store.set_status(int(data["subscription_id"]), "active")


def handle_payment_failed(store: Store, data: dict[str, Any]) -> None:
    store.set_status(int(data["subscription_id"]), "past_due")


HANDLERS: dict[str, Callable[[Store, dict[str, Any]], None]] = {
    "payment.succeeded": handle_payment_succeeded,
    "payment.failed": handle_payment_failed,
}
