"""Story 2.1-2.3 and 4.1 acceptance tests."""

from __future__ import annotations

from datetime import timedelta


def test_story_2_1_redirects_permanently(api) -> None:
    code = api.create({"url": "https://example.net/a"}).body["code"]
    resp = api.visit(code)
    assert resp.status == 301
    assert resp.headers["Location"] == "https://example.net/a"


def test_story_2_2_unknown_code(api) -> None:
    assert api.visit("0000000").status == 404


def test_story_3_1_expired_link_is_gone(api) -> None:
    code = api.create({"url": "https://example.net/a", "expiresInDays": 3}).body["code"]
    api.now += timedelta(days=3)
    assert api.visit(code).status == 410
