"""Story 1.1-1.3 acceptance tests through the router and SQLite."""

from __future__ import annotations

from tests.e2e.db_queries import count_links, target_of


def test_story_1_1_create_link(api, conn) -> None:
    resp = api.create({"url": "http://example.net/report.pdf"})
    assert resp.status == 201
    assert len(resp.body["code"]) == 7
    assert target_of(conn, resp.body["code"]) == "http://example.net/report.pdf"


def test_story_1_2_rejects_bad_urls(api, conn) -> None:
    for url in ("ftp://example.net", "http:///nohost", 17):
        assert api.create({"url": url}).status == 400
    assert count_links(conn) == 0


def test_story_1_3_rate_limit(api) -> None:
    for _ in range(10):
        assert api.create({"url": "https://example.net"}).status == 201
    resp = api.create({"url": "https://example.net"})
    assert resp.status == 429
    assert resp.headers["Retry-After"] == "6"


def test_story_3_2_expiry_bounds(api, conn) -> None:
    for days in (0, 400, "30"):
        resp = api.create({"url": "https://example.net", "expiresInDays": days})
        assert resp.body == {"error": "invalid_expiry"}
    assert count_links(conn) == 0
