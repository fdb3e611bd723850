"""Self-consistency: k independent verdicts per check reduced to one majority (SPEC rule 5).

A status wins when more than half of the k runs gave it; otherwise the check stays UNSCORED.
Any disagreement makes the check *borderline* (listed in the report). Agreement across the
k runs is summarised per framework run with Fleiss' kappa.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalflow.domain.models import STATUSES
from evalflow.errors import InputError

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
    verdicts: pd.DataFrame, k: int, *, borderline_to_unmet: bool = False
) -> pd.DataFrame:
    """One row per (run_key, check_id) from a frame with run_key, check_id, run, status.

    `borderline_to_unmet` applies SPEC rule 4 (the judge shares the author's model family):
    a borderline check can then never be MET.
    """
    if verdicts.empty:
        return pd.DataFrame(columns=VOTE_COLUMNS)
    unknown = set(verdicts["status"]) - set(STATUSES)
    if unknown:
        raise InputError(
            f"unknown verdict status {sorted(unknown)}", fix="use MET, UNMET, UNSCORED"
        )
    runs = verdicts.groupby(["run_key", "check_id"], sort=True)["run"].agg(["nunique", "size"])
    bad = runs[(runs["nunique"] != k) | (runs["size"] != k)]
    if not bad.empty:
        run_key, check_id = bad.index[0]
        raise InputError(
            f"check {check_id} has {bad.iloc[0]['size']} verdicts, expected one per run 1..{k}",
            where=run_key,
            fix="re-materialise the missing scoring run",
        )
    counts = (
        pd.crosstab([verdicts["run_key"], verdicts["check_id"]], verdicts["status"])
        .reindex(columns=list(STATUSES), fill_value=0)
        .astype("int64")
    )
    matrix = counts.to_numpy()
    winner = matrix.argmax(axis=1)
    has_majority = matrix.max(axis=1) * 2 > k
    majority = np.where(has_majority, np.array(STATUSES)[winner], "UNSCORED")
    borderline = (matrix > 0).sum(axis=1) > 1
    if borderline_to_unmet:
        majority = np.where(borderline & (majority == "MET"), "UNMET", majority)
    out = counts.reset_index()
    out.columns = ["run_key", "check_id", "met_votes", "unmet_votes", "unscored_votes"]
    out["k"] = k
    out["majority"] = majority
    out["borderline"] = borderline
    return out[VOTE_COLUMNS]


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
