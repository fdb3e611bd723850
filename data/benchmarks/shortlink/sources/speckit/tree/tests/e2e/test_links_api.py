"""End to end through the router and a real SQLite database (User Stories 1-3)."""

from __future__ import annotations

from tests.e2e.conftest import clicks_of, count_links, target_of


def test_shorten_returns_201_with_code_and_short_url(client, conn) -> None:
    resp = client.shorten({"url": "https://example.com/a/very/long/path?q=1"})
    assert resp.status == 201
    assert resp.body["shortUrl"].endswith(resp.body["code"])
    assert target_of(conn, resp.body["code"]) == "https://example.com/a/very/long/path?q=1"


def test_non_http_url_is_rejected_and_nothing_stored(client, conn) -> None:
    for url in ("ftp://example.com/file", "javascript:alert(1)", "https://"):
        resp = client.shorten({"url": url})
        assert resp.status == 400
        assert resp.body["error"] == "invalid_url"
    assert count_links(conn) == 0


def test_eleventh_link_in_a_minute_is_rate_limited(client, clock) -> None:
    for _ in range(10):
        assert client.shorten({"url": "https://example.com"}).status == 201
    resp = client.shorten({"url": "https://example.com"})
    assert resp.status == 429
    clock.advance(seconds=60)
    assert client.shorten({"url": "https://example.com"}).status == 201


def test_other_keys_are_not_limited(client) -> None:
    for _ in range(10):
        client.shorten({"url": "https://example.com"}, key="busy")
    assert client.shorten({"url": "https://example.com"}, key="quiet").status == 201


def test_follow_redirects_with_301_and_counts_clicks(client, conn) -> None:
    code = client.shorten({"url": "https://example.com/page"}).body["code"]
    resp = client.get(f"/{code}")
    assert resp.status == 301
    assert resp.headers["Location"] == "https://example.com/page"
    client.get(f"/{code}")
    assert clicks_of(conn, code) == 2


def test_unknown_code_is_404(client) -> None:
    resp = client.get("/nope123")
    assert resp.status == 404
    assert resp.body == {"error": "unknown_code"}


def test_expired_link_answers_410(client, clock) -> None:
    code = client.shorten({"url": "https://example.com", "expiresInDays": 2}).body["code"]
    clock.advance(days=1, hours=23)
    assert client.get(f"/{code}").status == 301
    clock.advance(hours=1)
    assert client.get(f"/{code}").status == 410


def test_out_of_range_expiry_is_rejected(client, conn) -> None:
    for days in (0, 366, 1.5, True, "7"):
        resp = client.shorten({"url": "https://example.com", "expiresInDays": days})
        assert resp.body["error"] == "invalid_expiry"
    assert count_links(conn) == 0
