"""HTTP routes (architecture §5): translate requests to LinkService calls."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime

from shortlink.config import PUBLIC_BASE_URL
from shortlink.http import App, Request, Response
from shortlink.ratelimit import TokenBucketLimiter
from shortlink.repository import LinkRepository
from shortlink.service import LinkError, LinkService


def make_app(
    conn: sqlite3.Connection, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
) -> App:
    app = App()
    service = LinkService(LinkRepository(conn))
    limiter = TokenBucketLimiter()

    @app.route("POST", "/links")
    def create(request: Request) -> Response:
        api_key = request.header("X-Api-Key")
        if api_key is None:
            return Response(401, {"error": "missing_api_key"})
        now = clock()
        if not limiter.consume(api_key, now.timestamp()):
            retry = limiter.wait_seconds(api_key)
            return Response(429, {"error": "rate_limited"}, {"Retry-After": str(retry)})
        try:
            body = request.json()
        except ValueError:
            return Response(400, {"error": "invalid_json"})
        try:
            code = service.shorten(body.get("url"), api_key, now, body.get("expiresInDays"))
        except LinkError as err:
            if err.code == "invalid_expiry":
                return Response(400, {"error": "invalid_expiry"})
            return Response(400, {"error": "invalid_url"})
        return Response(201, {"code": code, "shortUrl": PUBLIC_BASE_URL + code})

    @app.route("GET", "/links/{code}/stats")
    def stats(request: Request) -> Response:
        clicks = service.clicks(request.params["code"])
        if clicks is None:
            return Response(404, {"error": "unknown_code"})
        return Response(200, {"clicks": clicks})

    @app.route("GET", "/{code}")
    def redirect(request: Request) -> Response:
        found = service.resolve(request.params["code"], clock())
        if found.target is None:
            return Response(404, {"error": "unknown_code"})
        if found.expired:
            return Response(410, {"error": "expired"})
        return Response(301, {}, {"Location": found.target})

    return app
