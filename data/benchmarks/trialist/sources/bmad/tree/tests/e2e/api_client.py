"""A small client that drives the app in-process against a real SQLite file."""

from __future__ import annotations

import hashlib
import hmac
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trialist.db import connect, migrate
from trialist.events import EventBus
from trialist.http import Response
from trialist.routes import create_app
from trialist.webhooks import SIGNATURE_HEADER

NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
WEBHOOK_SECRET = b"whsec_e2e"


class ApiClient:
    def __init__(self, db_path: Path) -> None:
        self.conn: sqlite3.Connection = connect(db_path)
        migrate(self.conn)
        self.bus = EventBus()
        self.app = create_app(self.conn, secret=WEBHOOK_SECRET, bus=self.bus, clock=lambda: NOW)

    def post(self, path: str, payload: dict[str, Any]) -> Response:
        return self.app.handle("POST", path, {}, json.dumps(payload).encode())

    def start_trial(self, email: str) -> int:
        """Sign up through the API; return the id of the subscription it created."""
        trial_id = self.post("/trials", {"email": email}).body["id"]
        sql = "SELECT id FROM subscriptions WHERE trial_id = ?"
        return self.conn.execute(sql, (trial_id,)).fetchone()[0]

    def send_webhook(
        self, event_type: str, subscription_id: int, secret: bytes = WEBHOOK_SECRET
    ) -> Response:
        body = json.dumps({"type": event_type, "data": {"subscriptionId": subscription_id}})
        signature = hmac.new(secret, body.encode(), hashlib.sha256).hexdigest()
        return self.app.handle(
            "POST", "/webhooks/payments", {SIGNATURE_HEADER: signature}, body.encode()
        )

    def count_trials(self, email: str) -> int:
        sql = "SELECT COUNT(*) FROM trials WHERE email = ?"
        return self.conn.execute(sql, (email,)).fetchone()[0]

    def status_of(self, sub_id: int) -> str:
        sql = "SELECT status FROM subscriptions WHERE id = ?"
        return self.conn.execute(sql, (sub_id,)).fetchone()[0]

    def subscription_row(self, sub_id: int) -> sqlite3.Row:
        return self.conn.execute("SELECT * FROM subscriptions WHERE id = ?", (sub_id,)).fetchone()
