"""Order-independent Bradley–Terry ratings on the Elo scale, fitted for many samples at once.

Model: P(i beats j) = σ(θ_i − θ_j) with log-strengths θ. A draw counts as half a win for
each side, so the data are win counts W[i, j] (i's wins over j, draws adding 0.5 both ways).
The fit is the MAP estimate under a tiny Gaussian (L2) prior on θ:

    minimise  Σ_ij W[i, j]·log(1 + exp(−(θ_i − θ_j)))  +  (BT_PRIOR / 2)·Σ_i θ_i²

with BT_PRIOR = 1e-6. The prior changes well-determined ratings by far less than 0.01 Elo
points but keeps them finite under perfect separation (a player that never lost gets a large
yet finite rating, roughly log(wins / prior) in θ) and pins the relative level of
comparison-graph components that never met (each component is centred on the mean). The
objective depends on the matches only through W, a sum, so the fit cannot depend on match
order (bit-for-bit for scores in {0, 0.5, 1}, whose sums are exact).

Solver: damped Newton with Armijo backtracking, vectorised over a batch of B win matrices
(B × P × P): one batched linear solve per iteration. The classic MM iteration was rejected:
near separation with a tiny prior it needs more than 10⁵ iterations, while Newton needs
~20 at worst and 3–6 from a warm start.

Ratings: 1500 + (400 / ln 10)·θ with θ centred to mean 0, so the mean rating is 1500 and a
rating gap of 400 means 10:1 odds, exactly as in Elo.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from evalflow.domain.ranking.elo import ELO_START, Match
from evalflow.domain.ranking.matches import match_frame

ELO_SCALE = 400.0 / math.log(10.0)
BT_PRIOR = 1e-6
BT_TOLERANCE = 1e-10
BT_MAX_ITER = 200
_ARMIJO = 1e-4
_MAX_HALVINGS = 60


@dataclass(frozen=True)
class EncodedMatches:
    """Matches as integer player indices into `players` (sorted, unique)."""

    players: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    score_a: np.ndarray

    @property
    def n_players(self) -> int:
        return len(self.players)


def encode_matches(
    matches: pd.DataFrame | Sequence[Match], players: Iterable[str] = ()
) -> EncodedMatches:
    """Index the players of a match table; `players` adds players without matches."""
    frame = match_frame(matches)
    names = tuple(sorted({*map(str, players), *frame["a"], *frame["b"]}))
    index = pd.Index(names)
    return EncodedMatches(
        players=names,
        a=index.get_indexer(frame["a"]).astype(np.int64),
        b=index.get_indexer(frame["b"]).astype(np.int64),
        score_a=frame["score_a"].to_numpy(dtype=float),
    )


def win_matrix(a: np.ndarray, b: np.ndarray, score_a: np.ndarray, n_players: int) -> np.ndarray:
    """W[i, j] = i's score against j summed over matches (a draw adds 0.5 to both sides)."""
    size = n_players * n_players
    wins = np.bincount(a * n_players + b, weights=score_a, minlength=size)
    wins += np.bincount(b * n_players + a, weights=1.0 - score_a, minlength=size)
    return wins.reshape(n_players, n_players)


@dataclass(frozen=True)
class BTFit:
    """Fitted log-strengths θ (B × P, each row centred) and how the solver ended."""

    theta: np.ndarray
    iterations: int
    converged: bool

    @property
    def ratings(self) -> np.ndarray:
        """Elo-scale ratings, mean 1500 per sample."""
        return ELO_START + ELO_SCALE * self.theta


def _objective(theta: np.ndarray, wins: np.ndarray, prior: float) -> np.ndarray:
    diff = theta[:, :, None] - theta[:, None, :]
    loss = (wins * np.logaddexp(0.0, -diff)).sum(axis=(1, 2))
    return loss + 0.5 * prior * (theta * theta).sum(axis=1)


