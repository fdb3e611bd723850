"""The verdict a tool-using LLM check judge submits, and how it becomes a `Verdict`.

Every LLM backend (Claude, OpenAI-compatible) asks the model to call `submit_verdict`
(`prompt.SUBMIT_TOOL`); the arguments are validated here, once, so the backends cannot drift
apart on what a valid answer is:

* the arguments must match `Submission` exactly (no extra keys, MET or UNMET only);
* a quote copied with `read_file`'s "12: " line prefixes is still checked against the file,
  so the prefixes are stripped;
* a MET whose `searches` claim hits evalflow never returned is refused (the caller retries
  once, then scores UNSCORED); other claimed searches that never ran are flagged and named in
  the rationale;
* the verdict's `searches` are the searches evalflow really executed, never the claimed ones.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from evalflow.domain.models import Evidence, Search, Verdict
from evalflow.judges.family import same_family
from evalflow.judges.validator import FLAG_CLAIMED_SEARCH, claimed_search_problem

_LINE_PREFIX = re.compile(r"^\s*\d+: ", re.MULTILINE)


class Submission(BaseModel):
    """The `submit_verdict` arguments, validated before they become a Verdict."""

    model_config = ConfigDict(extra="forbid")

    # The order of `SUBMIT_TOOL`'s schema: evidence, searches, rationale, then status.
    evidence: tuple[Evidence, ...]
    searches: tuple[Search, ...]
    rationale: str
    status: Literal["MET", "UNMET"]


def verdict_from_submission(
    payload: Any, *, check_id: str, run: int, judge_id: str, executed: Sequence[Search]
) -> tuple[Verdict | None, str]:
    """The verdict, or None and a one-line problem for the retry turn (module docstring)."""
    if payload is None:
        return None, "the arguments are not a JSON object"
    try:
        submitted = Submission.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "input"
        return None, f"{where}: {first['msg']}"
    evidence = tuple(
        e.model_copy(update={"quote": _LINE_PREFIX.sub("", e.quote)}) if e.quote else e
        for e in submitted.evidence
    )
    ran = tuple(dict.fromkeys(executed))
    if submitted.status == "MET":
        problem = claimed_search_problem(submitted.searches, ran)
        if problem is not None:
            return None, problem
    patterns = {s.pattern for s in ran}
    claimed = [s.pattern for s in submitted.searches if s.pattern not in patterns]
    rationale = submitted.rationale
    if claimed:
        rationale += f" [judge: claimed searches never run: {', '.join(claimed[:5])}]"
    verdict = Verdict(
        check_id=check_id,
        run=run,
        status=submitted.status,
        evidence=evidence,
        searches=ran,
        rationale=rationale,
        judge_id=judge_id,
        flags=(FLAG_CLAIMED_SEARCH,) if claimed else (),
    )
    return verdict, ""


def unscored_verdict(
    *, check_id: str, run: int, judge_id: str, executed: Sequence[Search], reason: str
) -> Verdict:
    """A check the judge could not decide: UNSCORED, with the searches it did run."""
    return Verdict(
        check_id=check_id,
        run=run,
        status="UNSCORED",
        searches=tuple(dict.fromkeys(executed)),
        rationale=reason,
        judge_id=judge_id,
    )


def warn_self_preference(log: logging.Logger, judge_model: str, author_model: str | None) -> None:
    """SPEC core rule 4: a judge of the author's family must score borderline checks UNMET."""
    if same_family(judge_model, author_model):
        log.warning(
            "judge model %s and author model %s are the same family: self-preference "
            "risk (SPEC core rule 4); borderline checks must be scored UNMET",
            judge_model,
            author_model,
        )


def env_value(name: str) -> str | None:
    """An environment variable's value, stripped; None when unset or blank."""
    value = os.environ.get(name, "").strip()
    return value or None
