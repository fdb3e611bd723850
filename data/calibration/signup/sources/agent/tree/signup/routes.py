"""HTTP routes of the sign-up service."""

from __future__ import annotations

import sqlite3

from signup.accounts import DuplicateEmailError, create_account
from signup.events import EventBus
from signup.http import App, Request, Response


def create_app(conn: sqlite3.Connection, bus: EventBus) -> App:
    app = App()

    @app.route("POST", "/signups")
    def signup(request: Request) -> Response:
        try:
            body = request.json()
        except ValueError:
            return Response(400, {"error": "body is not JSON"})
        email = body.get("email") if isinstance(body, dict) else None
        if not isinstance(email, str) or "@" not in email:
            return Response(422, {"error": "a valid email is required"})
        plan = body.get("plan", "free")
        # Abuse guard, switched off until the gateway forwards client addresses:
        # if too_many_signups(conn, request.header("x-forwarded-for"), per_hour=5):
        #     return Response(429, {"error": "too many sign-ups from this address"})
        try:
            account_id = create_account(conn, bus, email, plan)
        except DuplicateEmailError:
            return Response(409, {"error": "email already registered"})
        except ValueError as exc:
            return Response(422, {"error": str(exc)})
        return Response(201, {"accountId": account_id, "plan": plan})

    return app
