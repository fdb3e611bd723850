"""Direction-aware regression check between the last two ledger entries of an evaluation key.

"Last" is ledger order (append order), not timestamp order: two entries written in the same
second still compare the way they were recorded. A dimension regresses when a
higher_is_better score drops, or a lower_is_better score rises, by more than the tolerance
(River Review's compare script uses 0.001). A null on either side never regresses: a pending
manual score is missing information, not a worse result.

Entries that carry no dimension scores (framework runs, plugin scores, retrieval evaluations)
are compared on their headline `scores` instead — higher is better except for the rates and
counts named in `LOWER_IS_BETTER_SCORES` — so a nightly Final that drops is a regression too.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from evalflow.domain.rubric.entry_keys import parse_entry_key
from evalflow.domain.rubric.models import DEFAULT_DIRECTION, Direction, LedgerEntry, Rubric

DEFAULT_TOLERANCE = 1e-3
LOWER_IS_BETTER_SCORES = frozenset({"falseMetRate", "disagreementRate", "borderline"})


class DimensionDelta(BaseModel):
    """One dimension's previous and latest score and whether the change is a regression."""

    model_config = ConfigDict(frozen=True)

    dimension_id: str
    direction: Direction
    previous: float | None
    latest: float | None
    delta: float | None
    regression: bool


class KeyComparison(BaseModel):
    """The last two entries of one evaluation key, dimension by dimension."""

    model_config = ConfigDict(frozen=True)

    key: str
    previous_timestamp: str
    latest_timestamp: str
    previous_commit: str
    latest_commit: str
    rows: list[DimensionDelta]

    @property
    def regressions(self) -> list[DimensionDelta]:
        """The rows that regressed."""
        return [row for row in self.rows if row.regression]


def entries_by_key(entries: Sequence[LedgerEntry]) -> dict[str, list[LedgerEntry]]:
    """Entries grouped by evaluation key, each group in ledger order, keys in first-seen order."""
    groups: dict[str, list[LedgerEntry]] = {}
    for entry in entries:
        groups.setdefault(parse_entry_key(entry.description).key, []).append(entry)
    return groups


def _scores(entry: LedgerEntry) -> dict[str, float | None]:
    if entry.dimension_scores:
        return {item.dimension_id: item.score for item in entry.dimension_scores}
    return dict(entry.scores)


def compare_pair(
    key: str,
    previous: LedgerEntry,
    latest: LedgerEntry,
    *,
    rubric: Rubric,
    tolerance: float = DEFAULT_TOLERANCE,
) -> KeyComparison:
    """Compare two entries of one key over the union of their dimensions (rubric order first)."""
    before, after = _scores(previous), _scores(latest)
    rubric_ids = [d.id for d in rubric.dimensions]
    extra_ids = sorted((before.keys() | after.keys()) - set(rubric_ids))
    rows: list[DimensionDelta] = []
    for dimension_id in rubric_ids + extra_ids:
        if dimension_id not in before and dimension_id not in after:
            continue
        dimension = rubric.dimension(dimension_id)
        if dimension is not None:
            direction = dimension.direction
        elif dimension_id in LOWER_IS_BETTER_SCORES:
            direction = "lower_is_better"
        else:
            direction = DEFAULT_DIRECTION
        old, new = before.get(dimension_id), after.get(dimension_id)
        delta = None if old is None or new is None else new - old
        regression = delta is not None and (
            delta > tolerance if direction == "lower_is_better" else delta < -tolerance
        )
        rows.append(
            DimensionDelta(
                dimension_id=dimension_id,
                direction=direction,
                previous=old,
                latest=new,
                delta=delta,
                regression=regression,
            )
        )
    return KeyComparison(
        key=key,
        previous_timestamp=previous.timestamp,
        latest_timestamp=latest.timestamp,
        previous_commit=previous.commit,
        latest_commit=latest.commit,
        rows=rows,
    )


def compare_last_two(
    entries: Sequence[LedgerEntry],
    key: str | None = None,
    *,
    rubric: Rubric,
    tolerance: float = DEFAULT_TOLERANCE,
) -> list[KeyComparison]:
    """One comparison per key (or only `key`) that has at least two entries."""
    groups = entries_by_key(entries)
    selected = groups.items() if key is None else [(key, groups.get(key, []))]
    return [
        compare_pair(k, group[-2], group[-1], rubric=rubric, tolerance=tolerance)
        for k, group in selected
        if len(group) >= 2
    ]
