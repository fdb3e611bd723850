from __future__ import annotations

from unittest.mock import patch

from shortlink.store import CODE_LENGTH, LinkStore
from tests.helpers import Api, FakeClock


def test_generated_codes_are_seven_characters(conn) -> None:
    assert len(LinkStore(conn).generate_code()) == CODE_LENGTH


def test_find_missing_returns_none(conn) -> None:
    assert LinkStore(conn).find("missing") is None


def test_redirect_records_a_click(conn) -> None:
    api = Api(conn, FakeClock())
    code = api.post({"url": "https://example.org"}).body["code"]
    with patch.object(LinkStore, "record_click") as record:
        api.get(f"/{code}")
        api.get(f"/{code}")
    assert record.call_count == 2
