from __future__ import annotations

import json
from datetime import timedelta

from tests.conftest import NOW
from trialist.app import build_app
from trialist.events import EventLog
from trialist.store import Store


def test_cancel_sets_canceled_and_keeps_access_until_period_end(store: Store) -> None:
    app = build_app(store, EventLog(), "whsec_e2e", clock=lambda: NOW)
    trial_id = app.handle("POST", "/trials", {}, b'{"email": "a@example.com"}').body["id"]
    sub = store.subscription_for_trial(trial_id)
    assert sub is not None

    body = json.dumps({"subscription_id": sub.id}).encode()
    resp = app.handle("POST", "/subscriptions/cancel", {}, body)

    assert resp.status == 200
    assert store.status_of(sub.id) == "canceled"
    canceled = store.subscription(sub.id)
    assert canceled is not None
    assert canceled.access_ends_at == NOW + timedelta(days=14)


def test_cancel_unknown_subscription_returns_404(store: Store) -> None:
    app = build_app(store, EventLog(), "whsec_e2e", clock=lambda: NOW)
    resp = app.handle("POST", "/subscriptions/cancel", {}, b'{"subscription_id": 42}')
    assert resp.status == 404
