from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shortlink.repository import LinkRepository
from shortlink.service import CODE_ALPHABET, LinkError, LinkService

NOW = datetime(2026, 1, 15, tzinfo=UTC)


@pytest.fixture
def service(conn) -> LinkService:
    return LinkService(LinkRepository(conn))


def test_codes_are_seven_characters(service) -> None:
    assert len(service.new_code()) == 7


def test_codes_avoid_ambiguous_characters(service) -> None:
    # Story 1.1 dev note: codes are read aloud and typed from print, so no 0/O or 1/l/I.
    assert not set("0O1lI") & set(CODE_ALPHABET)


def test_expired_link_is_reported(service) -> None:
    code = service.shorten("https://example.net", "k", NOW, 1)
    assert service.resolve(code, NOW + timedelta(days=1)).expired is True


def test_expiry_must_be_in_range(service) -> None:
    with pytest.raises(LinkError):
        service.check_expiry(366)
