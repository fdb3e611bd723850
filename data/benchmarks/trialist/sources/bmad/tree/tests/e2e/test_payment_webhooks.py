from __future__ import annotations

from unittest.mock import patch

from tests.e2e.api_client import ApiClient


def test_payment_succeeded_activates_subscription(api: ApiClient) -> None:
    sub_id = api.start_trial("a@example.com")

    with patch("trialist.webhooks.set_status") as set_status:
        api.send_webhook("payment.succeeded", sub_id)

    set_status.assert_called_once_with(api.conn, sub_id, "active")


def test_payment_failed_marks_subscription_past_due(api: ApiClient) -> None:
    sub_id = api.start_trial("a@example.com")

    resp = api.send_webhook("payment.failed", sub_id)

    assert resp.status == 200
    assert api.status_of(sub_id) == "past_due"


def test_invalid_signature_is_rejected_without_changes(api: ApiClient) -> None:
    sub_id = api.start_trial("a@example.com")

    resp = api.send_webhook("payment.succeeded", sub_id, secret=b"not-the-secret")

    assert resp.status == 401
    assert api.status_of(sub_id) == "trialing"
