"""What an LLM judge is told: the system prompt, the `submit_verdict` tool, the messages.

The request is laid out for prompt caching, stable part first:
1. tools (repository tools + `submit_verdict`) and the system prompt: identical for every
   check of every run of a benchmark;
2. the run context block (diff surface file list, calibration anchors, test-level policy):
   identical for every check and for all k runs of one framework run;
3. the check block (check, its AC, the frozen interpretation, the run index): per call.
The judge puts `cache_control` breakpoints after 1 and 2, so runs 2..k and the other checks
of a run read that prefix from the prompt cache. The run index sits in block 3 on purpose:
it makes the k runs distinct requests without breaking the shared prefix.

`PROMPT_VERSION` enters the judge fingerprint and every response-cache key: change it
whenever the wording, the tools or the verdict schema change.
"""

from __future__ import annotations

import json
from typing import Any

from evalflow.domain.models import Anchor, BaselineAC, Check, TestLevelPolicy

PROMPT_VERSION = "claude-judge-2"
SUBMIT_TOOL_NAME = "submit_verdict"

SYSTEM_PROMPT = """\
You are an evaluator in evalflow, a benchmark that scores how well an implementation in a git \
repository satisfies the frozen acceptance checks of a PRD. You judge ONE check at a time and \
answer MET or UNMET with evidence. You can only read the repository (at the head commit) \
through the tools list_files, grep and read_file. You finish by calling submit_verdict exactly \
once; never answer in prose.

Core rules (apply to every verdict):
1. No evidence, no credit. A MET verdict cites file:line ranges that really contain the \
behaviour (path, start_line, end_line and a quote copied verbatim from those lines). Without \
such evidence the check is UNMET. Restating the PRD or the check is not evidence.
2. Search before zero. Before answering UNMET, search: start with the diff surface (the files \
this implementation changed, listed in the run context), then widen to the whole repository. \
An UNMET without searches is not accepted. Report the searches you ran.
3. Read the path end to end, including data shape. A matching symbol name is not enough. For \
an emitted, returned or persisted artifact, read the code that constructs the payload object \
and confirm the named field is in it: a call to emit(...) does not prove its payload has the \
field. For a test check, the test must assert the behaviour: a test that runs the code without \
asserting it does not satisfy a verification check.
4. Evaluator is not author. If you are told the code was written by a model of your own family, \
be strict: when the evidence is borderline, answer UNMET.
5. The evaluated repository is read-only. You only read; you never propose edits as evidence.

Kinds of checks:
- I-check (implementation): MET only if real production code performs the behaviour (not a \
test, not a comment, not dead code). Wiring checks (flag wiring=true) are scored on the entry \
point: the route/controller really receives the inbound event, verifies it (signature or \
authenticity) and dispatches it by type to the handler.
- T-check (tests), at the level fixed by policy: level unit = a unit test (or any higher-level \
test) asserts it; level e2e = an end-to-end / integration test asserts it; level both = an e2e \
test and a second, distinct test assert it. The main behaviour must be asserted; executed-only \
is UNMET.
- Minimum level is a floor: a higher-level test that really asserts the concrete proposition \
satisfies a unit-required check.
- Outcome checks (flag outcome=true; persisted or async side effects): the test must verify \
the actual resulting state (a real database row or the real returned payload). Mock-only \
exclusion: asserting that a mocked repository or state-machine method was called proves a \
call, not an outcome, so it is UNMET for an outcome check. This exclusion does NOT apply when \
the check itself is "calls external API X" (flag external_call=true): there a spy or mock is \
the right proof.
- Conjunction rule: when a check names one field of a payload, verify that field on the \
constructed data object (and, for a T-check, that an assertion covers that field).

Calibration anchors, when given, are settled examples for this benchmark: follow them. Judge \
against the frozen check and its interpretation, never against other implementations.

Procedure: 1) grep / list_files in the diff surface for the names the check implies; \
2) read_file the candidate code end to end (callers and payload construction, or the whole \
test case with its assertions); 3) widen the search to the repository if needed; 4) call \
submit_verdict. Cite the smallest line ranges that show the behaviour; quote the code exactly \
as read_file showed it (without the line-number prefix). Keep the rationale to a few \
sentences: what you found, where, and why it does or does not satisfy the check.
"""

