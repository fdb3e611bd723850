from __future__ import annotations

import pytest

from tests.helpers import Api, FakeClock, count_links, target_of


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def api(conn, clock) -> Api:
    return Api(conn, clock)


def test_create_short_link(api, conn) -> None:
    resp = api.post({"url": "https://docs.example.org/guide"})
    assert resp.status == 201
    assert target_of(conn, resp.body["code"]) == "https://docs.example.org/guide"


def test_reject_unsupported_scheme(api, conn) -> None:
    resp = api.post({"url": "file:///etc/passwd"})
    assert resp.status == 400
    assert count_links(conn) == 0


def test_rate_limit_per_key(api) -> None:
    for _ in range(10):
        api.post({"url": "https://example.org"})
    resp = api.post({"url": "https://example.org"})
    assert resp.status == 429
    assert int(resp.headers["Retry-After"]) > 0


def test_redirect(api) -> None:
    code = api.post({"url": "https://example.org/x"}).body["code"]
    resp = api.get(f"/{code}")
    assert resp.status == 301
    assert resp.headers["Location"] == "https://example.org/x"


def test_unknown_code(api) -> None:
    assert api.get("/zzzzzzz").status == 404


def test_expired_link(api, clock) -> None:
    code = api.post({"url": "https://example.org", "expiresInDays": 1}).body["code"]
    clock.tick(days=1)
    assert api.get(f"/{code}").status == 410


def test_stats(api) -> None:
    code = api.post({"url": "https://example.org"}).body["code"]
    api.get(f"/{code}")
    assert api.get(f"/links/{code}/stats").body["clicks"] == 1


def test_expiry_out_of_range(api, conn) -> None:
    for days in (0, 366):
        resp = api.post({"url": "https://example.org", "expiresInDays": days})
        assert resp.body["error"] == "invalid_expiry"
    assert count_links(conn) == 0
