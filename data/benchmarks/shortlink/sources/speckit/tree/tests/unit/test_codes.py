from __future__ import annotations

from shortlink.codes import ALPHABET, CODE_LENGTH, new_code


def test_codes_have_seven_url_safe_characters() -> None:
    code = new_code()
    assert len(code) == 7
    assert set(code) <= set(ALPHABET)
    assert CODE_LENGTH == 7


def test_codes_differ() -> None:
    assert len({new_code() for _ in range(200)}) == 200
