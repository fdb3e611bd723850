"""Seeded bootstrap confidence intervals for framework ratings, and how separable they are.

What is resampled. When the match table spans several PRDs (distinct `prd_id` values),
whole PRDs are drawn with replacement: matches within one PRD share its baseline and
difficulty, so resampling them one by one would overstate the precision. With one PRD (or
no `prd_id` column) individual matches are drawn with replacement.

How (vectorised across samples). One `numpy.random.default_rng(seed)` draws every sample's
indices, in blocks of samples so memory stays bounded (≈ 2²⁰ indices, and 2²⁰ win-matrix
entries per block). For Bradley–Terry the drawn indices are turned into counts with
`np.bincount` (matches are first collapsed into cells = distinct (a, b, score_a); PRDs are
their own cells), the counts into win matrices, and each block of samples is fitted by one
batched Newton solve warm-started at the full-data fit.
Sequential Elo is replayed on the *same* drawn sequences (the drawn order is the play
order), vectorised across samples, as a reference only: it depends on order.

Outputs, per player and method ∈ {bradley_terry, elo}: `rating` (full-data estimate: the BT
MLE, or sequential Elo in table order), `ci_low`/`ci_high` (percentile interval of the
bootstrap ratings, 95 % by default), `n_matches`, `win_rate` (score share over all its
matches, draws as half), and `percentile` = the corpus percentile of SPEC §2, the pairwise
win rate against the others: its head-to-head score share against each opponent it met,
averaged with every opponent weighted equally, ×100. Null when the player has no matches.

`separability` = share of player pairs whose Bradley–Terry intervals do not overlap (null
with fewer than two players). A player absent from a bootstrap sample sits at the prior
mean (1500) in that sample, which widens its interval — the honest outcome.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from evalflow.domain.ranking.bradley_terry import (
    BT_PRIOR,
    EncodedMatches,
    encode_matches,
    fit_or_raise,
    win_matrix,
)
from evalflow.domain.ranking.elo import ELO_K, ELO_START, Match, sequential_elo
from evalflow.domain.ranking.matches import match_frame, to_elo_matches
from evalflow.errors import InputError

BOOTSTRAP_SAMPLES = 500
CI_LEVEL = 0.95
RATING_COLUMNS = (
    "player",
    "method",
    "rating",
    "ci_low",
    "ci_high",
    "n_matches",
    "win_rate",
    "percentile",
)
_BLOCK_ELEMENTS = 1 << 20
# Sequential Elo's bootstrap replays every drawn match of every sample, one vectorised step
# per match, and holds the drawn sequences (samples × matches int32). With 500 runs of one PRD
# (1.25 M AC matches) that is ~40 CPU-min and 2.5 GB for a reference only, so above this many
# replayed matches (samples × matches) the Elo rows are left out and the report says why;
# Bradley–Terry, the headline, is unaffected. 50 M: 500 samples of 100,000 matches, ~7 s.
ELO_REPLAY_BUDGET = 50_000_000
# Win-matrix entries (and so Hessian entries) per batched Bradley–Terry solve.
_FIT_ELEMENTS = 1 << 20

ResampleUnit = Literal["prd", "match"]


@dataclass(frozen=True)
class Resampling:
    """A match table prepared for resampling: encoded matches and the units drawn."""

    encoded: EncodedMatches
    unit: ResampleUnit
    group: np.ndarray
    n_groups: int

    @property
    def n_draw(self) -> int:
        """How many indices one bootstrap sample draws (matches, or PRDs)."""
        return self.n_groups if self.unit == "prd" else len(self.encoded.a)


def prepare(
    matches: pd.DataFrame | Sequence[Match],
    players: Iterable[str] = (),
    *,
    group_col: str = "prd_id",
) -> Resampling:
    """Validate one benchmark's match table and decide what a bootstrap sample draws."""
    frame = match_frame(matches)
    if "benchmark" in frame.columns and frame["benchmark"].nunique() > 1:
        raise InputError(
            f"matches from several benchmarks: {', '.join(sorted(frame['benchmark'].unique()))}",
            where="match table",
            fix="rank one benchmark at a time",
        )
    if frame.empty:
        raise InputError("no matches to rank", where="match table", fix="score at least 2 runs")
    encoded = encode_matches(frame, players)
    if group_col in frame.columns and frame[group_col].nunique(dropna=False) > 1:
        codes, uniques = pd.factorize(frame[group_col].astype(str), sort=True)
        return Resampling(encoded, "prd", codes.astype(np.int64), len(uniques))
    return Resampling(encoded, "match", np.zeros(len(frame), dtype=np.int64), 1)


