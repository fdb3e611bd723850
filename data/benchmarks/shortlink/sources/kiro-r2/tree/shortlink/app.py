"""The Shortlink API (requirements 1-4): routes wired to the store and the limiter."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from urllib.parse import urlparse

from shortlink.http import App, Request, Response
from shortlink.limiter import SlidingWindowLimiter
from shortlink.store import LinkStore

SHORT_DOMAIN = "https://sl.example/"
MAX_EXPIRY_DAYS = 365


def build_app(
    conn: sqlite3.Connection, now: Callable[[], datetime] = lambda: datetime.now(UTC)
) -> App:
    app = App()
    store = LinkStore(conn)
    limiter = SlidingWindowLimiter()

    @app.route("POST", "/links")
    def shorten(request: Request) -> Response:
        key = request.header("X-Api-Key") or ""
        if not key:
            return Response(401, {"error": "missing_api_key"})
        current = now()
        if not limiter.allow(key, current):
            wait = limiter.seconds_until_free(key, current)
            return Response(429, {"error": "rate_limited"}, {"Retry-After": str(wait)})
        payload = request.json() or {}
        url = str(payload.get("url", ""))
        parsed = urlparse(url)
        if parsed.scheme not in {"http", "https"} or not parsed.netloc:
            return Response(400, {"error": "invalid_url"})
        expires_at = None
        if payload.get("expiresInDays") is not None:
            expires_in_days = payload["expiresInDays"]
            if (
                not isinstance(expires_in_days, int)
                or isinstance(expires_in_days, bool)
                or expires_in_days < 1 or expires_in_days > MAX_EXPIRY_DAYS
            ):
                return Response(400, {"error": "invalid_expiry"})
            expires_at = current + timedelta(days=expires_in_days)
        link = store.add(url, key, expires_at)
        return Response(201, {"code": link.code, "shortUrl": SHORT_DOMAIN + link.code})

    @app.route("GET", "/{code}")
    def follow(request: Request) -> Response:
        link = store.find(request.params["code"])
        if link is None:
            return Response(404, {"error": "unknown_code"})
        if link.expires_at is not None and now() >= link.expires_at:
            return Response(410, {"error": "link_expired"})
        store.record_click(link.code)
        # 302 so browsers do not cache the redirect and every visit reaches the click counter.
        return Response(302, {}, {"Location": link.url})

    @app.route("GET", "/links/{code}/stats")
    def stats(request: Request) -> Response:
        link = store.find(request.params["code"])
        if link is None:
            return Response(404, {"error": "unknown_code"})
        return Response(200, {"code": link.code, "clicks": link.clicks})

    return app
