"""All four side metrics of one framework run from plain inputs, and their warehouse frames.

Order matters: E first (it settles the valid additions), then S (traces builds against PRD
ACs ∪ valid additions), D (tiers from the MET T-checks' evidence and probes), R (D's extras,
zeroing only what S's adjudication confirmed out of scope), and the harness over the
sanctioned set. Nothing here is folded into Final. Offline without labels or a model judge,
E and S hold candidates and NULL ratios (reason `unadjudicated — N candidates`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd
from pydantic import BaseModel, ConfigDict

from evalflow.domain.models import PRD, Baseline
from evalflow.domain.side_metrics.common import EvidenceLine, TestCaseLike
from evalflow.domain.side_metrics.distribution import DistributionResult, compute_distribution
from evalflow.domain.side_metrics.elicitation import (
    ElicitationJudge,
    ElicitationLabels,
    ElicitationResult,
    ElicitationRubric,
    MasterList,
    compute_elicitation,
    out_of_scope_of,
)
from evalflow.domain.side_metrics.exclusions import OutOfScope
from evalflow.domain.side_metrics.harness import (
    HarnessCoverage,
    sanctioned_set,
    t_over_sanctioned,
)
from evalflow.domain.side_metrics.judges import HeuristicElicitationJudge, LabelsElicitationJudge
from evalflow.domain.side_metrics.robustness import RobustnessResult, compute_robustness
from evalflow.domain.side_metrics.scope import ProductionChange, ScopeResult, compute_scope
from evalflow.domain.side_metrics.spec_artifacts import parse_spec_artifacts


@dataclass(frozen=True)
class SideMetricsInputs:
    """Everything the side metrics read; texts are the files at the head commit.

    `cases` is the inventory classified feature/pre-existing; `evidence` the evidence lines
    of the MET checks (`common.met_test_evidence`); `votes` the majority-vote frame;
    `spec_files` the run's spec.md/tasks.md (empty when the framework has none);
    `production_files` the non-test code files; `changes` the production files the diff
    touched. `model_judges` sit between the labels file and the heuristic.
    """

    prd: PRD
    baseline: Baseline
    cases: Sequence[TestCaseLike]
    evidence: Sequence[EvidenceLine]
    votes: pd.DataFrame
    test_files: Mapping[str, str]
    spec_files: Mapping[str, str]
    production_files: Mapping[str, str]
    changes: Sequence[ProductionChange]
    rubric: ElicitationRubric = field(default_factory=ElicitationRubric)
    master: MasterList | None = None
    labels: ElicitationLabels | None = None
    labels_source: str = "<labels>"
    model_judges: Sequence[ElicitationJudge] = ()
    main_path_overrides: Mapping[str, bool] | None = None


class SideMetrics(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    distribution: DistributionResult
    robustness: RobustnessResult
    elicitation: ElicitationResult
    scope: ScopeResult
    harness: HarnessCoverage

    def frames(self) -> dict[str, pd.DataFrame]:
        """Warehouse tables, snake_case, without run_key (the asset stamps it)."""
        return {
            "test_tier": self.distribution.test_tier_frame(),
            "distribution": self.distribution.distribution_frame(),
            "robustness": self.robustness.frame(),
            "elicitation_category": self.elicitation.category_frame(),
            "elicitation_addition": self.elicitation.addition_frame(),
            "elicitation_item": self.elicitation.item_frame(),
            "elicitation_summary": self.elicitation.summary_frame(),
            "scope_finding": self.scope.finding_frame(),
            "scope_summary": self.scope.summary_frame(),
            "sanctioned_requirement": self.harness.frame(),
        }


def elicitation_judges(
    labels: ElicitationLabels | None,
    model_judges: Sequence[ElicitationJudge] = (),
    labels_source: str = "<labels>",
) -> list[ElicitationJudge]:
    """Precedence order: labels file, model judges, heuristic lexicon."""
    judges: list[ElicitationJudge] = []
    if labels is not None:
        judges.append(LabelsElicitationJudge(labels, labels_source))
    judges += list(model_judges)
    judges.append(HeuristicElicitationJudge())
    return judges


def confirmed_out_of_scope(every: OutOfScope, terms: Sequence[str]) -> OutOfScope:
    """The exclusions (and frozen keywords) an adjudicated S finding confirmed were built."""
    wanted = set(terms)
    return OutOfScope(
        prd=tuple(e for e in every.prd if e.phrase_text in wanted),
        keywords=tuple(k for k in every.keywords if k in wanted),
    )


def compute_side_metrics(inputs: SideMetricsInputs) -> SideMetrics:
    """E, S, D, R and the sanctioned-set harness for one run."""
    artifacts = parse_spec_artifacts(inputs.spec_files)
    judges = elicitation_judges(inputs.labels, inputs.model_judges, inputs.labels_source)
    pooled = (
        LabelsElicitationJudge(inputs.labels, inputs.labels_source).pooled(artifacts, inputs.master)
        if inputs.labels is not None and artifacts.present
        else None
    )
    elicitation = compute_elicitation(
        inputs.prd,
        artifacts,
        judges,
        rubric=inputs.rubric,
        master=inputs.master,
        production_files=inputs.production_files,
        pooled_labels=pooled,
    )
    scope = compute_scope(
        inputs.prd,
        artifacts,
        elicitation,
        inputs.changes,
        inputs.production_files,
        rubric=inputs.rubric,
        labels=inputs.labels.scope if inputs.labels is not None else None,
        labels_source=inputs.labels_source,
    )
    votes = inputs.votes
    met = set(votes.loc[votes["majority"] == "MET", "check_id"]) if not votes.empty else set()
    decided = (
        set(votes.loc[votes["majority"] != "UNSCORED", "check_id"]) if not votes.empty else set()
    )
    distribution = compute_distribution(
        inputs.prd,
        inputs.baseline,
        inputs.cases,
        inputs.evidence,
        met_checks=met,
        unscored_checks={c.id for _, c in inputs.baseline.checks()} - decided,
        test_files=inputs.test_files,
        main_path_overrides=inputs.main_path_overrides,
    )
    robustness = compute_robustness(
        distribution,
        inputs.cases,
        inputs.test_files,
        out_of_scope=confirmed_out_of_scope(
            out_of_scope_of(inputs.prd, inputs.rubric), scope.confirmed_terms()
        ),
    )
    harness = t_over_sanctioned(
        inputs.baseline,
        inputs.votes,
        sanctioned_set(inputs.prd, inputs.baseline, elicitation.valid_additions()),
    )
    return SideMetrics(
        distribution=distribution,
        robustness=robustness,
        elicitation=elicitation,
        scope=scope,
        harness=harness,
    )