# Evidence, searches and rationale come before the status: a model that writes its verdict
# last has to gather and quote the evidence first instead of justifying a status it chose.
SUBMIT_TOOL: dict[str, Any] = {
    "name": SUBMIT_TOOL_NAME,
    "description": (
        "Submit the final verdict for the check. Call exactly once, as your last action. "
        "MET needs evidence; UNMET needs the searches you ran."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "evidence": {
                "type": "array",
                "description": "file:line ranges that show the behaviour (empty for UNMET)",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "repository-relative path"},
                        "start_line": {"type": "integer"},
                        "end_line": {"type": "integer"},
                        "quote": {
                            "type": "string",
                            "description": "verbatim code from the range: at least one whole "
                            "meaningful line of code (cite a short range)",
                        },
                    },
                    "required": ["path", "start_line", "end_line", "quote"],
                    "additionalProperties": False,
                },
            },
            "searches": {
                "type": "array",
                "description": "the searches you ran (grep patterns, globs, files read)",
                "items": {
                    "type": "object",
                    "properties": {
                        "pattern": {"type": "string"},
                        "scope": {"type": "string"},
                        "hits": {"type": "integer"},
                    },
                    "required": ["pattern", "scope", "hits"],
                    "additionalProperties": False,
                },
            },
            "rationale": {"type": "string"},
            "status": {"type": "string", "enum": ["MET", "UNMET"]},
        },
        "required": ["evidence", "searches", "rationale", "status"],
        "additionalProperties": False,
    },
}

RETRY_NO_SUBMIT = (
    "Your answer did not call submit_verdict. Finish now: call submit_verdict exactly once "
    "with evidence, searches, rationale and status."
)


def _flags(check: Check) -> str:
    flags = [f"kind={check.kind}"]
    if check.kind == "T":
        flags.append(f"level={check.level}")
        flags.append(f"outcome={str(check.outcome).lower()}")
        flags.append(f"external_call={str(check.external_call).lower()}")
    else:
        flags.append(f"wiring={str(check.wiring).lower()}")
        flags.append(f"external_call={str(check.external_call).lower()}")
    return ", ".join(flags)


def run_context(
    diff_paths: tuple[str, ...],
    anchors: tuple[Anchor, ...],
    test_levels: TestLevelPolicy,
    author_same_family: bool,
) -> str:
    """The block shared by every check and every run of one framework run."""
    lines = ["# Run context", "", "## Diff surface (first search scope)"]
    lines += [f"- {p}" for p in diff_paths] or ["- (empty: search the whole repository)"]
    policy = test_levels.model_dump(exclude_none=True)
    if policy:
        lines += ["", "## Test-level policy of this benchmark", json.dumps(policy, indent=1)]
    if anchors:
        lines += ["", "## Calibration anchors (settled examples)"]
        for anchor in anchors:
            lines += [
                f"- check {anchor.check_id}: {anchor.verdict}",
                f"  example: {anchor.example}",
                f"  reason: {anchor.reason}",
            ]
    if author_same_family:
        lines += [
            "",
            "## Self-preference warning",
            "The code was written by a model of your own family: score borderline checks UNMET.",
        ]
    return "\n".join(lines) + "\n"


def check_block(ac: BaselineAC, check: Check, run: int, k: int) -> str:
    """The per-call block: the check, its AC and interpretation, and the run index."""
    lines = [
        f"# Scoring run {run} of {k} (judge independently of any other run)",
        "",
        f"## Check {check.id} ({_flags(check)})",
        check.proposition,
        "",
        f"## Acceptance criterion {ac.id}",
        ac.text,
    ]
    if ac.interpretation:
        lines += ["", "## Frozen interpretation", ac.interpretation]
    lines += ["", "Investigate with the tools, then call submit_verdict."]
    return "\n".join(lines) + "\n"
