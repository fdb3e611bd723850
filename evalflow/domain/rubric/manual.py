"""Recording a human score for a manual dimension (e.g. actionability) as a new ledger entry.

The ledger is append-only: a human score never edits the entry it reviews. The new entry
copies the latest entry of the evaluation key, sets the dimension's score, recomputes
`weightedTotal` and `coverage`, and carries its own timestamp and evalflow version. Automatic
dimensions are refused — their scores are computed from fixtures, never typed in.
"""

from __future__ import annotations

from evalflow.domain.rubric.models import DimensionScore, LedgerEntry, Rubric
from evalflow.domain.rubric.scoring import score_in_range, weighted_total
from evalflow.errors import InputError


def with_manual_score(
    entry: LedgerEntry,
    rubric: Rubric,
    dimension_id: str,
    score: float,
    *,
    timestamp: str,
    version: str,
    details: str,
) -> LedgerEntry:
    """A copy of `entry` with `dimension_id` scored `score` by a human."""
    dimension = rubric.dimension(dimension_id)
    if dimension is None or dimension.scoring_method != "manual":
        manual = ", ".join(d.id for d in rubric.dimensions if d.scoring_method == "manual")
        raise InputError(
            f"{dimension_id!r} is not a manual dimension of the rubric",
            fix=f"record a human score for one of: {manual or '(none)'}",
        )
    if not score_in_range(dimension, score):
        raise InputError(f"score {score!r} must be within [0, 1]", fix="pass --score 0..1")
    recorded = DimensionScore(
        dimension_id=dimension_id, score=score, scoring_method="manual", details=details
    )
    existing = list(entry.dimension_scores or ())
    if any(d.dimension_id == dimension_id for d in existing):
        updated = [recorded if d.dimension_id == dimension_id else d for d in existing]
    else:
        updated = [*existing, recorded]
    total = weighted_total(rubric, updated)
    scores = {k: v for k, v in entry.scores.items() if k not in ("weightedTotal", "coverage")}
    return entry.model_copy(
        update={
            "timestamp": timestamp,
            "version": version,
            "scores": {**scores, **total.as_scores()},
            "dimension_scores": updated,
        }
    )
