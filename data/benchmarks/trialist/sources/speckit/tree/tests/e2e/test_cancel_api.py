from __future__ import annotations

from tests.e2e.conftest import Client
from tests.support import status_of

PERIOD_END = "2026-04-15T09:00:00+00:00"


def test_cancel_keeps_access_until_the_paid_period_ends(client: Client) -> None:
    sub_id = client.start_trial("a@example.com")
    client.webhook(
        {
            "id": "evt_1",
            "type": "payment.succeeded",
            "data": {"subscriptionId": sub_id, "periodEnd": PERIOD_END},
        }
    )
    resp = client.post("/subscriptions/cancel", {"subscriptionId": sub_id})
    assert resp.status == 200
    assert status_of(client.conn, sub_id) == "canceled"
    row = client.conn.execute(
        "SELECT access_ends_at FROM subscriptions WHERE id = ?", (sub_id,)
    ).fetchone()
    assert row["access_ends_at"] == PERIOD_END == resp.body["accessEndsAt"]


def test_cancelling_twice_is_a_conflict(client: Client) -> None:
    sub_id = client.start_trial("a@example.com")
    client.post("/subscriptions/cancel", {"subscriptionId": sub_id})
    resp = client.post("/subscriptions/cancel", {"subscriptionId": sub_id})
    assert (resp.status, resp.body["error"]) == (409, "invalid_transition")
