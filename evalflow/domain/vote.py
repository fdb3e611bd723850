"""Self-consistency: k independent verdicts per check reduced to one majority (SPEC rule 5).

The *plain majority*: a status wins when more than half of the k runs gave it; otherwise the
check stays UNSCORED (with k = 3, a check with fewer than 2 agreeing decided votes is
UNSCORED, never UNMET: an UNSCORED vote is "not judged yet", not a vote against). A check is
*borderline* when its decided votes differ (some MET, some UNMET; listed in the report); an
UNSCORED vote beside agreeing ones is no disagreement.

Self-preference (SPEC core rule 4, §5): when the judge shares the author's model family a
borderline MET becomes UNMET. A judge panel member of another family never overrules the
majority: it only lifts that condition for a check whose MET majority its own votes decide
together with it (a strict majority of the independent decided votes is MET). So the voted
outcome is never above the plain majority, and UNSCORED never becomes UNMET.

A judge that is not deterministic is re-asked once for its UNSCORED votes before they reach
the vote (`evalflow.io.evaluation.score_run`). Agreement across the k runs is summarised per
framework run with Fleiss' kappa.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evalflow.domain.models import STATUSES
from evalflow.errors import InputError

MET, UNMET, UNSCORED = range(3)  # positions in STATUSES
VOTE_COLUMNS = [
    "run_key",
    "check_id",
    "met_votes",
    "unmet_votes",
    "unscored_votes",
    "k",
    "majority",
    "borderline",
]


def majority_vote(
    verdicts: pd.DataFrame,
    k: int,
    *,
    borderline_to_unmet: bool = False,
    independent: pd.Series | None = None,
) -> pd.DataFrame:
    """One row per (run_key, check_id) from a frame with run_key, check_id, run, status.

    `borderline_to_unmet` applies SPEC rule 4 (the judge shares the author's model family):
    a borderline MET becomes UNMET. `independent` (one bool per verdict row) marks the votes
    cast by a judge of another family than the author's, as in a judge panel: a borderline
    MET stays MET only when those votes, by a strict majority of the decided ones, are MET
    too (module docstring). Nothing here raises a check above its plain majority.
    """
    if verdicts.empty:
        return pd.DataFrame(columns=VOTE_COLUMNS)
    # pyarrow's hash lookups and takes: pandas' string `get_indexer` and an object array per
    # output column cost most of the vote at 300,000 verdicts.
    status = (
        pc.index_in(pa.array(verdicts["status"]), value_set=pa.array(STATUSES))
        .fill_null(-1)
        .to_numpy(zero_copy_only=False)
    )
    if (status < 0).any():
        unknown = sorted(set(verdicts["status"][status < 0]))
        raise InputError(f"unknown verdict status {unknown}", fix="use MET, UNMET, UNSCORED")
    run_codes, run_keys = pd.factorize(verdicts["run_key"], sort=True)
    check_codes, check_ids = pd.factorize(verdicts["check_id"], sort=True)
    n_checks = len(check_ids)
    codes, pairs = dense_groups(run_codes * n_checks + check_codes, len(run_keys) * n_checks)
    n = len(pairs)
    matrix = np.bincount(codes * 3 + status, minlength=n * 3).reshape(n, 3)
    runs = verdicts["run"].to_numpy()
    in_range = (runs >= 1) & (runs <= k)
    per_run = np.bincount(codes[in_range] * k + runs[in_range] - 1, minlength=n * k)
    bad = np.flatnonzero((per_run.reshape(n, k) != 1).any(axis=1) | (matrix.sum(axis=1) != k))
    if bad.size:
        run_key = run_keys[pairs[bad[0]] // n_checks]
        check_id = check_ids[pairs[bad[0]] % n_checks]
        raise InputError(
            f"check {check_id} has {int(matrix[bad[0]].sum())} verdicts, expected one per "
            f"run 1..{k}",
            where=run_key,
            fix="re-materialise the missing scoring run",
        )
    winner = matrix.argmax(axis=1)
    has_majority = matrix.max(axis=1) * 2 > k
    majority = np.where(has_majority, winner, UNSCORED)
    borderline = (matrix[:, 0] > 0) & (matrix[:, 1] > 0)
    if borderline_to_unmet:
        degrade = borderline & (majority == MET)
        if independent is not None:
            mine = np.asarray(independent, dtype=bool)
            own = np.bincount(codes[mine] * 3 + status[mine], minlength=n * 3).reshape(n, 3)
            degrade &= ~(own[:, 0] > own[:, 1])
        majority = np.where(degrade, UNMET, majority)
    out = pd.DataFrame(
        {
            "run_key": string_column(run_keys, pairs // n_checks),
            "check_id": string_column(check_ids, pairs % n_checks),
            "met_votes": matrix[:, 0],
            "unmet_votes": matrix[:, 1],
            "unscored_votes": matrix[:, 2],
        }
    )
    out["k"] = k
    out["majority"] = string_column(STATUSES, majority)
    out["borderline"] = borderline
    return out[VOTE_COLUMNS]


def dense_groups(code: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's group (0..G−1, in code order) and the G codes present: by counting when
    the code space is small (no sort), else by `np.unique`."""
    if size <= 8 * len(code) + 1024:
        present = np.flatnonzero(np.bincount(code, minlength=size))
        lookup = np.zeros(size, dtype=np.int64)
        lookup[present] = np.arange(len(present))
        return lookup[code], present
    present, inverse = np.unique(code, return_inverse=True)
    return inverse, present


def string_column(values: Sequence[str], index: np.ndarray) -> pd.Series:
    """values[index] as a string column, built by Arrow (no Python string per row)."""
    return pc.take(pa.array(values, type=pa.string()), pa.array(index)).to_pandas()


def fleiss_kappa(counts: np.ndarray) -> float | None:
    """Fleiss' kappa for subjects × categories counts with the same number of raters each.

    None when agreement by chance is already perfect (every rating in one category), where
    kappa is undefined; the report then says the runs agree trivially.
    """
    counts = np.asarray(counts, dtype=float)
    if counts.size == 0:
        return None
    raters = counts.sum(axis=1)
    n = raters[0]
    if n < 2 or not np.all(raters == n):
        return None
    p_j = counts.sum(axis=0) / counts.sum()
    p_e = float((p_j**2).sum())
    if np.isclose(p_e, 1.0):
        return None
    p_i = ((counts**2).sum(axis=1) - n) / (n * (n - 1))
    return float((p_i.mean() - p_e) / (1.0 - p_e))


def agreement(votes: pd.DataFrame) -> pd.DataFrame:
    """Per run_key: Fleiss' kappa over its checks, borderline count and rate."""
    rows = []
    for run_key, group in votes.groupby("run_key", sort=True):
        counts = group[["met_votes", "unmet_votes", "unscored_votes"]].to_numpy()
        rows.append(
            {
                "run_key": run_key,
                "fleiss_kappa": fleiss_kappa(counts),
                "n_checks": len(group),
                "n_borderline": int(group["borderline"].sum()),
                "borderline_rate": float(group["borderline"].mean()),
            }
        )
    return pd.DataFrame(
        rows, columns=["run_key", "fleiss_kappa", "n_checks", "n_borderline", "borderline_rate"]
    )
