from __future__ import annotations

from datetime import timedelta

from tests.conftest import NOW
from trialist.events import EventLog
from trialist.reminders import send_due_reminders
from trialist.store import Store
from trialist.trials import TrialService


class FakeNotifier:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def send(self, channel: str, email: str) -> None:
        self.sent.append((channel, email))


def test_sends_email_reminder_three_days_before_trial_ends(store: Store) -> None:
    TrialService(store, EventLog()).start("a@example.com", NOW - timedelta(days=11))
    notifier = FakeNotifier()
    send_due_reminders(store, NOW, notifier)
    assert notifier.sent == [("email", "a@example.com")]


def test_no_reminder_for_trial_ending_later(store: Store) -> None:
    TrialService(store, EventLog()).start("a@example.com", NOW)
    notifier = FakeNotifier()
    send_due_reminders(store, NOW, notifier)
    assert notifier.sent == []


def test_second_run_sends_nothing(store: Store) -> None:
    TrialService(store, EventLog()).start("a@example.com", NOW - timedelta(days=11))
    notifier = FakeNotifier()
    assert send_due_reminders(store, NOW, notifier) == 1
    assert send_due_reminders(store, NOW, notifier) == 0
    assert notifier.sent == [("email", "a@example.com")]
