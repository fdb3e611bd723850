"""Monte Carlo uncertainty of Final from each check's disagreement across the k scoring runs.

The reported Final uses the voted outcome per check (SPEC reproducibility rule 5 and core
rule 4, `domain.vote`). The k = 3 verdicts also say how sure that outcome is: a check with 2
of 3 MET votes could have gone the other way. Each simulation redraws every check as MET with
probability met_votes / (met_votes + unmet_votes), independently — an UNSCORED vote is no
vote — and recomputes the roll-up of SPEC §1. A check whose decided votes agree never flips,
and neither does a borderline check of a run under self-preference (`self_preference`): rule
4 decides it, so the draw keeps its voted outcome (a redraw could only make a MET the rule
forbids). The optional columns `unmet_votes`, `majority` and `self_preference` (as the
`majority_vote` table and the run manifest hold them) default to k − met_votes, the plain
majority and False. The roll-up:

    I, T        = MET / all checks of that kind in the AC
    AC_score    = 0.6·I + 0.4·T
    Story_score = mean of the story's AC scores
    Final       = Σ w·Story_score / Σ w   over stories with w > 0

That roll-up is linear in the check indicators, so each check carries a fixed coefficient
(w / Σw) × (1 / #ACs of its story) × (0.6 / #I-checks or 0.4 / #T-checks of its AC) and a
simulated Final is the coefficient-weighted count of MET checks: the recomputation is one
weighted sum per run, vectorised over simulations and runs. An AC needs at least one I-check
and one T-check, exactly as the frozen baseline requires (`domain/baseline.py` refuses an AC
lacking either), because the roll-up divides by both counts; such an AC is refused here too.
Stories with w = 0 contribute nothing (they are not scored).

Per run: `final_majority` (the deterministic Final from the voted outcome; without a
`majority` column MET iff more than k/2 MET votes), `final_mean`,
and the percentile interval `ci_low`/`ci_high` (2.5 / 97.5 % by default) of the simulated
Finals. Per pair of runs, from the same joint simulations: P(A > B), P(tie) (|A − B| ≤
1e-12) and P(B > A).

**Within noise.** Runs A and B are *within noise* when their intervals overlap OR
0.05 ≤ P(A > B) + ½·P(tie) ≤ 0.95. Either signal alone means the k-run disagreement could
reorder them, so neither may be reported as better; the rule errs on the side of "not
separable". Ties count half so the rule is symmetric (A vs B ⇔ B vs A); without ties the
middle term is plain P(A > B).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalflow.domain.ranking.matches import DRAW_TOLERANCE
from evalflow.errors import InputError

CHECK_VOTE_COLUMNS = (
    "run_key",
    "story_id",
    "weight",
    "ac_id",
    "check_id",
    "kind",
    "met_votes",
    "k",
)
SIMULATIONS = 2000
CI_LEVEL = 0.95
NOISE_BAND = (0.05, 0.95)
KIND_WEIGHTS = {"I": 0.6, "T": 0.4}
_BLOCK_ELEMENTS = 1 << 20


def _validated(votes: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in CHECK_VOTE_COLUMNS if c not in votes.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}",
            where="check-vote table",
            fix=f"provide columns {', '.join(CHECK_VOTE_COLUMNS)}",
        )
    frame = votes.loc[:, list(CHECK_VOTE_COLUMNS)].reset_index(drop=True).copy()
    if frame.empty:
        raise InputError("no checks", where="check-vote table")
    given = votes.reset_index(drop=True)
    met, k = pd.to_numeric(frame["met_votes"]), pd.to_numeric(frame["k"])
    frame["unmet_votes"] = (
        given["unmet_votes"] if "unmet_votes" in given else (k - met).clip(lower=0)
    )
    frame["voted_met"] = (
        given["majority"].eq("MET") if "majority" in given else 2 * met > k
    ).astype(bool)
    frame["self_preference"] = (
        given["self_preference"].fillna(False).astype(bool) if "self_preference" in given else False
    )
    for column in ("run_key", "story_id", "ac_id", "check_id", "kind"):
        if frame[column].isna().any():
            raise InputError(f"null {column}", where="check-vote table")
        frame[column] = frame[column].astype(str)
    unknown = sorted(set(frame["kind"]) - set(KIND_WEIGHTS))
    if unknown:
        raise InputError(
            f"unknown check kind {unknown}", where="check-vote table", fix="use I or T"
        )
    for column in ("weight", "met_votes", "unmet_votes", "k"):
        values = pd.to_numeric(frame[column], errors="coerce")
        if values.isna().any() or (values < 0).any():
            raise InputError(f"{column} must be a non-negative number", where="check-vote table")
        frame[column] = values.astype(float)
    counts = frame[["met_votes", "unmet_votes", "k"]].to_numpy()
    if (counts != np.round(counts)).any() or (frame["k"] < 1).any():
        raise InputError(
            "met_votes, unmet_votes and k must be whole numbers with k ≥ 1",
            where="check-vote table",
        )
    over = frame["met_votes"] + frame["unmet_votes"] > frame["k"]
    if over.any():
        row = frame[over].iloc[0]
        raise InputError(
            "met_votes + unmet_votes exceeds k", where=f"{row['run_key']} {row['check_id']}"
        )
    if frame.duplicated(["run_key", "check_id"]).any():
        row = frame[frame.duplicated(["run_key", "check_id"])].iloc[0]
        raise InputError("check listed twice", where=f"{row['run_key']} {row['check_id']}")
    if (frame.groupby(["run_key", "ac_id"])["story_id"].nunique() > 1).any():
        raise InputError("an AC belongs to several stories", where="check-vote table")
    if (frame.groupby(["run_key", "story_id"])["weight"].nunique() > 1).any():
        raise InputError("a story has several weights", where="check-vote table")
    n_kinds = frame.groupby(["run_key", "ac_id"])["kind"].nunique()
    if (n_kinds < len(KIND_WEIGHTS)).any():
        run_key, ac_id = n_kinds[n_kinds < len(KIND_WEIGHTS)].index[0]
        present = set(frame.loc[(frame["run_key"] == run_key) & (frame["ac_id"] == ac_id), "kind"])
        absent = " and ".join(sorted(set(KIND_WEIGHTS) - present))
        raise InputError(
            f"AC {ac_id} has no {absent}-check",
            where=run_key,
            fix="freeze a baseline where every AC has at least one I-check and one T-check",
        )
    return frame


def check_coefficients(votes: pd.DataFrame) -> pd.DataFrame:
    """Each check's share of its run's Final: Final = Σ coefficient × MET (see module doc)."""
    frame = _validated(votes)
    story_weight = frame.drop_duplicates(["run_key", "story_id"])
    sum_w = story_weight.groupby("run_key")["weight"].sum()
    if (sum_w <= 0).any():
        run_key = str(sum_w[sum_w <= 0].index[0])
        raise InputError(
            "no scored story (Σw = 0): Final is undefined",
            where=run_key,
            fix="give at least one story priority P0 or P1",
        )
    n_acs = frame.groupby(["run_key", "story_id"])["ac_id"].transform("nunique")
    n_kind = frame.groupby(["run_key", "ac_id", "kind"])["check_id"].transform("size")
    frame["coefficient"] = (
        frame["weight"]
        / frame["run_key"].map(sum_w)
        / n_acs
        * frame["kind"].map(KIND_WEIGHTS)
        / n_kind
    )
    return frame


def met_probability(frame: pd.DataFrame) -> pd.Series:
    """Per check of a `check_coefficients` frame: the probability a draw makes it MET —
    met / decided votes, or 0/1 where the draw is held at the voted outcome (module doc)."""
    met, unmet = frame["met_votes"], frame["unmet_votes"]
    held = (met == 0) | (unmet == 0) | frame["self_preference"]
    split = met / (met + unmet).where(~held, 1.0)
    return split.where(~held, frame["voted_met"].astype(float))


@dataclass(frozen=True)
class FinalUncertainty:
    """Per-run Final intervals and per-pair order probabilities (module doc)."""

    runs: pd.DataFrame
    pairs: pd.DataFrame
    n_simulations: int
    seed: int
    level: float

    def pair(self, a: str, b: str) -> pd.Series:
        """The pair row for runs a and b, oriented so that `a` is run A."""
        first, second = sorted((a, b))
        hit = self.pairs[(self.pairs["a"] == first) & (self.pairs["b"] == second)]
        if first == second or hit.empty:
            raise InputError(f"no pair {a!r} / {b!r}", where="final uncertainty")
        row = hit.iloc[0].copy()
        if (a, b) != (first, second):
            row["a"], row["b"] = a, b
            row["p_a_greater"], row["p_b_greater"] = row["p_b_greater"], row["p_a_greater"]
        return row

    def within_noise(self, a: str, b: str) -> bool:
        """Intervals overlap or 0.05 ≤ P(A > B) + ½·P(tie) ≤ 0.95 (module doc)."""
        return bool(self.pair(a, b)["within_noise"])


def _simulation_blocks(seed: int, n_simulations: int, n_checks: int) -> Iterator[np.ndarray]:
    rng = np.random.default_rng(seed)
    per_block = max(1, _BLOCK_ELEMENTS // max(n_checks, 1))
    for start in range(0, n_simulations, per_block):
        yield rng.random((min(per_block, n_simulations - start), n_checks))


def _simulate(
    frame: pd.DataFrame, n_simulations: int, seed: int
) -> tuple[list[str], np.ndarray, np.ndarray]:
    if n_simulations < 1:
        raise InputError("n_simulations must be at least 1", fix="use the default 2000")
    run_codes, run_keys = pd.factorize(frame["run_key"], sort=True)
    n_runs = len(run_keys)
    coefficient = frame["coefficient"].to_numpy()
    voted = frame["voted_met"].to_numpy()
    majority = np.bincount(run_codes, weights=coefficient * voted, minlength=n_runs)
    probability = met_probability(frame).to_numpy()
    # Held at the voted outcome: decided votes that agree, or rule 4 decides (module doc).
    held = (probability == 0.0) | (probability == 1.0)
    base = np.bincount(run_codes[held], weights=(coefficient * probability)[held], minlength=n_runs)
    borderline = ~held
    p_met = probability[borderline]
    b_runs, b_coefficient = run_codes[borderline], coefficient[borderline]
    finals = np.empty((n_simulations, n_runs))
    start = 0
    for uniform in _simulation_blocks(seed, n_simulations, int(borderline.sum())):
        rows = len(uniform)
        contribution = np.bincount(
            (b_runs[None, :] + np.arange(rows)[:, None] * n_runs).ravel(),
            weights=((uniform < p_met) * b_coefficient).ravel(),
            minlength=rows * n_runs,
        ).reshape(rows, n_runs)
        finals[start : start + rows] = base + contribution
        start += rows
    return [str(r) for r in run_keys], majority, finals


def simulate_finals(
    votes: pd.DataFrame, *, n_simulations: int = SIMULATIONS, seed: int = 0
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Run keys (sorted), majority Finals (R) and simulated Finals (N × R)."""
    return _simulate(check_coefficients(votes), n_simulations, seed)


