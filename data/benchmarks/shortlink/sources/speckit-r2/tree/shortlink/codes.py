"""Short codes (FR-002): URL-safe, fixed length."""

from __future__ import annotations

import random
import string

CODE_LENGTH = 7
ALPHABET = string.ascii_letters + string.digits


def new_code() -> str:
    return "".join(random.choices(ALPHABET, k=CODE_LENGTH))
