"""Short codes (FR-002): random, URL-safe, fixed length."""

from __future__ import annotations

import secrets
import string

CODE_LENGTH = 7
ALPHABET = string.ascii_letters + string.digits


def new_code() -> str:
    """A fresh code from the OS's secure random source: codes must not be guessable."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
