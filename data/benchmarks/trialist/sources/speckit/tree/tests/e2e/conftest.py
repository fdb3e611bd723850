from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support import subscription_for
from trialist.api import create_app
from trialist.db import connect, migrate
from trialist.events import EventBus
from trialist.http import Response
from trialist.webhooks import SIGNATURE_HEADER, sign

NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
SECRET = b"whsec_e2e"


class Client:
    """Drives the app through `App.handle` against a real SQLite file."""

    def __init__(self, db_path: Path) -> None:
        self.conn = connect(db_path)
        migrate(self.conn)
        self.bus = EventBus()
        self.app = create_app(self.conn, clock=lambda: NOW, bus=self.bus, webhook_secret=SECRET)

    def post(self, path: str, payload: dict[str, Any]) -> Response:
        body = json.dumps(payload).encode()
        return self.app.handle("POST", path, {"Content-Type": "application/json"}, body)

    def webhook(self, event: dict[str, Any], signature: str | None = None) -> Response:
        body = json.dumps(event).encode()
        headers = {SIGNATURE_HEADER: signature if signature is not None else sign(SECRET, body)}
        return self.app.handle("POST", "/webhooks/payments", headers, body)

    def start_trial(self, email: str) -> int:
        """Sign up through the API; return the new subscription's id."""
        assert self.post("/trials", {"email": email}).status == 201
        return subscription_for(self.conn, email)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    c = Client(tmp_path / "e2e.db")
    yield c
    c.conn.close()
