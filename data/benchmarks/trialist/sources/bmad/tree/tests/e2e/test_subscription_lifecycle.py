from __future__ import annotations

from tests.e2e.api_client import ApiClient


def test_cancel_keeps_access_until_period_end(api: ApiClient) -> None:
    sub_id = api.start_trial("a@example.com")

    resp = api.post("/subscriptions/cancel", {"subscriptionId": sub_id})

    assert resp.status == 200
    assert api.status_of(sub_id) == "canceled"
    row = api.subscription_row(sub_id)
    assert row["access_ends_at"] == row["period_end"]


def test_upgrade_charges_the_prorated_difference(api: ApiClient) -> None:
    sub_id = api.start_trial("a@example.com")
    api.send_webhook("payment.succeeded", sub_id)

    resp = api.post("/subscriptions/upgrade", {"subscriptionId": sub_id, "plan": "pro"})

    assert resp.status == 200
    assert resp.body == {"plan": "pro", "chargeCents": 2000}


def test_trialing_subscription_cannot_be_upgraded(api: ApiClient) -> None:
    sub_id = api.start_trial("a@example.com")

    resp = api.post("/subscriptions/upgrade", {"subscriptionId": sub_id, "plan": "pro"})

    assert resp.status == 409
