from __future__ import annotations

import json
from datetime import timedelta

from tests.conftest import NOW
from trialist.app import build_app
from trialist.events import EventLog
from trialist.http import Response
from trialist.store import Store


def post_trial(store: Store, email: str) -> Response:
    app = build_app(store, EventLog(), "whsec_e2e", clock=lambda: NOW)
    return app.handle("POST", "/trials", {}, json.dumps({"email": email}).encode())


def test_post_trials_returns_201_and_persists_trial(store: Store) -> None:
    resp = post_trial(store, "a@example.com")
    assert resp.status == 201
    trial = store.conn.execute("SELECT * FROM trials WHERE id = ?", (resp.body["id"],)).fetchone()
    assert trial["ends_at"] == (NOW + timedelta(days=14)).isoformat()
    assert resp.body["trialEndsAt"] == trial["ends_at"]


def test_post_trials_twice_returns_409(store: Store) -> None:
    post_trial(store, "a@example.com")
    resp = post_trial(store, "a@example.com")
    assert resp.status == 409
    assert store.count_trials("a@example.com") == 1


def test_post_trials_rejects_invalid_email(store: Store) -> None:
    resp = post_trial(store, "not-an-email")
    assert resp.status == 400
