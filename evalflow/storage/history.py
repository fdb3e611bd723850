"""Evaluation history: one appended row per evaluation of a run, and where its Final drifted.

`evaluation_history` is append-only: every materialisation of a run's report adds a part
`evaluation_history/run_key=<key>/<number>-<evaluated_at>-<fingerprint12>.parquet` and
never rewrites an earlier one, so a re-evaluation that changes a Final stays visible next to
the one before it. `evaluation_number` (1, 2, …) orders a run's evaluations even when
`SOURCE_DATE_EPOCH` pins every `evaluated_at` to one instant.

`final_drift` (a DuckDB view in the catalog and in `evalflow query`) pairs each evaluation
with the run's previous one by the same judge (`judge_name`: a run keeps one result per judge,
so a heuristic evaluation followed by an anthropic one is two results, not a change of one)
and keeps the pairs whose Final changed. Its `cause` says why:

- `inputs`: the run's `inputs_fingerprint` changed — PRD, baseline, base or head commit, the
  framework's elicitation files or k (what the evaluated run brings);
- `evalflow`: same inputs, another evalflow version (the scoring code changed);
- `judge`: same inputs and evalflow version, so only the judge can explain it — either its
  settings changed (`fingerprint_changed`: judge id, model, prompt version or labels file,
  which the full fingerprint covers) or, with an identical fingerprint, only its answers did
  (a model judge is not deterministic).

`judge_drift` flags a drop of Final whose cause is `judge`: the code and the PRD are the same,
the score fell.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from evalflow.storage.tables import columns

if TYPE_CHECKING:
    import pandas as pd

    from evalflow.storage.warehouse import Warehouse

HISTORY_TABLE = "evaluation_history"
DRIFT_VIEW = "final_drift"

# `warehouse.judge_name_of` in SQL: the judge name a history row written before rows named
# their judge (a part of an older contract, read unmigrated by the catalog file) pairs by.
JUDGE_NAME_OF_SQL = """CASE
    WHEN starts_with(judge_id, 'panel:')
        THEN 'panel:' || replace(regexp_replace(judge_id[7:], ':[^+]*', '', 'g'), '+', ',')
    ELSE split_part(judge_id, ':', 1)
END"""


def final_drift_sql(*, names_judge: bool = True) -> str:
    """The `final_drift` view's query; `names_judge=False` for a history relation without a
    `judge_name` column (only parts of an older contract)."""
    judge = f"coalesce(judge_name, {JUDGE_NAME_OF_SQL})" if names_judge else JUDGE_NAME_OF_SQL
    return _FINAL_DRIFT_SQL.replace("{judge}", judge)


_FINAL_DRIFT_SQL = f"""
WITH paired AS (
    SELECT
        *,
        lag(evaluation_number) OVER w AS previous_number,
        lag(evaluated_at) OVER w AS previous_evaluated_at,
        lag(final) OVER w AS previous_final,
        lag(fingerprint) OVER w AS previous_fingerprint,
        lag(inputs_fingerprint) OVER w AS previous_inputs_fingerprint,
        lag(evalflow_version) OVER w AS previous_evalflow_version,
        lag(judge_id) OVER w AS previous_judge_id,
        lag(judge_model) OVER w AS previous_judge_model,
        lag(judge_prompt_version) OVER w AS previous_judge_prompt_version
    FROM (SELECT *, {{judge}} AS pair_judge FROM {HISTORY_TABLE})
    WINDOW w AS (PARTITION BY run_key, pair_judge ORDER BY evaluation_number)
),
changed AS (
    SELECT
        *,
        CASE
            WHEN inputs_fingerprint <> previous_inputs_fingerprint THEN 'inputs'
            WHEN evalflow_version <> previous_evalflow_version THEN 'evalflow'
            ELSE 'judge'
        END AS cause
    FROM paired
    WHERE previous_number IS NOT NULL AND final IS DISTINCT FROM previous_final
)
SELECT
    run_key,
    pair_judge AS judge_name,
    previous_number AS from_evaluation,
    evaluation_number AS to_evaluation,
    previous_evaluated_at AS from_evaluated_at,
    evaluated_at AS to_evaluated_at,
    previous_final AS final_before,
    final AS final_after,
    round(final - previous_final, 6) AS final_change,
    cause,
    fingerprint <> previous_fingerprint AS fingerprint_changed,
    coalesce(cause = 'judge' AND final < previous_final, false) AS judge_drift,
    previous_judge_id AS judge_id_before,
    judge_id AS judge_id_after,
    previous_judge_model AS judge_model_before,
    judge_model AS judge_model_after,
    previous_judge_prompt_version AS judge_prompt_version_before,
    judge_prompt_version AS judge_prompt_version_after,
    previous_inputs_fingerprint AS inputs_fingerprint_before,
    inputs_fingerprint AS inputs_fingerprint_after
