"""The frozen baseline: validation against its PRD, the Markdown rendering and its hash.

A baseline is the contract every implementation of one PRD is scored against (SPEC
reproducibility rule 1). Its sha256 travels with every result; results with different
hashes are never compared.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from evalflow.domain.acceptance import command_text, expectation_text
from evalflow.domain.models import PRD, Baseline
from evalflow.errors import InputError


def baseline_sha256(baseline: Baseline) -> str:
    """Hash of the canonical JSON of the baseline: formatting and comments never change it,
    and neither does a later evalflow adding an optional field (defaults are left out)."""
    canonical = json.dumps(
        baseline.model_dump(mode="json", exclude_defaults=True), sort_keys=True, ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def error_location(data: Any, loc: tuple[int | str, ...]) -> str:
    """A validation error's location with list positions named by the item's `id`.

    `acs.0.checks.1.probes.0.pattern` becomes `acs[S1-AC1].checks[S1-AC1-I2].probes[1].pattern`
    (probes, which have no id, are numbered from 1 as a reader counts them), so a refused
    probe pattern names its check without the author counting YAML items.
    """
    parts: list[str] = []
    node = data
    for key in loc:
        item = None
        if isinstance(key, int) and isinstance(node, list) and 0 <= key < len(node):
            item = node[key]
            label = item.get("id") if isinstance(item, dict) else None
            tag = f"[{label}]" if isinstance(label, str) and label else f"[{key + 1}]"
            parts[-1:] = [f"{parts[-1]}{tag}" if parts else tag]
        elif isinstance(node, dict):
            item = node.get(key)
            parts.append(str(key))
        else:
            parts.append(str(key))
        node = item
    return ".".join(parts) or "(top level)"


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def baseline_problems(baseline: Baseline, prd: PRD) -> list[str]:
    """Every reason this baseline cannot be used with this PRD (empty when valid)."""
    problems: list[str] = []
    prd_acs = {ac.id: (story, ac) for story in prd.stories for ac in story.acs}
    seen_ac: set[str] = set()
    seen_check: set[str] = set()
    for ac in baseline.acs:
        if ac.id in seen_ac:
            problems.append(f"AC {ac.id} appears twice")
        seen_ac.add(ac.id)
        if ac.id not in prd_acs:
            problems.append(f"AC {ac.id} is not in the PRD")
        elif _norm(prd_acs[ac.id][1].text) != _norm(ac.text):
            problems.append(f"AC {ac.id} text differs from the PRD (re-freeze after a PRD edit)")
        kinds = {check.kind for check in ac.checks}
        for kind, name in (("I", "implementation"), ("T", "test")):
            if kind not in kinds:
                problems.append(f"AC {ac.id} has no {name} ({kind}) check")
        for check in ac.checks:
            if check.id in seen_check:
                problems.append(f"check id {check.id} appears twice")
            seen_check.add(check.id)
    for ac_id, (story, _) in prd_acs.items():
        if story.priority != "P2" and ac_id not in seen_ac:
            problems.append(f"PRD AC {ac_id} ({story.priority}) has no checks in the baseline")
    return problems


def validate_baseline(baseline: Baseline, prd: PRD, *, where: str) -> None:
    """Raise one `InputError` summarising every problem, or return when the baseline is valid."""
    problems = baseline_problems(baseline, prd)
    if problems:
        more = f" (+{len(problems) - 1} more: {'; '.join(problems[1:4])})" if problems[1:] else ""
        raise InputError(
            f"invalid baseline: {problems[0]}{more}",
            where=where,
            fix="fix the baseline YAML, then run `evalflow baseline check`",
        )


def _cell(text: str) -> str:
    """Escape a value for a Markdown table cell."""
    return text.replace("|", "\\|")


def render_baseline_markdown(baseline: Baseline, prd: PRD, sha256: str) -> str:
    """The human-readable `_ac-baseline.md`. Never timestamped: one shared file per PRD."""
    story_of = prd.story_of()
    out = [
        f"# Frozen AC baseline — {baseline.benchmark}",
        "",
        f"PRD: `{baseline.prd}` · baseline sha256: `{sha256}`",
        "",
        "Every implementation of this PRD is scored against exactly these checks. "
        "Change the YAML source, then re-freeze; results scored against different hashes "
        "are never compared.",
        "",
    ]
    for ac in baseline.acs:
        story = story_of.get(ac.id)
        label = (
            f"{story.id} {story.priority}{' (ASSUMED)' if story.assumed else ''}" if story else ""
        )
        out += [f"## {ac.id} — {label}", "", f"> {ac.text}", ""]
        if ac.interpretation:
            out += [f"Interpretation (frozen): {ac.interpretation}", ""]
        out += ["| check | kind | level | proposition | probes |", "|---|---|---|---|---|"]
        for check in ac.checks:
            tags = [t for t, on in (("outcome", check.outcome), ("wiring", check.wiring)) if on]
            if check.external_call:
                tags.append("external call")
            level = check.level or "—"
            if tags:
                level = f"{level} ({', '.join(tags)})"
            probes = "<br>".join(
                [
                    f"{p.kind}: `{_cell(p.pattern)}` in {', '.join(p.path_globs)}"
                    for p in check.probes
                ]
                + [
                    f"run: `{_cell(command_text(r))}` ⇒ {_cell(expectation_text(r.expect))}"
                    for r in check.run
                ]
            )
            out.append(
                f"| {check.id} | {check.kind} | {level} | {check.proposition} | {probes or '—'} |"
            )
        out.append("")
    if baseline.anchors:
        out += ["## Calibration anchors", "", "| check | verdict | example | reason |"]
        out.append("|---|---|---|---|")
        out += [
            f"| {a.check_id} | {a.verdict} | {a.example} | {a.reason} |" for a in baseline.anchors
        ]
        out.append("")
    return "\n".join(out)
