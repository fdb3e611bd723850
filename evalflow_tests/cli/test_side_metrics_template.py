"""`evalflow side-metrics template`: candidates out, a loadable labels file back in."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from pydantic import ValidationError

from evalflow.cli.side_metrics import template_text
from evalflow.domain.side_metrics.elicitation import ElicitationLabels

CATEGORIES = pd.DataFrame(
    [
        {"category_id": "limits", "category": "limits", "status": "candidate",
         "ref": "spec.md:9", "judge": "heuristic-lexicon",
         "rationale": "unadjudicated; lexicon proposes addressed: FR-012 concerns it"},
        {"category_id": "observability", "category": "observability", "status": "n/a",
         "ref": None, "judge": "rubric", "rationale": "batch tool"},
    ]
)  # fmt: skip
ADDITIONS = pd.DataFrame(
    [
        {"item_id": "FR-012", "ref": "specs/x/spec.md:9", "text": 'Bodies > 64 KiB: "413"',
         "verdict": "candidate", "rationale": "unadjudicated; lexicon proposes valid-defensive"},
        {"item_id": "FR-013", "ref": "specs/x/spec.md:10", "text": "t", "verdict": "invalid",
         "rationale": "labelled"},
    ]
)  # fmt: skip
FINDINGS = pd.DataFrame(
    [
        {"kind": "out_of_scope", "effect": "fail", "status": "candidate",
         "description": "may build out-of-scope behaviour", "ref": "app/x.py:3",
         "judge": "heuristic-lexicon"},
        {"kind": "plan_drift", "effect": "partial", "status": "confirmed",
         "description": "task T2 is not done", "ref": "tasks.md:4", "judge": "heuristic-lexicon"},
    ]
)  # fmt: skip


def test_template_lists_only_candidates_and_loads_once_adjudicated() -> None:
    text = template_text("b.speckit.r1", "speckit", CATEGORIES, ADDITIONS, FINDINGS)
    assert text == template_text("b.speckit.r1", "speckit", CATEGORIES, ADDITIONS, FINDINGS)
    assert text.count(": TODO") == 3
    assert "FR-013" not in text and "observability" not in text and "tasks.md:4" not in text
    with pytest.raises(ValidationError):
        ElicitationLabels.model_validate(yaml.safe_load(text))
    done = (
        text.replace("status: TODO, ref", "status: addressed, ref", 1)
        .replace("verdict: TODO", "verdict: valid-defensive")
        .replace("status: TODO", "status: rejected")
    )
    labels = ElicitationLabels.model_validate(yaml.safe_load(done))
    assert labels.categories["limits"].ref == "spec.md:9"
    assert labels.additions[0].item == "FR-012"
    assert labels.scope is not None and labels.scope.findings[0].ref == "app/x.py:3"


def test_template_without_candidates_is_an_empty_valid_file() -> None:
    none = template_text(
        "b.kiro.r1", "kiro", CATEGORIES.iloc[1:], ADDITIONS.iloc[1:], FINDINGS.iloc[1:]
    )
    labels = ElicitationLabels.model_validate(yaml.safe_load(none))
    assert (labels.categories, labels.additions, labels.scope.findings) == ({}, (), ())
