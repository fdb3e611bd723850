from __future__ import annotations

from unittest.mock import patch

from billing.subscriptions import create_subscription, status_of
from billing.webhooks import handle_payment_succeeded
from tests.e2e.conftest import ApiClient


def test_payment_succeeded_activates_the_subscription(api: ApiClient) -> None:
    sub_id = create_subscription(api.conn, "ada@example.com")

    handle_payment_succeeded(api.conn, api.crm, sub_id)

    assert status_of(api.conn, sub_id) == "active"


def test_payment_failed_marks_the_subscription_past_due(api: ApiClient) -> None:
    sub_id = create_subscription(api.conn, "ada@example.com")

    with patch("billing.webhooks.set_status") as set_status:
        api.send_webhook("payment.failed", sub_id)

    set_status.assert_called_once_with(api.conn, sub_id, "past_due")


def test_refund_webhook_is_accepted(api: ApiClient) -> None:
    sub_id = create_subscription(api.conn, "ada@example.com")

    response = api.send_webhook("payment.refunded", sub_id)

    assert response.status == 200


def test_invalid_signature_is_rejected_without_changes(api: ApiClient) -> None:
    sub_id = create_subscription(api.conn, "ada@example.com")

    response = api.send_webhook("payment.succeeded", sub_id, secret=b"not-the-secret")

    assert response.status == 401
    assert status_of(api.conn, sub_id) == "trialing"
