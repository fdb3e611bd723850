"""The offline drafter's propositions read as sentences (the cores are measured on real ACs in
`test_ac_corpus.py`)."""

from __future__ import annotations

from evalflow.domain.baseline_draft import draft_ac
from evalflow.domain.models import AcceptanceCriterion


def _propositions(text: str) -> list[str]:
    draft = draft_ac(AcceptanceCriterion(id="R1-AC1", text=text, line=1))
    return [c.proposition for c in draft.checks if c.kind == "I"]


def test_an_ears_condition_word_is_kept_once() -> None:
    # foxey/imaprest's Kiro spec: "WHEN …, THE REST_API SHALL …" was drafted "When WHEN …",
    # and "IF …, THEN …" as "When IF …".
    (when,) = _propositions(
        "WHEN no `limit` query parameter is provided, THE REST_API SHALL default the Page_Size "
        "to 50"
    )
    assert when.startswith("When no `limit` query parameter is provided, ")
    (if_,) = _propositions("IF the `limit` query parameter exceeds 100, THEN THE API SHALL log it")
    assert if_.startswith("If the `limit` query parameter exceeds 100, ")
    (gwt,) = _propositions("Given a task, when the user deletes it, then it is removed")
    assert gwt.startswith("Given a task, when the user deletes it, ")
