"""HTTP routes (Architecture §API): sign-up, payment webhooks, subscription lifecycle."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Any

from trialist.events import EventBus
from trialist.http import App, Request, Response
from trialist.lifecycle import LifecycleError, cancel_subscription, upgrade_plan
from trialist.proration import InvalidUpgradeError
from trialist.repository import SubscriptionNotFoundError
from trialist.trials import ActiveTrialExistsError, start_trial
from trialist.webhooks import SIGNATURE_HEADER, dispatch, verify_signature

EMAIL_PATTERN = re.compile(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}")


def _json_body(request: Request) -> dict[str, Any] | None:
    try:
        data = request.json()
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def create_app(
    conn: sqlite3.Connection, *, secret: bytes, bus: EventBus, clock: Callable[[], datetime]
) -> App:
    app = App()

    @app.route("POST", "/trials")
    def create_trial(request: Request) -> Response:
        body = _json_body(request)
        email = str((body or {}).get("email", "")).strip().lower()
        if not EMAIL_PATTERN.fullmatch(email):
            return Response(400, {"error": "A valid email address is required"})
        try:
            trial = start_trial(conn, email, clock(), bus)
        except ActiveTrialExistsError:
            return Response(409, {"error": "An active trial already exists for this email"})
        return Response(201, {"id": trial.id, "trialEndsAt": trial.ends_at.isoformat()})

    @app.route("POST", "/webhooks/payments")
    def receive_payment_webhook(request: Request) -> Response:
        if not verify_signature(request.body, request.header(SIGNATURE_HEADER), secret):
            return Response(401, {"error": "Invalid webhook signature"})
        event = _json_body(request)
        try:
            handled = dispatch(conn, event or {})
        except (KeyError, TypeError, ValueError):
            return Response(400, {"error": "Malformed payment event"})
        except SubscriptionNotFoundError:
            return Response(404, {"error": "Unknown subscription"})
        return Response(200, {"handled": handled})

    @app.route("POST", "/subscriptions/cancel")
    def cancel(request: Request) -> Response:
        body = _json_body(request) or {}
        try:
            sub = cancel_subscription(conn, int(body["subscriptionId"]), clock())
        except (KeyError, TypeError, ValueError):
            return Response(400, {"error": "subscriptionId is required"})
        except SubscriptionNotFoundError:
            return Response(404, {"error": "Unknown subscription"})
        except LifecycleError as exc:
            return Response(409, {"error": str(exc)})
        access = sub.access_ends_at.isoformat() if sub.access_ends_at else None
        return Response(200, {"status": sub.status, "accessEndsAt": access})

    @app.route("POST", "/subscriptions/upgrade")
    def upgrade(request: Request) -> Response:
        body = _json_body(request) or {}
        try:
            charge = upgrade_plan(conn, int(body["subscriptionId"]), str(body["plan"]), clock())
        except InvalidUpgradeError as exc:
            return Response(422, {"error": str(exc)})
        except (KeyError, TypeError, ValueError):
            return Response(400, {"error": "subscriptionId and plan are required"})
        except SubscriptionNotFoundError:
            return Response(404, {"error": "Unknown subscription"})
        except LifecycleError as exc:
            return Response(409, {"error": str(exc)})
        return Response(200, {"plan": body["plan"], "chargeCents": charge})

    return app
