"""The per-run Markdown report (SPEC §Report), rendered from stored tables only.

Every number in it comes from the roll-up tables; the roll-up block prints the priority
table Σw is derived from. The content is deterministic (no clock inside), so an unchanged
evaluation renders byte-identical text; only the file name carries the UTC write time.

Unmeasured is never shown as a number: an undetermined Final (UNSCORED weighted checks) is
headlined as such with its bounds, unmeasured AC and story scores print "—", the fix list
holds only checks judged UNMET, and UNSCORED checks get their own section ("not judged —
needs a judge or probes") with the reason each was not judged. Numbers use the one half-up
rounding rule (`format_half_up`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction

import pandas as pd

from evalflow.domain.cells import listed
from evalflow.domain.models import PRD, Baseline
from evalflow.domain.portability import absence_line
from evalflow.domain.rollup import I_WEIGHT, PRIORITY_WEIGHTS, T_WEIGHT
from evalflow.domain.rounding import format_half_up
from evalflow.judges.panel import PANEL_PREFIX


@dataclass(frozen=True)
class ReportInput:
    run_key: str
    framework: str
    benchmark: str
    prd: PRD
    baseline: Baseline
    baseline_sha256: str
    fingerprint: str
    base_sha: str
    head_sha: str
    diff: pd.DataFrame
    verdicts: pd.DataFrame
    votes: pd.DataFrame
    ac: pd.DataFrame
    story: pd.DataFrame
    final: pd.Series
    agreement: pd.Series
    judge_id: str
    judge_deterministic: bool
    self_preference: bool
    gates: pd.DataFrame
    side_metrics: str
    notes: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = field(default_factory=tuple)


def _fmt(value: float | None) -> str:
    return "—" if value is None or pd.isna(value) else format_half_up(float(value))


def _full(value: float | None) -> str:
    """A full-precision value of the roll-up block; "—" when unmeasured (NULL)."""
    return "—" if value is None or pd.isna(value) else f"{value:.6f}"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def report_filename(prd: PRD, run_key: str, now: datetime | None = None) -> str:
    """`<priority>-<prd-slug>-<UTC timestamp>-<run_key>.md` (SPEC §1 Report: named after the
    story/PRD, not the benchmark).

    A run's report covers every story of the PRD, so the slug is the PRD title's (without its
    "PRD:" prefix, at most 48 characters, cut at a word) and the priority is the highest one
    present; the run key keeps parallel runs from colliding in one second.
    """
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    top = min((s.priority for s in prd.stories), default="P0")
    slug = re.sub(r"[^a-z0-9]+", "-", _prd_title(prd.title).lower()).strip("-")
    if len(slug) > 48:
        slug = slug[:49].rsplit("-", 1)[0]
    return f"{top}-{slug or 'prd'}-{stamp}-{run_key}.md"


def _majority_verdicts(inp: ReportInput) -> pd.DataFrame:
    """Per check: majority, votes and the evidence/rationale of the first run agreeing with it."""
    merged = inp.verdicts.merge(
        inp.votes[
            ["check_id", "majority", "borderline", "met_votes", "unmet_votes", "unscored_votes"]
        ],
        on="check_id",
    )
    agreeing = merged[merged["status"] == merged["majority"]].sort_values("run")
    first = agreeing.drop_duplicates("check_id")
    missing = set(inp.votes["check_id"]) - set(first["check_id"])
    fallback = (
        merged[merged["check_id"].isin(missing)].sort_values("run").drop_duplicates("check_id")
    )
    return pd.concat([first, fallback]).set_index("check_id")


def _missing_where(by_check: pd.DataFrame, check_id: str, shown: int = 3) -> str:
    """What the judge found missing (its rationale) and where it searched (the patterns, as
    written, with their scope and hits), so a fix names the behaviour and the place rather
    than restating the proposition."""
    if check_id not in by_check.index:
        return ""
    row = by_check.loc[check_id]
    why = " ".join(str(row.get("rationale") or "").split())
    searches = listed(row.get("searches"))
    where = [
        f"`{str(s.get('pattern', '')).replace('`', chr(39))}` in {s.get('scope', '?')} "
        f"({int(s.get('hits', 0))} hits)"
        for s in searches[:shown]
    ]
    if len(searches) > shown:
        where.append(f"{len(searches) - shown} more")
    text = f". Missing: {why}" if why else ""
    return text + (f"; searched {', '.join(where)}" if where else "")


def _behaviour_lines(inp: ReportInput, by_check: pd.DataFrame) -> list[str]:
    """What each `run` probe cited as evidence showed (the start of its output), so a reader
    sees the behaviour beside the file:line the tables cite (SPEC §5)."""
    lines: list[str] = []
    for _, check in inp.baseline.checks():
        raw = by_check.loc[check.id, "evidence"] if check.id in by_check.index else None
        for item in listed(raw):
            if item.get("kind") == "run":
                shown = [t.strip() for t in str(item["output"]).splitlines() if t.strip()][:2]
                lines.append(
                    f"- **{check.id}**: `{item['command']}` ⇒ {item['expectation']}; observed: "
                    f"{_stable(' / '.join(shown)) or 'no output'}"
                )
    if not lines:
        return []
    return ["", "Behavioural evidence (`run` probes executed in the gate sandbox):", "", *lines]


def _gap_impacts(inp: ReportInput, status: str) -> list[tuple[Fraction, str, str, str]]:
    """Each weighted check whose majority is `status` (UNMET: a gap to fix; UNSCORED: not
    judged) and how much Final would rise if it alone became MET (exact)."""
    story_w = {s.id: PRIORITY_WEIGHTS[s.priority] for s in inp.prd.stories}
    sum_w = sum(w for w in story_w.values() if w > 0)
    n_acs = {s.id: len(s.acs) for s in inp.prd.stories}
    story_of = {ac.id: s.id for s in inp.prd.stories for ac in s.acs}
    counts = inp.ac.set_index("ac_id")
    majority = inp.votes.set_index("check_id")["majority"]
    out = []
    for ac, check in inp.baseline.checks():
        if majority.get(check.id) != status:
            continue
        story = story_of[ac.id]
        w = story_w[story]
        if w == 0 or sum_w == 0:
            continue
        total = counts.loc[ac.id, "i_total" if check.kind == "I" else "t_total"]
        share = (I_WEIGHT if check.kind == "I" else T_WEIGHT) / int(total)
        impact = Fraction(w, sum_w) * Fraction(1, n_acs[story]) * share
        out.append((impact, check.id, ac.id, check.proposition))
    return sorted(out, key=lambda t: (-t[0], t[1]))


def _ac_note(row) -> str:
    if pd.isna(row.ac_score):
        return " (not judged: every check UNSCORED)"
    if row.n_unscored:
        return f" ({int(row.n_unscored)} UNSCORED, counted UNMET)"
    return "" if row.scored else " (not scored)"


def _sampling_disclosure(judge_id: str) -> str:
    """SPEC reproducibility rule 5 (k = 3 at low/zero temperature) as an LLM judge meets it."""
    kept = (
        "the k = 3 runs are independent samples combined by majority vote (a split is "
        "borderline), and the warehouse's content-addressed response cache replays every "
        "cached answer (only validated, complete ones are kept) when the same inputs are "
        "scored again, so such a rerun gives the same verdicts without a new request"
    )
    if "anthropic:" in judge_id:
        return (
            f"The judge `{judge_id}` is sampled at the model's default: the Claude API "
            "(version 2026-10-21) accepts no sampling parameters, temperature included, so "
            f"SPEC reproducibility rule 5 (low/zero temperature) cannot be met literally; {kept}."
        )
    return (
        f"The judge `{judge_id}` samples its answers (its sampling settings, e.g. temperature, "
        f"are in the fingerprint; null = the model's default); {kept}."
    )


def _not_judged_section(inp: ReportInput, by_check: pd.DataFrame) -> list[str]:
    """UNSCORED weighted checks: nothing is known about them, so they are no fix to make."""
    pending = _gap_impacts(inp, "UNSCORED")
    lines = ["", "## Not judged — needs a judge or probes", ""]
    if not pending:
        return [*lines, "None: every scored check was judged."]
    lines.append(
        "These checks are UNSCORED (not yet judged, SPEC core rule 2), not UNMET: judge them "
        "with another judge (e.g. --judge anthropic or a labels file) or give them probes. "
        "Each would move the upper bound of Final by the amount shown."
    )
    for impact, check_id, ac_id, proposition in pending:
        reason = str(by_check.loc[check_id, "rationale"]) if check_id in by_check.index else ""
        lines.append(
            f"1. **{check_id}** ({ac_id}, up to +{format_half_up(impact, 4)}): {proposition}"
            + (f" — not judged because: {_cell(reason)}" if reason else "")
        )
    return lines


_DURATION = re.compile(r"\b\d+(?:\.\d+)?s\b")
_GATE_MARK = {
    "pass": "✓",
    "fail": "✗",
    "not-run": "not-run",
    "pre-existing": "pre-existing",
    "unscored": "unscored",
}


def _stable(text: object) -> str:
    # Durations ("in 0.09s") differ between executions; the report must not.
    return _DURATION.sub("…s", str(text))


def _prd_title(title: str) -> str:
    """The PRD's title without its own "PRD:" prefix (a "# PRD: Mini" heading made the
    report say "PRD: PRD: Mini")."""
    return re.sub(r"^\s*PRD\s*[:\-–—]\s*", "", title) or title


def _count(value: object) -> object:
    """An exit code or line count as the integer it is: a nullable column is read back as a
    float, and "(exit 127.0)" or "+8.0/-0.0" reads like a measurement."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _gate_detail(row) -> str:
    if row.status == "unscored":
        return str(row.reason)
    if row.status == "not-run":
        attempt = f"`{row.probe_command}` (exit {_count(row.probe_exit_code)})"
        return f"{row.reason}; attempt {attempt}"
    if row.status == "pre-existing":
        return f"base exit {_count(row.base_exit_code)}; out-of-scope note, not ✗"
    detail = f"exit {_count(row.exit_code)}{' (timed out)' if row.timed_out else ''}"
    notes = [n for n in str(row.notes).splitlines() if n.startswith("base not comparable")]
    return f"{detail}; {notes[0]}" if notes else detail


