"""Links (FR-001..FR-005, FR-008..FR-010): validation, storage, resolution and expiry."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from shortlink.codes import new_code

ALLOWED_SCHEMES = ("http", "https")
MAX_URL_LENGTH = 2048
MAX_EXPIRY_DAYS = 365


class InvalidUrlError(ValueError):
    """FR-003: not an absolute http(s) URL with a host."""


class InvalidExpiryError(ValueError):
    """FR-009: expiresInDays is not a whole number from 1 to MAX_EXPIRY_DAYS."""


class UnknownCodeError(LookupError):
    """No link is stored under this code."""


class ExpiredLinkError(Exception):
    """The link existed but its expiry has passed."""


@dataclass(frozen=True)
class Link:
    code: str
    url: str
    expires_at: datetime | None
    clicks: int


def validate_url(raw: object) -> str:
    if not isinstance(raw, str) or len(raw) > MAX_URL_LENGTH:
        raise InvalidUrlError("url must be a string of at most 2048 characters")
    parts = urlsplit(raw.strip())
    if parts.scheme.lower() not in ALLOWED_SCHEMES:
        raise InvalidUrlError("only http and https URLs can be shortened")
    if not parts.hostname:
        raise InvalidUrlError("the URL has no host")
    return raw.strip()


def validate_expiry(raw: object) -> int | None:
    if raw is None:
        return None
    # bool is an int subclass: `true` is not a number of days.
    if not isinstance(raw, int) or isinstance(raw, bool) or not 1 <= raw <= MAX_EXPIRY_DAYS:
        raise InvalidExpiryError(f"expiresInDays must be a whole number from 1 to {MAX_EXPIRY_DAYS}")
    return raw


def create_link(
    conn: sqlite3.Connection, url: str, api_key: str, now: datetime, expires_in_days: int | None
) -> Link:
    """Store `url` under a new code; a code collision draws again (FR-004)."""
    expires_at = now + timedelta(days=expires_in_days) if expires_in_days else None
    for _ in range(5):
        code = new_code()
        try:
            with conn:
                conn.execute(
                    "INSERT INTO links (code, url, api_key, created_at, expires_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (code, url, api_key, now.isoformat(), expires_at and expires_at.isoformat()),
                )
        except sqlite3.IntegrityError:
            continue
        return Link(code, url, expires_at, 0)
    raise RuntimeError("could not draw an unused code in 5 attempts")


def get_link(conn: sqlite3.Connection, code: str) -> Link:
    row = conn.execute("SELECT * FROM links WHERE code = ?", (code,)).fetchone()
    if row is None:
        raise UnknownCodeError(code)
    expires = row["expires_at"]
    return Link(
        row["code"], row["url"], datetime.fromisoformat(expires) if expires else None, row["clicks"]
    )


def follow(conn: sqlite3.Connection, code: str, now: datetime) -> Link:
    """The link to redirect to, counting the click (FR-007); expired links raise (FR-008)."""
    link = get_link(conn, code)
    if link.expires_at is not None and now >= link.expires_at:
        raise ExpiredLinkError(code)
    with conn:
        conn.execute("UPDATE links SET clicks = clicks + 1 WHERE code = ?", (code,))
    return link
