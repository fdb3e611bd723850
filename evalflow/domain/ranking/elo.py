"""Sequential Elo exactly as SPEC §2 states it (start 1500, K = 32), shared by framework
ranking and PluginEval.

Sequential Elo depends on match order; the order-independent headline rating is the
Bradley–Terry MLE (see `bradley_terry`). Elo is kept because the seeds define badges on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

ELO_START = 1500.0
ELO_K = 32.0


@dataclass(frozen=True, slots=True)
class Match:
    """One comparison: `score_a` is 1 (a wins), 0.5 (draw) or 0 (b wins)."""

    a: str
    b: str
    score_a: float


def expected_score(r_a: float, r_b: float) -> float:
    """E(A vs B) = 1 / (1 + 10^((R_B − R_A)/400))."""
    return 1.0 / (1.0 + 10.0 ** ((r_b - r_a) / 400.0))


def sequential_elo(
    matches: Sequence[Match],
    players: Iterable[str] = (),
    *,
    start: float = ELO_START,
    k: float = ELO_K,
) -> dict[str, float]:
    """Apply R' = R + K (S − E) match by match, in the given order.

    Every player named in `players` or in a match gets a rating, starting at `start`.
    """
    ratings: dict[str, float] = {p: start for p in players}
    for m in matches:
        r_a = ratings.setdefault(m.a, start)
        r_b = ratings.setdefault(m.b, start)
        e_a = expected_score(r_a, r_b)
        ratings[m.a] = r_a + k * (m.score_a - e_a)
        ratings[m.b] = r_b + k * ((1.0 - m.score_a) - (1.0 - e_a))
    return ratings
