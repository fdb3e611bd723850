from __future__ import annotations

import sqlite3
from datetime import datetime

import pytest

from tests.support import status_of
from trialist.events import EventBus
from trialist.subscriptions import InvalidTransitionError, cancel
from trialist.trials import start_trial
from trialist.webhooks import process_event, sign, verify_signature

SECRET = b"whsec_unit"


def test_signature_of_the_exact_body_verifies() -> None:
    body = b'{"id": "evt_1"}'
    assert verify_signature(SECRET, body, sign(SECRET, body))


@pytest.mark.parametrize(
    ("body", "header"),
    [
        (b'{"id": "evt_2"}', sign(SECRET, b'{"id": "evt_1"}')),
        (b'{"id": "evt_1"}', sign(b"other-secret", b'{"id": "evt_1"}')),
        (b'{"id": "evt_1"}', None),
    ],
)
def test_tampered_or_missing_signature_fails(body: bytes, header: str | None) -> None:
    assert not verify_signature(SECRET, body, header)


def test_replayed_event_is_applied_once(
    conn: sqlite3.Connection, now: datetime, bus: EventBus
) -> None:
    sub_id = start_trial(conn, "a@example.com", now, bus).subscription_id
    event = {"id": "evt_1", "type": "payment.failed", "data": {"subscriptionId": sub_id}}
    assert process_event(conn, event, now) == "processed"
    assert process_event(conn, event, now) == "duplicate"


def test_payment_cannot_revive_a_canceled_subscription(
    conn: sqlite3.Connection, now: datetime, bus: EventBus
) -> None:
    sub_id = start_trial(conn, "a@example.com", now, bus).subscription_id
    cancel(conn, sub_id)
    event = {"id": "evt_9", "type": "payment.succeeded", "data": {"subscriptionId": sub_id}}
    with pytest.raises(InvalidTransitionError):
        process_event(conn, event, now)
    assert status_of(conn, sub_id) == "canceled"
