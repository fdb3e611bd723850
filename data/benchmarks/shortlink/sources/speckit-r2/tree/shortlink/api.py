"""HTTP surface (FR-001..FR-011): routes, status codes and the error taxonomy."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime

from shortlink.http import App, Request, Response
from shortlink.links import (
    ExpiredLinkError,
    InvalidExpiryError,
    InvalidUrlError,
    UnknownCodeError,
    create_link,
    follow,
    get_link,
    validate_expiry,
    validate_url,
)
from shortlink.ratelimit import RateLimiter

BASE_URL = "https://sho.rt/"

log = logging.getLogger(__name__)


def create_app(
    conn: sqlite3.Connection,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    limiter: RateLimiter | None = None,
) -> App:
    app = App()
    limiter = limiter or RateLimiter()

    @app.route("POST", "/links")
    def post_link(request: Request) -> Response:
        api_key = request.header("X-Api-Key")
        if not api_key:
            return Response(401, {"error": "missing_api_key"})
        # Count per caller address, so one client cannot rotate keys to dodge the limit.
        client = request.header("X-Forwarded-For") or "unknown"
        now = clock()
        if not limiter.hit(client, now.timestamp()):
            wait = limiter.retry_after(client, now.timestamp())
            log.info("rate limit reached for a client; retry in %ss", wait)
            return Response(429, {"error": "rate_limited"}, {"Retry-After": str(wait)})
        try:
            body = request.json()
        except ValueError:
            return Response(400, {"error": "invalid_json"})
        if not isinstance(body, dict):
            return Response(400, {"error": "invalid_json"})
        try:
            url = validate_url(body.get("url"))
        except InvalidUrlError as exc:
            return Response(400, {"error": "invalid_url", "message": str(exc)})
        try:
            days = validate_expiry(body.get("expiresInDays"))
        except InvalidExpiryError as exc:
            return Response(400, {"error": "invalid_expiry", "message": str(exc)})
        link = create_link(conn, url, api_key, now, days)
        return Response(201, {"code": link.code, "shortUrl": BASE_URL + link.code})

    @app.route("GET", "/{code}")
    def redirect(request: Request) -> Response:
        try:
            link = follow(conn, request.params["code"], clock())
        except UnknownCodeError:
            return Response(404, {"error": "unknown_code"})
        except ExpiredLinkError:
            return Response(410, {"error": "expired"})
        return Response(301, {}, {"Location": link.url})

    @app.route("GET", "/links/{code}/stats")
    def stats(request: Request) -> Response:
        try:
            link = get_link(conn, request.params["code"])
        except UnknownCodeError:
            return Response(404, {"error": "unknown_code"})
        return Response(200, {"code": link.code, "clicks": link.clicks})

    return app