def _gates_section(gates: pd.DataFrame) -> list[str]:
    """G: the setup step and each gate from an actual run, not-run with its attempt and
    evidence, or unscored (no command); exact commands shown."""
    lines = ["", "## Engineering gates (G)", ""]
    setups = gates.loc[gates["gate"] == "setup", "command"].dropna().tolist()
    if setups:
        lines += [f"Dependency setup: `{setups[0]}`", ""]
    lines += ["| gate | command | result | category | evidence | detail |"]
    lines.append("|---|---|---|---|---|---|")
    for row in gates.itertuples(index=False):
        command = f"`{row.command}`" if isinstance(row.command, str) else "—"
        category = row.category if isinstance(row.category, str) else "—"
        evidence = _stable(row.evidence) if isinstance(row.evidence, str) else "—"
        lines.append(
            f"| {row.gate} | {_cell(command)} | {_GATE_MARK[row.status]} | {category} | "
            f"{_cell(evidence)} | {_cell(_stable(_gate_detail(row)))} |"
        )
    failed = gates.loc[gates["confirmed"].astype(bool), "gate"].tolist()
    lines.append("")
    lines.append(
        f"Confirmed ✗: {', '.join(failed)} ⇒ Adjusted Final applies."
        if failed
        else "No confirmed ✗; not-run gates are blind spots and never adjust Final."
    )
    if (gates["status"] == "not-run").any():
        lines.append(
            "not-run: the environment (infra) or the dependency setup failed, not the project; "
            "the evidence column shows the output line that decided it."
        )
    # The setup step has network by design; a gate that never ran (no command configured)
    # had no sandbox to lack isolation in.
    gated = gates[(gates["gate"] != "setup") & ~gates["status"].isin(["unscored"])]
    if len(gated) and not gated["network_isolated"].all():
        lines.append("Network isolation was unavailable for some gates (see the gates table).")
    if "isolation_missing" in gates:
        lacking = sorted(
            {feature for cell in gates["isolation_missing"] for feature in listed(cell)}
        )
        if lacking:
            lines.append(
                f"Sandbox features this machine lacked: {', '.join(lacking)} — the gates ran "
                "with weaker isolation (docs/security.md); `--require-isolation` refuses that."
            )
    fixes = gates[gates["confirmed"].astype(bool)]
    for row in fixes.itertuples(index=False):
        tail = [_stable(t) for t in str(row.output_tail).splitlines() if t.strip()][-3:]
        lines.append(f"- Fix `{row.gate}` (evalflow never fixes a gate): {' / '.join(tail)}")
    return lines


