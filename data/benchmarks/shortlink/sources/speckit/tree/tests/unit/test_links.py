from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shortlink.links import (
    InvalidExpiryError,
    InvalidUrlError,
    create_link,
    get_link,
    validate_expiry,
    validate_url,
)

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def test_http_and_https_urls_are_accepted() -> None:
    assert validate_url(" https://example.com/x ") == "https://example.com/x"
    assert validate_url("HTTP://example.com") == "HTTP://example.com"


@pytest.mark.parametrize("url", ["ftp://x.org", "mailto:a@b.c", "http://", "example.com", 42])
def test_other_urls_are_refused(url) -> None:
    with pytest.raises(InvalidUrlError):
        validate_url(url)


def test_expiry_bounds() -> None:
    assert validate_expiry(1) == 1 and validate_expiry(365) == 365
    assert validate_expiry(None) is None
    for bad in (0, 366, -1, True):
        with pytest.raises(InvalidExpiryError):
            validate_expiry(bad)


def test_create_link_stores_expiry(conn) -> None:
    link = create_link(conn, "https://example.com", "k", NOW, 3)
    assert get_link(conn, link.code).expires_at == datetime(2026, 3, 4, tzinfo=UTC)
