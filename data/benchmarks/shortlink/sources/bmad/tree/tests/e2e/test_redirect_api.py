"""Story 2.1-2.3 and 4.1 acceptance tests."""

from __future__ import annotations

from tests.e2e.db_queries import clicks_of


def test_story_2_1_redirects_permanently(api) -> None:
    code = api.create({"url": "https://example.net/a"}).body["code"]
    resp = api.visit(code)
    assert resp.status == 301
    assert resp.headers["Location"] == "https://example.net/a"


def test_story_2_2_unknown_code(api) -> None:
    assert api.visit("0000000").status == 404


def test_story_2_3_counts_clicks(api, conn) -> None:
    code = api.create({"url": "https://example.net/a"}).body["code"]
    api.visit(code)
    api.visit(code)
    assert clicks_of(conn, code) == 2


def test_story_4_1_stats(api) -> None:
    code = api.create({"url": "https://example.net/a"}).body["code"]
    api.visit(code)
    assert api.app.handle("GET", f"/links/{code}/stats").body["clicks"] == 1
