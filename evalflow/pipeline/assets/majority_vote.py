"""Stage `majority_vote`: the k verdicts of each check reduced to one majority."""

import dagster as dg
import pandas as pd

from evalflow.domain.vote import majority_vote as vote
from evalflow.io.evaluation import K_RUNS
from evalflow.judges.panel import independent_votes
from evalflow.pipeline.assets.common import run_output, stamp


def majority_vote(
    run_manifest: pd.DataFrame,
    scoring_run_1: pd.DataFrame,
    scoring_run_2: pd.DataFrame,
    scoring_run_3: pd.DataFrame,
) -> dg.Output:
    """MET/UNMET/UNSCORED majority per check, vote counts and the borderline flag.

    When the judge shares the author's model family (SPEC core rule 4), a borderline check
    can never be MET — unless a judge panel's votes of another family are MET together with
    the majority (`domain.vote`); no vote raises a check above its plain majority.
    """
    verdicts = pd.concat([scoring_run_1, scoring_run_2, scoring_run_3], ignore_index=True)
    self_preference = bool(run_manifest["self_preference"].iloc[0])
    votes = stamp(
        vote(
            verdicts,
            K_RUNS,
            borderline_to_unmet=self_preference,
            independent=independent_votes(
                verdicts["judge_id"], run_manifest["author_model"].iloc[0]
            ),
        ),
        run_manifest,
    )
    return run_output(
        "majority_vote",
        votes,
        run_manifest,
        {
            "borderline": int(votes["borderline"].sum()),
            **{s: int(n) for s, n in votes["majority"].value_counts().items()},
        },
    )
