from __future__ import annotations

from datetime import timedelta

from tests.e2e.api_client import NOW, ApiClient


def test_signup_returns_201_and_persists_trial_end(api: ApiClient) -> None:
    resp = api.post("/trials", {"email": "a@example.com"})

    assert resp.status == 201
    row = api.conn.execute("SELECT * FROM trials WHERE id = ?", (resp.body["id"],)).fetchone()
    assert row["ends_at"] == (NOW + timedelta(days=14)).isoformat()


def test_duplicate_signup_is_409(api: ApiClient) -> None:
    api.post("/trials", {"email": "a@example.com"})

    resp = api.post("/trials", {"email": "a@example.com"})

    assert resp.status == 409
    assert api.count_trials("a@example.com") == 1


def test_invalid_email_is_400(api: ApiClient) -> None:
    assert api.post("/trials", {"email": "not-an-email"}).status == 400