def final_uncertainty(
    votes: pd.DataFrame,
    *,
    n_simulations: int = SIMULATIONS,
    seed: int = 0,
    level: float = CI_LEVEL,
) -> FinalUncertainty:
    """Intervals of Final per run and P(A > B) per pair from `n_simulations` seeded draws."""
    if not 0.0 < level < 1.0:
        raise InputError(f"CI level {level} is not in (0, 1)", fix="use 0.95")
    frame = check_coefficients(votes)
    run_keys, majority, finals = _simulate(frame, n_simulations, seed)
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = np.percentile(finals, [tail, 100.0 - tail], axis=0)
    is_borderline = (frame["met_votes"] > 0) & (frame["unmet_votes"] > 0)
    counts = is_borderline.groupby(frame["run_key"]).agg(["size", "sum"]).reindex(run_keys)
    runs = pd.DataFrame(
        {
            "run_key": run_keys,
            "final_majority": majority,
            "final_mean": finals.mean(axis=0),
            "ci_low": low,
            "ci_high": high,
            "n_checks": counts["size"].to_numpy(dtype=np.int64),
            "n_borderline": counts["sum"].to_numpy(dtype=np.int64),
        }
    )
    return FinalUncertainty(
        runs=runs,
        pairs=_pairs(run_keys, finals, low, high),
        n_simulations=n_simulations,
        seed=seed,
        level=level,
    )


