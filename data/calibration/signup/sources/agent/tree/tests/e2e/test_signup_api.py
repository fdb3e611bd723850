from __future__ import annotations

from signup.accounts import find_account
from tests.e2e.conftest import ApiClient


def test_signup_creates_an_account(api: ApiClient) -> None:
    response = api.post("/signups", {"email": "ada@example.com"})

    assert response.status == 201
    assert find_account(api.conn, "ada@example.com")["id"] == response.body["accountId"]


def test_signup_without_email_is_rejected(api: ApiClient) -> None:
    response = api.post("/signups", {"plan": "team"})

    assert response.status == 422
