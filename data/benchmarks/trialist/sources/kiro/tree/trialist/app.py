"""Application wiring: routes for sign-up, payment webhooks and cancellation."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from trialist.events import EventLog
from trialist.http import App, Request, Response
from trialist.store import Store
from trialist.subscriptions import SubscriptionNotFoundError, cancel_subscription
from trialist.trials import TrialAlreadyActiveError, TrialService
from trialist.webhooks import HANDLERS, SIGNATURE_HEADER, verify_signature


def _utcnow() -> datetime:
    return datetime.now(UTC)


def build_app(
    store: Store,
    events: EventLog,
    webhook_secret: str,
    clock: Callable[[], datetime] = _utcnow,
) -> App:
    app = App()
    trials = TrialService(store, events)

    @app.route("POST", "/trials")
    def start_trial(request: Request) -> Response:
        try:
            body = request.json()
        except ValueError:
            return Response(400, {"error": "invalid JSON"})
        email = body.get("email") if isinstance(body, dict) else None
        if not isinstance(email, str) or "@" not in email:
            return Response(400, {"error": "a valid email is required"})
        try:
            trial = trials.start(email.strip().lower(), clock())
        except TrialAlreadyActiveError:
            return Response(409, {"error": "an active trial already exists for this email"})
        return Response(201, {"id": trial.id, "trialEndsAt": trial.ends_at.isoformat()})

    @app.route("POST", "/webhooks/payments")
    def payment_webhook(request: Request) -> Response:
        signature = request.header(SIGNATURE_HEADER) or ""
        if not verify_signature(webhook_secret, request.body, signature):
            return Response(401, {"error": "invalid signature"})
        event = request.json()
        handler = HANDLERS.get(event.get("type"))
        if handler is None:
            return Response(200, {"status": "ignored"})
        handler(store, event.get("data", {}))
        return Response(200, {"status": "processed"})

    @app.route("POST", "/subscriptions/cancel")
    def cancel(request: Request) -> Response:
        sub_id = request.json().get("subscription_id")
        try:
            sub = cancel_subscription(store, int(sub_id))
        except SubscriptionNotFoundError:
            return Response(404, {"error": "subscription not found"})
        return Response(
            200,
            {"status": sub.status, "accessEndsAt": sub.period_end.isoformat()},
        )

    return app
