from __future__ import annotations

from tests.e2e.conftest import Client
from tests.support import status_of


def test_payment_succeeded_activates_the_subscription(client: Client) -> None:
    sub_id = client.start_trial("a@example.com")
    event = {"id": "evt_1", "type": "payment.succeeded", "data": {"subscriptionId": sub_id}}
    resp = client.webhook(event)
    assert resp.status == 200
    assert status_of(client.conn, sub_id) == "active"


def test_payment_failed_marks_the_subscription_past_due(client: Client) -> None:
    sub_id = client.start_trial("a@example.com")
    client.webhook({"id": "evt_2", "type": "payment.failed", "data": {"subscriptionId": sub_id}})
    assert status_of(client.conn, sub_id) == "past_due"


def test_badly_signed_webhook_is_rejected(client: Client) -> None:
    sub_id = client.start_trial("a@example.com")
    event = {"id": "evt_3", "type": "payment.succeeded", "data": {"subscriptionId": sub_id}}
    resp = client.webhook(event, signature="sha256=" + "0" * 64)
    assert resp.status == 401
    assert status_of(client.conn, sub_id) == "trialing"


def test_webhook_for_an_unknown_subscription_is_404(client: Client) -> None:
    resp = client.webhook({"id": "evt_4", "type": "payment.failed", "data": {"subscriptionId": 99}})
    assert resp.status == 404
