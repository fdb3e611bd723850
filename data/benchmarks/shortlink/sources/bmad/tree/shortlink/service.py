"""LinkService (architecture §2): the rules of stories 1.1-3.2, independent of HTTP."""

from __future__ import annotations

import secrets
import string
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from shortlink.config import CODE_LENGTH, MAX_EXPIRY_DAYS
from shortlink.repository import LinkRepository

CODE_ALPHABET = string.ascii_letters + string.digits
ALLOWED_SCHEMES = frozenset({"http", "https"})


class LinkError(Exception):
    """A request the service refuses; `code` is the stable error code."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass(frozen=True)
class Resolution:
    target: str | None
    expired: bool = False


class LinkService:
    def __init__(self, repo: LinkRepository) -> None:
        self.repo = repo

    def new_code(self) -> str:
        return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))

    def check_url(self, url: object) -> str:
        if not isinstance(url, str):
            raise LinkError("invalid_url")
        parts = urlsplit(url)
        if parts.scheme in ALLOWED_SCHEMES and parts.hostname:
            return url
        raise LinkError("invalid_url")

    def check_expiry(self, days: object) -> int | None:
        if days is None:
            return None
        if not isinstance(days, int) or isinstance(days, bool):
            raise LinkError("invalid_expiry")
        if days < 1 or days > MAX_EXPIRY_DAYS:
            raise LinkError("invalid_expiry")
        return days

    def shorten(self, url: object, api_key: str, now: datetime, days: object = None) -> str:
        target = self.check_url(url)
        expires_in_days = self.check_expiry(days)
        expires_at = now + timedelta(days=expires_in_days) if expires_in_days else None
        while True:
            code = self.new_code()
            if self.repo.insert(code, target, api_key, expires_at):
                return code

    def resolve(self, code: str, now: datetime) -> Resolution:
        row = self.repo.get(code)
        if row is None:
            return Resolution(None)
        if row["expires_at"] and now >= datetime.fromisoformat(row["expires_at"]):
            return Resolution(row["target"], expired=True)
        self.repo.increment_clicks(code)
        return Resolution(row["target"])

    def clicks(self, code: str) -> int | None:
        row = self.repo.get(code)
        return None if row is None else row["clicks"]
