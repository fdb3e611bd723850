"""The offline drafter's propositions read as sentences (the cores are measured on real ACs in
`test_ac_corpus.py`)."""

from __future__ import annotations

from evalflow.domain.baseline_draft import decomposition, draft_ac
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


def test_fields_listed_in_the_subject_of_a_created_artefact_get_one_check_each() -> None:
    # bilalwebs/todo-in-memory-python-console-phase-1: "a new task with ID 1 and title … is
    # created" was one check; SPEC §1's payload-field rule gives one per named field.
    assert decomposition(
        'Given the CLI is open, When they add "Buy groceries", Then a new task with ID 1 and '
        'title "Buy groceries" is created.'
    ) == ("a new task is created", "task carries ID 1", 'task carries title "Buy groceries"')
    # One field, or a list after the verb, stays as it was.
    assert decomposition("Then a task with a unique id is created") == (
        "a task with a unique id is created",
    )


def test_a_status_and_a_body_shared_by_respond_are_two_checks() -> None:
    # foxey/imaprest's Kiro spec, 11 ACs: "respond with HTTP 400 and an error message …" was
    # drafted as "respond", "the respond carries HTTP 400", "the respond carries an error …".
    text = (
        "IF the `limit` query parameter exceeds 100, THEN THE REST_API SHALL respond with HTTP "
        "400 and an error message indicating the maximum allowed limit is 100"
    )
    assert decomposition(text) == (
        "respond with HTTP 400",
        "respond with an error message indicating the maximum allowed limit is 100",
    )
    # The message may hold its own "and"; a reason phrase in capitals is the status's.
    assert decomposition(
        "IF the `destination` is the source, THEN THE REST_API SHALL respond with HTTP 400 and "
        "an error message indicating source and destination must differ"
    ) == (
        "respond with HTTP 400",
        "respond with an error message indicating source and destination must differ",
    )
    assert decomposition("WHEN x, THE API SHALL respond with 404 Not Found and a hint") == (
        "respond with 404 Not Found",
        "respond with a hint",
    )
    draft = draft_ac(AcceptanceCriterion(id="R2-AC3", text=text, line=1))
    tests = [c.proposition for c in draft.checks if c.kind == "T"]
    assert len(tests) == 2 and not any("carries" in t for t in tests)


def test_each_subject_field_gets_its_own_t_check() -> None:
    text = (
        'Given the CLI is open, When they add it, Then a new task with ID 1 and title "X" is '
        "created"
    )
    draft = draft_ac(AcceptanceCriterion(id="US1-AC1", text=text, line=1))
    tests = [c.proposition for c in draft.checks if c.kind == "T"]
    assert tests[1:] == ["A unit test asserts the task carries ID 1.",
                         'A unit test asserts the task carries title "X".']  # fmt: skip