def _pairs(
    run_keys: list[str], finals: np.ndarray, low: np.ndarray, high: np.ndarray
) -> pd.DataFrame:
    parts = []
    for i in range(len(run_keys) - 1):
        diff = finals[:, [i]] - finals[:, i + 1 :]
        others = np.arange(i + 1, len(run_keys))
        parts.append(
            pd.DataFrame(
                {
                    "a": run_keys[i],
                    "b": [run_keys[j] for j in others],
                    "p_a_greater": (diff > DRAW_TOLERANCE).mean(axis=0),
                    "p_tie": (np.abs(diff) <= DRAW_TOLERANCE).mean(axis=0),
                    "p_b_greater": (diff < -DRAW_TOLERANCE).mean(axis=0),
                    "ci_overlap": (low[i] <= high[others]) & (low[others] <= high[i]),
                }
            )
        )
    columns = ["a", "b", "p_a_greater", "p_tie", "p_b_greater", "ci_overlap"]
    pairs = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    lo, hi = NOISE_BAND
    a_ahead = pairs["p_a_greater"].astype(float) + 0.5 * pairs["p_tie"].astype(float)
    in_band = a_ahead.between(lo, hi)
    pairs["within_noise"] = pairs["ci_overlap"].astype(bool) | in_band
    return pairs
