from __future__ import annotations

import sqlite3

import pytest

from signup.accounts import DuplicateEmailError, create_account, find_account
from signup.events import EventBus


def test_create_account_stores_the_row(conn: sqlite3.Connection) -> None:
    account_id = create_account(conn, EventBus(), "ada@example.com")

    assert find_account(conn, "ada@example.com")["id"] == account_id


def test_account_created_event_carries_the_account_id(conn: sqlite3.Connection) -> None:
    bus = EventBus()
    account_id = create_account(conn, bus, "ada@example.com", plan="team")

    name, payload = bus.emitted[-1]
    assert name == "account_created"
    assert payload["accountId"] == account_id


def test_duplicate_email_is_rejected(conn: sqlite3.Connection) -> None:
    bus = EventBus()
    create_account(conn, bus, "ada@example.com")

    with pytest.raises(DuplicateEmailError):
        create_account(conn, bus, "ada@example.com")


def test_unknown_plan_is_rejected(conn: sqlite3.Connection) -> None:
    with pytest.raises(ValueError):
        create_account(conn, EventBus(), "ada@example.com", plan="gold")
