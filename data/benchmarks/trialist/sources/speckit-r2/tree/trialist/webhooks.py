"""Payment-provider webhooks (FR-006..FR-008, FR-010): authenticity, dedup, dispatch."""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from trialist.subscriptions import set_period_end, set_status

SIGNATURE_HEADER = "X-Trialist-Signature"

Handler = Callable[[sqlite3.Connection, dict[str, Any]], None]


class MalformedEventError(ValueError):
    """The verified body is not an event this service understands."""


def sign(secret: bytes, body: bytes) -> str:
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify_signature(secret: bytes, body: bytes, header: str | None) -> bool:
    """FR-007: HMAC-SHA256 over the raw body."""
    if not secret or not header:
        return False
    return sign(secret, body) == header


def _subscription_id(data: dict[str, Any]) -> int:
    value = data.get("subscriptionId")
    if not isinstance(value, int) or isinstance(value, bool):
        raise MalformedEventError("data.subscriptionId must be an integer")
    return value


def on_payment_succeeded(conn: sqlite3.Connection, data: dict[str, Any]) -> None:
    sub_id = _subscription_id(data)
    set_status(conn, sub_id, "active")
    conn.execute(
        "UPDATE trials SET status = 'converted'"
        " WHERE id = (SELECT trial_id FROM subscriptions WHERE id = ?)",
        (sub_id,),
    )
    if "periodEnd" in data:
        try:
            period_end = datetime.fromisoformat(str(data["periodEnd"])).astimezone(UTC)
        except ValueError as exc:
            raise MalformedEventError("data.periodEnd must be an ISO-8601 timestamp") from exc
        set_period_end(conn, sub_id, period_end)


def on_payment_failed(conn: sqlite3.Connection, data: dict[str, Any]) -> None:
    sub_id = _subscription_id(data)
    set_status(conn, sub_id, "past_due")


HANDLERS: dict[str, Handler] = {
    "payment.succeeded": on_payment_succeeded,
    "payment.failed": on_payment_failed,
}


def process_event(conn: sqlite3.Connection, event: Any, now: datetime) -> str:
    """Apply one verified event: 'processed', 'duplicate' (FR-010) or 'ignored' (unknown type)."""
    if not isinstance(event, dict) or not isinstance(event.get("id"), str):
        raise MalformedEventError("an event needs a string id")
    if not isinstance(event.get("data"), dict):
        raise MalformedEventError("an event needs a data object")
    handler = HANDLERS.get(str(event.get("type")))
    if handler is None:
        return "ignored"
    with conn:
        seen = conn.execute("SELECT 1 FROM webhook_events WHERE id = ?", (event["id"],)).fetchone()
        if seen is not None:
            return "duplicate"
        handler(conn, event["data"])
        conn.execute(
            "INSERT INTO webhook_events (id, type, received_at) VALUES (?, ?, ?)",
            (event["id"], event["type"], now.isoformat()),
        )
    return "processed"
