"""HTTP surface (FR-001, FR-006, FR-009, FR-011, FR-012): routes and the error taxonomy."""

from __future__ import annotations

import functools
import logging
import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Any

from trialist.events import EventBus
from trialist.http import App, Handler, Request, Response
from trialist.subscriptions import (
    InvalidTransitionError,
    UnknownSubscriptionError,
    cancel,
)
from trialist.trials import DuplicateTrialError, InvalidEmailError, start_trial
from trialist.webhooks import (
    SIGNATURE_HEADER,
    MalformedEventError,
    process_event,
    verify_signature,
)

MAX_BODY_BYTES = 64 * 1024

log = logging.getLogger(__name__)

# FR-011: every failure has one status and one stable machine-readable code.
_ERRORS: dict[type[Exception], tuple[int, str]] = {
    InvalidEmailError: (400, "invalid_email"),
    MalformedEventError: (400, "invalid_event"),
    UnknownSubscriptionError: (404, "unknown_subscription"),
    InvalidTransitionError: (409, "invalid_transition"),
}


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def _json_object(request: Request) -> dict[str, Any]:
    if len(request.body) > MAX_BODY_BYTES:
        raise ApiError(413, "payload_too_large", f"the body exceeds {MAX_BODY_BYTES} bytes")
    try:
        data = request.json()
    except ValueError as exc:
        raise ApiError(400, "invalid_json", "the body is not valid JSON") from exc
    if not isinstance(data, dict):
        raise ApiError(400, "invalid_json", "the body must be a JSON object")
    return data


def _guarded(handler: Handler) -> Handler:
    @functools.wraps(handler)
    def run(request: Request) -> Response:
        try:
            return handler(request)
        except ApiError as exc:
            return Response(exc.status, {"error": exc.code, "message": str(exc)})
        except tuple(_ERRORS) as exc:
            status, code = _ERRORS[type(exc)]
            return Response(status, {"error": code, "message": str(exc)})

    return run


def create_app(
    conn: sqlite3.Connection,
    *,
    clock: Callable[[], datetime],
    bus: EventBus,
    webhook_secret: bytes,
) -> App:
    app = App()

    @app.route("POST", "/trials")
    @_guarded
    def post_trial(request: Request) -> Response:
        email = _json_object(request).get("email")
        if not isinstance(email, str):
            raise ApiError(400, "invalid_email", "email is required")
        try:
            trial = start_trial(conn, email, clock(), bus)
        except DuplicateTrialError:
            return Response(409, {"error": "trial_exists", "message": "an active trial exists"})
        return Response(201, {"id": trial.id, "trialEndsAt": trial.ends_at.isoformat()})

    @app.route("POST", "/webhooks/payments")
    @_guarded
    def post_payment_webhook(request: Request) -> Response:
        if len(request.body) > MAX_BODY_BYTES:
            raise ApiError(413, "payload_too_large", f"the body exceeds {MAX_BODY_BYTES} bytes")
        if not verify_signature(webhook_secret, request.body, request.header(SIGNATURE_HEADER)):
            log.warning("rejected a payment webhook with an invalid signature")
            return Response(401, {"error": "invalid_signature", "message": "bad signature"})
        outcome = process_event(conn, _json_object(request), clock())
        return Response(200, {"outcome": outcome})

    @app.route("POST", "/subscriptions/cancel")
    @_guarded
    def post_cancel(request: Request) -> Response:
        sub_id = _json_object(request).get("subscriptionId")
        if not isinstance(sub_id, int) or isinstance(sub_id, bool):
            raise ApiError(400, "invalid_request", "subscriptionId must be an integer")
        sub = cancel(conn, sub_id)
        access = sub.access_ends_at.isoformat() if sub.access_ends_at else None
        return Response(200, {"id": sub.id, "status": sub.status, "accessEndsAt": access})

    return app
