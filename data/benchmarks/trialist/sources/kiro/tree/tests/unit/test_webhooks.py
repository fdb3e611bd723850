from __future__ import annotations

import hashlib
import hmac

from tests.conftest import NOW
from trialist.events import EventLog
from trialist.store import Store
from trialist.trials import TrialService
from trialist.webhooks import HANDLERS, verify_signature

SECRET = "whsec_test"


def _sign(payload: bytes) -> str:
    return hmac.new(SECRET.encode(), payload, hashlib.sha256).hexdigest()


def _subscription_id(store: Store) -> int:
    trial = TrialService(store, EventLog()).start("a@example.com", NOW)
    sub = store.subscription_for_trial(trial.id)
    assert sub is not None
    return sub.id


PAYLOAD = b'{"type": "payment.succeeded"}'


def test_verify_signature_accepts_valid_signature() -> None:
    assert verify_signature(SECRET, PAYLOAD, _sign(PAYLOAD))


def test_verify_signature_rejects_invalid_signature() -> None:
    assert not verify_signature(SECRET, PAYLOAD, "deadbeef")


def test_payment_succeeded_sets_active(store: Store) -> None:
    sub_id = _subscription_id(store)
    HANDLERS["payment.succeeded"](store, {"subscription_id": sub_id})
    assert store.status_of(sub_id) == "active"


def test_payment_failed_sets_past_due(store: Store) -> None:
    sub_id = _subscription_id(store)
    HANDLERS["payment.failed"](store, {"subscription_id": sub_id})
    assert store.status_of(sub_id) == "past_due"