def render_report(inp: ReportInput) -> str:
    final = inp.final
    by_check = _majority_verdicts(inp)
    lines: list[str] = [
        f"# Evaluation report — {inp.framework} on {inp.benchmark}",
        "",
        f"Run `{inp.run_key}` · PRD: {_prd_title(inp.prd.title)} · "
        f"baseline sha256 `{inp.baseline_sha256[:16]}` · fingerprint `{inp.fingerprint[:16]}`",
        f"Commits: base `{inp.base_sha[:12]}` → head `{inp.head_sha[:12]}` · "
        f"judge `{inp.judge_id}` · k = {int(inp.votes['k'].iloc[0]) if len(inp.votes) else 0}",
        "",
        "## Result",
        "",
    ]
    complete = bool(final["complete"])
    band_text = final["band"] if isinstance(final["band"], str) else None
    if complete:
        headline = f"**Final {_fmt(final['final'])}** — {band_text}"
    else:
        headline = (
            f"**Final undetermined — incomplete**: {int(final['n_unscored'])} weighted "
            f"check(s) not judged (UNSCORED). Bounds {_fmt(final['final_lower'])} (UNSCORED as "
            f"UNMET) – {_fmt(final['final_upper'])} (UNSCORED as MET); band: "
            f"{band_text or 'none (the bounds fall in different bands)'}. Not ranked until "
            "they are judged."
        )
    lines.append(headline)
    if final["gates_failed"] and not complete:
        lines.append(
            "Adjusted Final: undetermined (a gate is a confirmed ✗: Final × 0.5 once the "
            "Final is determined)."
        )
    elif final["gates_failed"]:
        lines.append(
            f"**Adjusted Final {_fmt(final['adjusted_final'])}** "
            "(Final × 0.5: a gate is a confirmed ✗)"
        )
    else:
        lines.append("Adjusted Final: not applied (no confirmed ✗ gate).")
    flags = [listed(f) for f in by_check["flags"]]
    absence = absence_line(zip(by_check["majority"], flags, strict=True))
    if absence:
        lines.append(absence)
    lines += [
        "",
        "## Roll-up (computed by evalflow; full precision, rounded once at the end)",
        "",
        "```",
    ]
    lines.append("priority  w_s")
    for priority, weight in PRIORITY_WEIGHTS.items():
        lines.append(f"{priority:<9} {weight}")
    lines.append("")
    story_rows = inp.story.sort_values("story_id")
    for row in story_rows.itertuples(index=False):
        assumed = " ASSUMED" if row.assumed else ""
        if pd.isna(row.story_score):
            scored = "   (every check UNSCORED: not measured)"
        elif row.n_unscored:
            scored = f"   ({int(row.n_unscored)} check(s) UNSCORED, counted UNMET)"
        else:
            scored = "" if row.scored else "   (w = 0: not scored, roadmap readiness)"
        lines.append(
            f"{row.story_id:<4} {row.priority}{assumed:<8} w={row.weight}  acs={row.n_acs}  "
            f"story_score={_full(row.story_score_value)} → {_fmt(row.story_score)}{scored}"
        )
    weighted_rows = story_rows[story_rows["weight"] > 0]
    terms = " + ".join(str(int(w)) for w in weighted_rows["weight"])
    lines.append(f"Σw = {terms} = {int(final['sum_w'])}")
    if complete:
        lines.append(
            "Final = Σ(w_s × Story_score) / Σw = "
            f"{_full(final['final_value'])} → {_fmt(final['final'])}   band: {band_text}"
        )
    else:
        lines.append(
            f"Final = undetermined: between {_fmt(final['final_lower'])} (UNSCORED as UNMET) "
            f"and {_fmt(final['final_upper'])} (UNSCORED as MET)   band: {band_text or '—'}"
        )
    if final["gates_failed"] and complete:
        lines.append(
            f"Adjusted Final = Final × 0.5 = {final['adjusted_final_value']:.6f} → "
            f"{_fmt(final['adjusted_final'])}"
        )
    lines += ["```", "", "## Acceptance criteria", ""]
    lines += ["| AC | story | I | T | AC_score |", "|---|---|---|---|---|"]
    for row in inp.ac.sort_values("ac_id").itertuples(index=False):
        lines.append(
            f"| {row.ac_id} | {row.story_id} ({row.priority}) | {row.i_met}/{row.i_total} | "
            f"{row.t_met}/{row.t_total} | {_fmt(row.ac_score)}"
            f"{_ac_note(row)} |"
        )
    for kind, title in (
        ("I", "Implementation checklist (I-checks)"),
        ("T", "Test checks (T-checks), per required level"),
    ):
        lines += ["", f"## {title}", ""]
        header = "| check | AC | proposition | verdict | votes | evidence |"
        if kind == "T":
            header = "| check | AC | level | proposition | verdict | votes | evidence |"
        lines += [header, "|" + "---|" * (header.count("|") - 1)]
        for ac, check in inp.baseline.checks():
            if check.kind != kind:
                continue
            row = by_check.loc[check.id]
            votes = (
                f"{int(row['met_votes'])}/{int(row['unmet_votes'])}/{int(row['unscored_votes'])}"
            )
            verdict = row["majority"] + (" (borderline)" if row["borderline"] else "")
            evidence = (
                row["evidence_refs"] or f"searches: {int(row['n_searches'])} — {row['rationale']}"
            )
            if "evidence-outside-diff-surface" in listed(row["flags"]):
                evidence += " ⚠ outside the diff surface"
            level = ""
            if kind == "T":
                tags = [t for t, on in (("outcome", check.outcome),) if on]
                level = f"{check.level}{' ' + ','.join(tags) if tags else ''} | "
            lines.append(
                f"| {check.id} | {ac.id} | {level}{_cell(check.proposition)} | {verdict} | "
                f"{votes} | {_cell(evidence)} |"
            )
    lines += ["", "Votes are MET/UNMET/UNSCORED over the k runs."]
    lines += _behaviour_lines(inp, by_check)
    calls = int(inp.verdicts["api_calls"].sum())
    if calls:
        lines.append(
            f"Judge spend: ${inp.verdicts['cost_usd'].sum():.4f} over {calls} API "
            f"call{'' if calls == 1 else 's'} "
            f"({int(inp.verdicts['cache_read_tokens'].sum())} input tokens from the prompt cache)."
        )
    gaps = _gap_impacts(inp, "UNMET")
    lines += ["", "## Ranked gaps and the fixes that reach 1.00", ""]
    lines.append(
        "Only checks judged UNMET are listed; UNSCORED ones are in the next section."
        if gaps
        else "None: no scored check was judged UNMET."
    )
    for impact, check_id, ac_id, proposition in gaps:
        lines.append(
            f"1. **{check_id}** ({ac_id}, +{format_half_up(impact, 4)} to Final if MET) — make "
            f"true: {proposition}{_missing_where(by_check, check_id)}"
        )
    lines += _not_judged_section(inp, by_check)
    lines += ["", "## Agreement across the k runs", ""]
    kappa = inp.agreement.get("fleiss_kappa")
    if inp.judge_deterministic:
        lines.append(
            f"The judge `{inp.judge_id}` is deterministic: its k runs are identical by "
            "construction, so agreement carries no information about wording ambiguity."
        )
    undefined = kappa is None or pd.isna(kappa)
    kappa_text = "n/a (all verdicts in one category)" if undefined else f"{kappa:.3f}"
    lines.append(
        f"Fleiss' kappa: {kappa_text} · "
        f"borderline checks: {int(inp.agreement.get('n_borderline', 0))}"
    )
    borderline = inp.votes[inp.votes["borderline"]]["check_id"].tolist()
    if borderline:
        lines.append(f"Borderline (majority used): {', '.join(borderline)}")
    if inp.judge_id.startswith(PANEL_PREFIX) and not inp.verdicts.empty:
        per_run = inp.verdicts.groupby("run", sort=True)["judge_id"].unique()
        lines.append(
            "Judges of the panel: "
            + ", ".join(f"run {run} `{' / '.join(sorted(ids))}`" for run, ids in per_run.items())
        )
    if inp.side_metrics:
        lines += ["", "# Side metrics (reported beside Final, never folded into it)", ""]
        lines += inp.side_metrics.rstrip("\n").split("\n")
    lines += _gates_section(inp.gates)
    lines += ["", "## Assumptions", ""]
    assumptions = list(inp.assumptions)
    panel = inp.judge_id.startswith(PANEL_PREFIX)
    if not inp.judge_deterministic:
        # A panel discloses each member's sampling (judge ids never contain "+").
        members = inp.judge_id.removeprefix(PANEL_PREFIX).split("+") if panel else [inp.judge_id]
        assumptions += [_sampling_disclosure(member) for member in members]
    if inp.self_preference and panel:
        assumptions.append(
            f"The judge panel `{inp.judge_id}` includes a judge of the author model's family "
            "(SPEC core rule 4): a borderline MET stayed MET only where the votes of its "
            "judges of another family were MET with the majority; the others were scored UNMET."
        )
    elif inp.self_preference:
        assumptions.append(
            f"The judge `{inp.judge_id}` shares the author model's family (SPEC core rule 4): "
            "borderline checks were scored UNMET."
        )
    for story in inp.prd.stories:
        if story.assumed:
            assumptions.append(
                f"Story {story.id} has no priority label in the PRD; ASSUMED {story.priority} "
                f"(w = {PRIORITY_WEIGHTS[story.priority]}). The weight table itself is unchanged."
            )
    lines += [f"- {a}" for a in assumptions] or ["- none"]
    n_files = len(inp.diff)
    lines += ["", f"## Diff surface ({n_files} file{'' if n_files == 1 else 's'}, base..head)", ""]
    for row in inp.diff.itertuples(index=False):
        counts = (
            "binary" if row.binary else f"+{_count(row.added_lines)}/-{_count(row.deleted_lines)}"
        )
        lines.append(f"- `{row.path}` {row.status} ({counts})")
    if inp.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in inp.notes]
    return "\n".join(lines) + "\n"
