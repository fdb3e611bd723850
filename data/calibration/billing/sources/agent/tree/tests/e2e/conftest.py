from __future__ import annotations

import hashlib
import hmac
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from unittest.mock import Mock

import pytest

from billing.db import connect, migrate
from billing.http import Response
from billing.routes import create_app
from billing.webhooks import SIGNATURE_HEADER

WEBHOOK_SECRET = b"whsec_e2e"


class ApiClient:
    """Drives the app in-process against a real SQLite file; the CRM is a stub."""

    def __init__(self, db_path: Path) -> None:
        self.conn: sqlite3.Connection = connect(db_path)
        migrate(self.conn)
        self.crm = Mock()
        self.app = create_app(self.conn, self.crm, WEBHOOK_SECRET)

    def send_webhook(
        self, event_type: str, sub_id: int, secret: bytes = WEBHOOK_SECRET
    ) -> Response:
        body = json.dumps({"type": event_type, "data": {"subscriptionId": sub_id}}).encode()
        signature = hmac.new(secret, body, hashlib.sha256).hexdigest()
        return self.app.handle("POST", "/webhooks/payments", {SIGNATURE_HEADER: signature}, body)


@pytest.fixture
def api(tmp_path: Path) -> Iterator[ApiClient]:
    client = ApiClient(tmp_path / "billing-e2e.db")
    yield client
    client.conn.close()
