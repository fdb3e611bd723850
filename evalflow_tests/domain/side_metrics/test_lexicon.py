from __future__ import annotations

import pytest

from evalflow.domain.side_metrics.lexicon import (
    content_tokens,
    is_negative_path,
    prefix_hits,
    stem,
    words,
)


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("cancelling", "cancel"),
        ("canceled", "cancel"),
        ("cancel", "cancel"),
        ("upgrades", "upgrad"),
        ("upgraded", "upgrad"),
        ("trials", "trial"),
        ("subscriptions", "subscription"),
        ("replies", "reply"),
        ("boxes", "box"),
        ("signing", "sign"),
        ("billing", "bill"),
        ("running", "run"),
        ("labelled", "label"),
        ("201", "201"),
    ],
)
def test_stem(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_words_split_identifiers_and_number_words() -> None:
    assert words("trialEndsAt prorated_upgrade_charge three") == [
        "trial",
        "ends",
        "at",
        "prorated",
        "upgrade",
        "charge",
        "3",
    ]


def test_content_tokens_drop_boilerplate_and_ids() -> None:
    tokens = content_tokens("WHEN the system SHALL respond 201 (PRD S1-AC1, FR-002)")
    assert tokens == {"respond", "201"}


@pytest.mark.parametrize(
    ("proposition", "negative"),
    [
        ("An e2e test asserts the 201 status and the persisted end date.", False),
        ("An e2e test posts `payment.failed` and asserts the stored status.", False),
        ("An e2e test asserts 401 for a badly signed webhook.", True),
        ("A test asserts the status is unchanged after the rejected webhook.", True),
        ("A test runs the job twice and asserts the second run sends nothing.", True),
    ],
)
def test_negative_path(proposition: str, negative: bool) -> None:
    assert is_negative_path(proposition) is negative


def test_prefix_hits_in_rubric_order() -> None:
    assert prefix_hits(words("def prorated_upgrade_charge"), ("upgrad", "prorat", "seat")) == [
        "upgrad",
        "prorat",
    ]
