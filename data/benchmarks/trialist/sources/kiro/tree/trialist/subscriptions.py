"""Cancellation (Requirement 4)."""

from __future__ import annotations

from trialist.store import Store, SubscriptionRecord


class SubscriptionNotFoundError(LookupError):
    pass


def cancel_subscription(store: Store, sub_id: int) -> SubscriptionRecord:
    sub = store.subscription(sub_id)
    if sub is None:
        raise SubscriptionNotFoundError(sub_id)
    store.set_status(sub_id, "canceled")
    access_ends_at = sub.period_end
    store.set_access_end(sub_id, access_ends_at)
    return SubscriptionRecord(sub.id, "canceled", sub.period_end, access_ends_at)