def _draw_blocks(seed: int, n_samples: int, n_draw: int) -> Iterator[np.ndarray]:
    """Every sample's drawn indices, a block of samples at a time, from one seeded generator.

    The block size depends only on `n_draw` (about 2**20 indices per block: cache-sized
    counting is ~2× faster than one huge array), so the same inputs give the same draws.
    """
    rng = np.random.default_rng(seed)
    per_block = max(1, _BLOCK_ELEMENTS // max(n_draw, 1))
    for start in range(0, n_samples, per_block):
        rows = min(per_block, n_samples - start)
        yield rng.integers(0, n_draw, size=(rows, n_draw), dtype=np.int64)


def _cells(res: Resampling) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Drawn index → cell, and each cell's contributions (cell, flat target, weight)."""
    enc = res.encoded
    n = enc.n_players
    if res.unit == "prd":
        per_group = np.stack(
            [
                win_matrix(
                    enc.a[res.group == g], enc.b[res.group == g], enc.score_a[res.group == g], n
                ).ravel()
                for g in range(res.n_groups)
            ]
        )
        cell, target = np.nonzero(per_group)
        return np.arange(res.n_groups), cell, target, per_group[cell, target], res.n_groups
    score_codes, scores = pd.factorize(enc.score_a, sort=True)
    code = (enc.a * n + enc.b) * len(scores) + score_codes
    unique_codes, cell_of_match = np.unique(code, return_inverse=True)
    pair, score_index = np.divmod(unique_codes, len(scores))
    a, b = np.divmod(pair, n)
    score = np.asarray(scores, dtype=float)[score_index]
    cells = np.arange(len(unique_codes))
    contribution_cell = np.concatenate([cells, cells])
    target = np.concatenate([a * n + b, b * n + a])
    weight = np.concatenate([score, 1.0 - score])
    keep = weight > 0.0
    return (
        cell_of_match,
        contribution_cell[keep],
        target[keep],
        weight[keep],
        len(unique_codes),
    )


def _win_matrix_blocks(res: Resampling, n_samples: int, seed: int) -> Iterator[np.ndarray]:
    """The B × P × P bootstrap win matrices, from counts of the drawn indices, in blocks of
    at most `_FIT_ELEMENTS` floats (in sample order), so memory does not grow as B·P²."""
    n = res.encoded.n_players
    cell_of_draw, contribution_cell, target, weight, n_cells = _cells(res)
    rows_per_block = max(1, _FIT_ELEMENTS // (n * n))
    for block in _draw_blocks(seed, n_samples, res.n_draw):
        for start in range(0, len(block), rows_per_block):
            draws = block[start : start + rows_per_block]
            rows = len(draws)
            row_offset = np.arange(rows)[:, None]
            counts = np.bincount(
                (cell_of_draw[draws] + row_offset * n_cells).ravel(), minlength=rows * n_cells
            ).reshape(rows, n_cells)
            yield np.bincount(
                (target[None, :] + row_offset * (n * n)).ravel(),
                weights=(counts[:, contribution_cell] * weight[None, :]).ravel(),
                minlength=rows * n * n,
            ).reshape(rows, n, n)


def bootstrap_win_matrices(res: Resampling, n_samples: int, seed: int) -> np.ndarray:
    """B × P × P win matrices, one per bootstrap sample, from counts of the drawn indices."""
    return np.concatenate(list(_win_matrix_blocks(res, n_samples, seed)))


def _elo_sequences(res: Resampling, n_samples: int, seed: int) -> np.ndarray:
    """B × L match indices in play order (−1 pads samples shorter than the longest)."""
    draws = np.empty((n_samples, res.n_draw), dtype=np.int32)
    start = 0
    for block in _draw_blocks(seed, n_samples, res.n_draw):
        draws[start : start + len(block)] = block
        start += len(block)
    if res.unit == "match":
        return draws
    order = np.argsort(res.group, kind="stable")
    sizes = np.bincount(res.group, minlength=res.n_groups)
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    drawn_sizes = sizes[draws]
    seg_start = np.cumsum(drawn_sizes, axis=1) - drawn_sizes
    flat_sizes = drawn_sizes.ravel()
    total = int(flat_sizes.sum())
    within = np.arange(total) - np.repeat(np.cumsum(flat_sizes) - flat_sizes, flat_sizes)
    rows = np.repeat(np.repeat(np.arange(n_samples), res.n_groups), flat_sizes)
    positions = np.repeat(seg_start.ravel(), flat_sizes) + within
    sequences = np.full((n_samples, int(drawn_sizes.sum(axis=1).max())), -1, dtype=np.int32)
    sequences[rows, positions] = order[np.repeat(first[draws].ravel(), flat_sizes) + within]
    return sequences


def elo_batch(
    encoded: EncodedMatches,
    sequences: np.ndarray,
    *,
    start: float = ELO_START,
    k: float = ELO_K,
) -> np.ndarray:
    """Sequential Elo replayed for every row of `sequences` at once (B × P ratings).

    Row by row this is `sequential_elo` with the same arithmetic (results agree with it to
    the last bit or two of float64, numpy's `**` being a different libm call); −1 entries
    are skipped.
    """
    n_samples, length = sequences.shape
    ratings = np.full((n_samples, encoded.n_players), start)
    rows = np.arange(n_samples)
    for t in range(length):
        index = sequences[:, t]
        live = index >= 0
        safe = np.where(live, index, 0)
        ia, ib, s = encoded.a[safe], encoded.b[safe], encoded.score_a[safe]
        r_a, r_b = ratings[rows, ia], ratings[rows, ib]
        e_a = 1.0 / (1.0 + 10.0 ** ((r_b - r_a) / 400.0))
        ratings[rows, ia] = np.where(live, r_a + k * (s - e_a), r_a)
        ratings[rows, ib] = np.where(live, r_b + k * ((1.0 - s) - (1.0 - e_a)), r_b)
    return ratings


@dataclass(frozen=True)
class BootstrapSamples:
    """Full-data ratings (P) and bootstrap ratings (B × P) of one method."""

    players: tuple[str, ...]
    point: np.ndarray
    samples: np.ndarray


def bootstrap_bradley_terry(
    res: Resampling, *, n_samples: int = BOOTSTRAP_SAMPLES, seed: int = 0, prior: float = BT_PRIOR
) -> BootstrapSamples:
    """Bradley–Terry on the full data and on `n_samples` seeded bootstrap samples."""
    enc = res.encoded
    full = fit_or_raise(win_matrix(enc.a, enc.b, enc.score_a, enc.n_players)[None], prior=prior)
    # Block by block: each sample's fit is independent of the others in its batch, and one
    # batch of B × P × P Hessians (5.4 GB at 500 samples of 500 players) is never built.
    ratings = [
        fit_or_raise(wins, prior=prior, theta0=full.theta[0]).ratings
        for wins in _win_matrix_blocks(res, n_samples, seed)
    ]
    return BootstrapSamples(enc.players, full.ratings[0], np.concatenate(ratings))


def bootstrap_elo(
    res: Resampling,
    matches: Sequence[Match],
    *,
    n_samples: int = BOOTSTRAP_SAMPLES,
    seed: int = 0,
) -> BootstrapSamples:
    """Sequential Elo on the table order and on the same bootstrap draws as Bradley–Terry.

    Memory: the drawn sequences are held at once (B × number of matches int32: 200 MB for
    500 samples of 100,000 matches), and the replay is one vectorised step per match.
    """
    point = sequential_elo(matches, res.encoded.players)
    samples = elo_batch(res.encoded, _elo_sequences(res, n_samples, seed))
    return BootstrapSamples(
        res.encoded.players, np.array([point[p] for p in res.encoded.players]), samples
    )


def _player_stats(enc: EncodedMatches) -> pd.DataFrame:
    wins = win_matrix(enc.a, enc.b, enc.score_a, enc.n_players)
    games = wins + wins.T
    played = games.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        win_rate = np.where(played > 0, wins.sum(axis=1) / played, np.nan)
        share = np.where(games > 0, wins / games, np.nan)
        met = (games > 0).sum(axis=1)
        percentile = np.where(met > 0, 100.0 * np.nansum(share, axis=1) / met, np.nan)
    return pd.DataFrame(
        {
            "player": list(enc.players),
            "n_matches": played.round().astype(np.int64),
            "win_rate": win_rate,
            "percentile": percentile,
        }
    )


def separability(ci_low: np.ndarray, ci_high: np.ndarray) -> float | None:
    """Share of player pairs whose intervals do not overlap (None below two players)."""
    n = len(ci_low)
    if n < 2:
        return None
    i, j = np.triu_indices(n, k=1)
    apart = (ci_low[i] > ci_high[j]) | (ci_low[j] > ci_high[i])
    return float(apart.mean())


@dataclass(frozen=True)
class RatingReport:
    """The tidy `rating` table (RATING_COLUMNS) and the BT separability of one benchmark."""

    rating: pd.DataFrame
    separability: float | None
    resample_unit: ResampleUnit
    n_samples: int
    seed: int
    level: float
    elo_left_out: str | None = None


def rate(
    matches: pd.DataFrame | Sequence[Match],
    players: Iterable[str] = (),
    *,
    n_samples: int = BOOTSTRAP_SAMPLES,
    seed: int = 0,
    level: float = CI_LEVEL,
    prior: float = BT_PRIOR,
    group_col: str = "prd_id",
    include_elo: bool = True,
    elo_budget: int = ELO_REPLAY_BUDGET,
) -> RatingReport:
    """Bradley–Terry and sequential Elo ratings with seeded percentile bootstrap CIs.

    `include_elo=False` skips the Elo reference rows (its replay costs one vectorised step
    per match, ~7 s for 500 samples of 100,000 matches, against < 1 s for Bradley–Terry);
    they are also left out, with the reason in `elo_left_out`, when `n_samples` × matches
    exceeds `elo_budget`.
    """
    if n_samples < 1:
        raise InputError("n_samples must be at least 1", fix="use the default 500")
    if not 0.0 < level < 1.0:
        raise InputError(f"CI level {level} is not in (0, 1)", fix="use 0.95")
    frame = match_frame(matches)
    res = prepare(frame, players, group_col=group_col)
    tail = 100.0 * (1.0 - level) / 2.0
    stats = _player_stats(res.encoded)
    boots = {
        "bradley_terry": bootstrap_bradley_terry(res, n_samples=n_samples, seed=seed, prior=prior)
    }
    replays = n_samples * len(res.encoded.a)
    left_out = None
    if include_elo and replays > elo_budget:
        left_out = (
            f"Elo reference left out: {n_samples} samples × {len(res.encoded.a):,} matches = "
            f"{replays:,} sequential replays, over the budget of {elo_budget:,}"
        )
    elif include_elo:
        boots["elo"] = bootstrap_elo(res, to_elo_matches(frame), n_samples=n_samples, seed=seed)
    parts = []
    for method, boot in boots.items():
        low, high = np.percentile(boot.samples, [tail, 100.0 - tail], axis=0)
        parts.append(stats.assign(method=method, rating=boot.point, ci_low=low, ci_high=high))
    rating = pd.concat(parts, ignore_index=True).loc[:, list(RATING_COLUMNS)]
    bt = rating[rating["method"] == "bradley_terry"]
    return RatingReport(
        rating=rating,
        separability=separability(bt["ci_low"].to_numpy(), bt["ci_high"].to_numpy()),
        resample_unit=res.unit,
        n_samples=n_samples,
        seed=seed,
        level=level,
        elo_left_out=left_out,
    )