FROM changed
ORDER BY run_key, to_evaluation
"""

# What `evalflow history` shows per evaluation: the history row plus how it differs from the
# run's previous evaluation by the same judge (NULL for a judge's first).
HISTORY_SQL = f"""
SELECT
    h.evaluation_number, h.evaluated_at, h.final, h.adjusted_final, h.complete,
    h.judge_name, h.judge_id, h.judge_model, h.judge_prompt_version, h.evalflow_version,
    left(h.head_sha, 12) AS head, left(h.fingerprint, 12) AS fingerprint,
    left(h.inputs_fingerprint, 12) AS inputs_fingerprint, h.cost_usd,
    d.final_change, d.cause, d.judge_drift
FROM {HISTORY_TABLE} h
LEFT JOIN {DRIFT_VIEW} d ON d.run_key = h.run_key AND d.to_evaluation = h.evaluation_number
WHERE h.run_key = $run_key
ORDER BY h.evaluation_number
"""


def judge_cost(verdicts: pd.DataFrame) -> float | None:
    """What the run's scoring cost (cache hits included); NULL if any call is unpriced."""
    costs = verdicts["cost_usd"]
    return None if costs.isna().any() else float(costs.sum())


def record_evaluation(
    warehouse: Warehouse,
    manifest: pd.Series,
    final: pd.Series,
    *,
    inputs_fingerprint: str,
    evaluated_at: datetime,
    cost_usd: float | None,
) -> str:
    """Append the history row of one evaluation of `manifest`'s run; returns the part."""
    import pandas as pd  # the catalog imports this module for its SQL only

    run_key = str(manifest["run_key"])
    while True:
        number = len(warehouse.parts(HISTORY_TABLE, run_key)) + 1
        row = {
            "run_key": run_key,
            "benchmark": manifest["benchmark"],
            "framework": manifest["framework"],
            "judge_name": manifest["judge_name"],
            "evaluation_number": number,
            "evaluated_at": evaluated_at,
            "fingerprint": manifest["fingerprint"],
            "inputs_fingerprint": inputs_fingerprint,
            "evalflow_version": manifest["evalflow_version"],
            "judge_id": manifest["judge_id"],
            "judge_model": manifest["judge_model"],
            "judge_prompt_version": manifest["judge_prompt_version"],
            "comparability_key": manifest["comparability_key"],
            "head_sha": manifest["head_sha"],
            "final": final["final"],
            "adjusted_final": final["adjusted_final"],
            "complete": bool(final["complete"]),
            "cost_usd": cost_usd,
        }
        frame = pd.DataFrame([row], columns=columns(HISTORY_TABLE))
        name = f"{number:06d}-{evaluated_at:%Y%m%dT%H%M%SZ}-{str(manifest['fingerprint'])[:12]}"
        try:
            return warehouse.append(HISTORY_TABLE, frame, run_key, name)
        except FileExistsError:
            continue  # another evaluation of this run took the number: count again
