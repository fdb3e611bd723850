"""Builders of ledger entries shared by the rubric, ledger and CLI tests."""

from __future__ import annotations

from typing import Any

from evalflow.domain.rubric.models import LedgerEntry


def entry_document(**overrides: Any) -> dict[str, Any]:
    """A valid ledger-entry document; keyword arguments replace top-level keys."""
    document: dict[str, Any] = {
        "version": "0.1.0",
        "timestamp": "2025-01-31T12:00:00Z",
        "commit": "abc1234",
        "branch": "main",
        "scores": {"passRate": 1.0},
        "results": [{"name": "case", "pass": True}],
        "status": "pass",
        "description": "review_eval:reviewer",
        "dimensionScores": [
            {"dimensionId": "detection_accuracy", "score": 0.8, "scoringMethod": "ratio"},
            {"dimensionId": "actionability", "score": None, "scoringMethod": "manual"},
        ],
    }
    document.update(overrides)
    return document


def entry(scores: dict[str, float | None], **overrides: Any) -> LedgerEntry:
    """A ledger entry with these dimension scores."""
    dimension_scores = [{"dimensionId": k, "score": v} for k, v in scores.items()]
    return LedgerEntry.model_validate(entry_document(dimensionScores=dimension_scores, **overrides))
