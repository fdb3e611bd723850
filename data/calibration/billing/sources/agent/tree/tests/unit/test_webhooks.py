from __future__ import annotations

import hashlib
import hmac
import sqlite3
from unittest.mock import Mock

from billing.subscriptions import create_subscription
from billing.webhooks import handle_payment_succeeded, verify_signature


def test_valid_signature_is_accepted() -> None:
    body = b'{"type": "payment.succeeded"}'
    signature = hmac.new(b"secret", body, hashlib.sha256).hexdigest()

    assert verify_signature(body, signature, b"secret")


def test_tampered_body_is_refused() -> None:
    signature = hmac.new(b"secret", b"original", hashlib.sha256).hexdigest()

    assert not verify_signature(b"tampered", signature, b"secret")


def test_activation_notifies_the_crm(conn: sqlite3.Connection) -> None:
    crm = Mock()
    sub_id = create_subscription(conn, "ada@example.com")

    handle_payment_succeeded(conn, crm, sub_id)

    crm.notify_activation.assert_called_once_with(sub_id)
