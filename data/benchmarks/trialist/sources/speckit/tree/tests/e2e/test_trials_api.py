from __future__ import annotations

from datetime import timedelta

from tests.e2e.conftest import NOW, Client
from tests.support import count_trials


def test_signup_creates_a_fourteen_day_trial(client: Client) -> None:
    resp = client.post("/trials", {"email": "a@example.com"})
    assert resp.status == 201
    trial = client.conn.execute("SELECT * FROM trials WHERE id = ?", (resp.body["id"],)).fetchone()
    assert trial["ends_at"] == resp.body["trialEndsAt"] == (NOW + timedelta(days=14)).isoformat()


def test_signup_with_an_active_trial_is_409_and_creates_nothing(client: Client) -> None:
    client.post("/trials", {"email": "a@example.com"})
    resp = client.post("/trials", {"email": "a@example.com"})
    assert resp.status == 409
    assert count_trials(client.conn, "a@example.com") == 1


def test_malformed_requests_get_stable_error_codes(client: Client) -> None:
    bad_email = client.post("/trials", {"email": "nope"})
    not_json = client.app.handle("POST", "/trials", {}, b"{")
    assert (bad_email.status, bad_email.body["error"]) == (400, "invalid_email")
    assert (not_json.status, not_json.body["error"]) == (400, "invalid_json")