def fit_bradley_terry_batch(
    wins: np.ndarray,
    *,
    prior: float = BT_PRIOR,
    tol: float = BT_TOLERANCE,
    max_iter: int = BT_MAX_ITER,
    theta0: np.ndarray | None = None,
) -> BTFit:
    """Fit B independent Bradley–Terry models from win matrices of shape (B, P, P).

    `theta0` (B × P or P) warm-starts the solver, e.g. with the full-data fit when the
    batch holds bootstrap samples. A sample stops once its largest Newton step is below
    `tol` (in θ units; 1e-10 θ ≈ 2e-8 Elo points) or its Newton decrement is below float
    resolution of its loss (after that step; Newton converges quadratically).
    """
    if prior <= 0.0:
        raise ValueError("prior must be > 0: it keeps separated and disconnected fits finite")
    wins = np.asarray(wins, dtype=float)
    if wins.ndim != 3 or wins.shape[1] != wins.shape[2]:
        raise ValueError("wins must have shape (B, P, P)")
    n_samples, n_players, _ = wins.shape
    theta = np.zeros((n_samples, n_players))
    if theta0 is not None:
        theta += np.broadcast_to(np.asarray(theta0, dtype=float), theta.shape)
        theta -= theta.mean(axis=1, keepdims=True)
    if n_players < 2:
        return BTFit(theta=theta, iterations=0, converged=True)

    games = wins + wins.transpose(0, 2, 1)
    won = wins.sum(axis=2)
    # θ stays centred and the gradient sums to zero, so adding 1/P to every Hessian entry
    # only lifts the flat "shift everyone" direction (eigenvalue prior → prior + 1) and
    # leaves the Newton step unchanged; without it the solve would be ill-conditioned.
    gauge = 1.0 / n_players
    diagonal = np.arange(n_players)
    active = np.ones(n_samples, dtype=bool)
    loss = _objective(theta, wins, prior)
    for iteration in range(1, max_iter + 1):
        p = expit(theta[:, :, None] - theta[:, None, :])
        grad = (games * p).sum(axis=2) - won + prior * theta
        curvature = games * p * p.transpose(0, 2, 1)
        hessian = gauge - curvature
        hessian[:, diagonal, diagonal] += curvature.sum(axis=2) + prior
        step = -np.linalg.solve(hessian, grad[:, :, None])[:, :, 0]
        step[~active] = 0.0
        slope = (grad * step).sum(axis=1)
        # Rounding slack: near the optimum the loss change is below float resolution.
        slack = 8.0 * np.finfo(float).eps * (np.abs(loss) + 1.0)
        size = np.ones(n_samples)
        for _ in range(_MAX_HALVINGS):
            candidate = theta + size[:, None] * step
            candidate_loss = _objective(candidate, wins, prior)
            accepted = candidate_loss <= loss + _ARMIJO * size * slope + slack
            if accepted.all():
                break
            size = np.where(accepted, size, size / 2.0)
        theta = candidate - candidate.mean(axis=1, keepdims=True)
        # Done when the step is below `tol`, or when the Newton decrement gᵀH⁻¹g (the
        # predicted gain) is below float resolution of the loss: in a direction the data
        # leave to the prior alone (eigenvalue = prior), rounding noise in the gradient
        # makes steps of ~1e-10 forever, but they no longer change anything measurable.
        moving = np.abs(size[:, None] * step).max(axis=1) > tol
        gaining = -slope > np.finfo(float).eps * (np.abs(loss) + 1.0)
        loss = candidate_loss
        active &= moving & gaining
        if not active.any():
            return BTFit(theta=theta, iterations=iteration, converged=True)
    return BTFit(theta=theta, iterations=max_iter, converged=False)


def fit_or_raise(
    wins: np.ndarray, *, prior: float = BT_PRIOR, theta0: np.ndarray | None = None
) -> BTFit:
    """`fit_bradley_terry_batch`, treating non-convergence as an internal failure."""
    fit = fit_bradley_terry_batch(wins, prior=prior, theta0=theta0)
    if not fit.converged:
        raise ArithmeticError(
            f"Bradley–Terry fit did not converge in {fit.iterations} Newton iterations"
        )
    return fit


def bradley_terry(
    matches: pd.DataFrame | Sequence[Match],
    players: Iterable[str] = (),
    *,
    prior: float = BT_PRIOR,
) -> dict[str, float]:
    """Elo-scale Bradley–Terry rating per player (mean 1500), independent of match order."""
    encoded = encode_matches(matches, players)
    wins = win_matrix(encoded.a, encoded.b, encoded.score_a, encoded.n_players)
    fit = fit_or_raise(wins[None], prior=prior)
    return {name: float(r) for name, r in zip(encoded.players, fit.ratings[0], strict=True)}
