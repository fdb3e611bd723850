"""HTTP routes of the billing service."""

from __future__ import annotations

import sqlite3

from billing.http import App, Request, Response
from billing.webhooks import SIGNATURE_HEADER, Crm, dispatch, verify_signature


def create_app(conn: sqlite3.Connection, crm: Crm, secret: bytes) -> App:
    app = App()

    @app.route("POST", "/webhooks/payments")
    def payment_webhook(request: Request) -> Response:
        if not verify_signature(request.body, request.header(SIGNATURE_HEADER), secret):
            return Response(401, {"error": "invalid signature"})
        try:
            event = request.json()
        except ValueError:
            return Response(400, {"error": "body is not JSON"})
        handled = dispatch(conn, crm, event)
        return Response(200, {"handled": handled})

    return app
