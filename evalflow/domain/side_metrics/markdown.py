"""The report's E, S, R and D sections (Markdown), rendered from computed side metrics only.

Deterministic text (no clock, stable ordering), so an unchanged evaluation renders
byte-identical sections. Ratios print as `0.69 (11/16)`, rounded half up from the exact
fraction; a metric without a denominator prints `n/a`, never 0; a metric that awaits
adjudication prints `unadjudicated — N candidates`, never a number. Every heuristic row
names its judge and is a candidate (a proposal for the adjudicator), never a verdict.
"""

from __future__ import annotations

from evalflow.domain.side_metrics.common import NO_SPEC, SCORED, candidates, fmt_ratio
from evalflow.domain.side_metrics.compute import SideMetrics
from evalflow.domain.side_metrics.distribution import TIER_LABELS, TIERS, pct_text
from evalflow.domain.side_metrics.elicitation import HEURISTIC_JUDGE


def _cell(value: object) -> str:
    if value is None:
        return "—"
    return str(value).replace("|", "\\|").replace("\n", " ").strip() or "—"


def _table(header: list[str], rows: list[list[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def _elicitation(m: SideMetrics, h: str) -> list[str]:
    e = m.elicitation
    out = [f"{h} Elicitation E (spec.md/tasks.md against the PRD; beside Final, never in it)", ""]
    if e.status != SCORED:
        return [*out, f"E: {NO_SPEC}.", ""]
    valid = sum(1 for x in e.ledger if x.valid)
    applicable = e.n_addressed + e.n_missed
    pooled = (
        fmt_ratio(e.pooled_recall, len(e.master_matched), e.n_master)
        if e.n_master
        else "n/a (no master list)"
    )
    heuristic = HEURISTIC_JUDGE in e.judges
    judged = "+".join(e.judges) or "none"
    open_categories = f"unadjudicated — {candidates(e.n_category_candidates)}"
    open_additions = f"unadjudicated — {candidates(e.n_addition_candidates)}"
    recall = (
        open_categories
        if e.n_category_candidates
        else fmt_ratio(e.e_recall, e.n_addressed, applicable)
    )
    precision, justified = (
        (open_additions, open_additions)
        if e.n_addition_candidates
        else (
            fmt_ratio(e.e_precision, valid, len(e.ledger)),
            fmt_ratio(e.e_justified, e.n_justified, len(e.ledger)),
        )
    )
    if e.n_master and e.n_addition_candidates:
        pooled = open_additions
    out += [
        f"E_recall {recall} · E_precision {precision} · E_justified {justified} · "
        f"pooled recall {pooled} — judged by {judged}"
        + (
            " (heuristic rows are candidates for adjudication, not verdicts; "
            "`evalflow side-metrics template` writes them as a labels file)"
            if heuristic
            else ""
        ),
        "",
    ]
    out += _table(
        ["category", "status", "evidence", "judge", "rationale"],
        [[c.category, c.status, c.ref, c.judge, c.rationale] for c in e.categories],
    )
    out += ["", f"Additions ledger ({len(e.ledger)}):", ""]
    out += _table(
        [
            "item",
            "file:line",
            "verdict",
            "category",
            "justified",
            "implementation",
            "judge",
            "rationale",
        ],
        [
            [
                x.item.item_id,
                x.ref,
                x.verdict,
                x.categories[0] if x.categories else None,
                "yes" if x.justified else "no",
                f"{x.implementation} ({x.implementation_ref})"
                if x.implementation_ref
                else x.implementation,
                x.judge,
                x.rationale,
            ]
            for x in e.ledger
        ],
    )
    if e.n_master:
        missing = e.n_master - len(e.master_matched)
        out += [
            "",
            f"Master items surfaced: {', '.join(e.master_matched) or 'none'}"
            f" ({missing} of {e.n_master} not surfaced).",
        ]
    return [*out, ""]


def _harness(m: SideMetrics, h: str) -> list[str]:
    hc = m.harness
    rows = [r for r in hc.rows if r.requirement.source == "addition"]
    frozen = (
        f"n/a ({hc.frozen_reason})"
        if hc.frozen_reason
        else fmt_ratio(hc.t_frozen, hc.met_t_checks, hc.t_checks)
    )
    sanctioned = (
        f"n/a ({hc.reason})"
        if hc.reason
        else fmt_ratio(hc.t_sanctioned, hc.sanctioned_met, hc.sanctioned_checks)
    )
    out = [
        f"{h} Harness over the sanctioned set (weighted PRD ACs ∪ valid E-additions)",
        "",
        f"T (frozen checklist) {frozen} · T over the sanctioned set {sanctioned} — "
        "the frozen T is the one in Final; P2 ACs weigh 0 and are left out.",
        "",
    ]
    if rows:
        out += _table(
            ["addition", "file:line", "implementation", "T-checks MET", "tested"],
            [
                [
                    r.requirement.req_id,
                    r.requirement.ref,
                    r.requirement.implementation,
                    f"{r.n_met_t_checks}/{r.n_t_checks}",
                    r.reason or "yes" if r.covered is not None else "no T-check (untested)",
                ]
                for r in rows
            ],
        )
        out.append("")
    return out


def _scope(m: SideMetrics, h: str) -> list[str]:
    s = m.scope
    out = [f"{h} Scope S", ""]
    if s.status != SCORED:
        return [*out, f"S: {NO_SPEC}.", ""]
    counts = ", ".join(
        f"{s.count(k)} {k.replace('_', ' ')}"
        for k in ("out_of_scope", "rogue_build", "plan_drift", "deferred")
    )
    shown = f"**{s.verdict}**" if s.verdict is not None else f"**{s.reason}**"
    out += [f"S = {shown} (confirmed: {counts}; {candidates(s.n_candidates)}).", ""]
    if s.findings:
        out += _table(
            ["kind", "status", "effect if confirmed", "file:line", "judge", "description"],
            [[f.kind, f.status, f.effect, f.ref, f.judge, f.description] for f in s.findings],
        )
        out.append("")
    return out


def _robustness(m: SideMetrics, h: str) -> list[str]:
    r = m.robustness
    counts = ", ".join(f"{r.counts[k]} {k}" for k in ("high", "med", "low", "none"))
    out = [
        f"{h} Robustness R (extra tests beyond the AC-mapped ones)",
        "",
        (f"R = **{r.total:.2f}**" if r.total is not None else f"R = n/a ({r.reason})")
        + f" over {len(r.rows)} extra test(s): {counts} "
        "(High 1.0 / Med 0.5 / Low 0.25 / none 0).",
        "",
    ]
    if r.rows:
        out += _table(
            ["test", "file:line", "weight", "reason"],
            [[x.test_id, f"{x.path}:{x.line}", f"{x.weight:.2f}", x.reason] for x in r.rows],
        )
        out.append("")
    return out


def _distribution(m: SideMetrics, h: str) -> list[str]:
    d = m.distribution
    out = [f"{h} Test distribution D", ""]
    out += _table(
        ["tier", "count", "%"],
        [[TIER_LABELS[t], d.counts[t], pct_text(d.counts[t], d.total)] for t in TIERS]
        + [["total feature tests", d.total, "100.0%" if d.total else "n/a"]],
    )
    out += ["", d.reading + ".", ""]
    if d.pre_existing:
        out += [f"Pre-existing tests (not counted): {', '.join(d.pre_existing)}.", ""]
    rows = [r for r in d.rows if r.tier != "pre_existing"]
    if rows:
        out += _table(
            ["test", "file:line", "tier", "AC", "reason"],
            [
                [r.test_id, f"{r.path}:{r.line}", TIER_LABELS[r.tier], r.ac_id, r.reason]
                for r in rows
            ],
        )
        out.append("")
    return out


def side_metrics_markdown(metrics: SideMetrics, *, heading_level: int = 2) -> str:
    """The E (with the sanctioned-set harness), S, R and D sections of the run report."""
    h = "#" * heading_level
    lines = (
        _elicitation(metrics, h)
        + _harness(metrics, h)
        + _scope(metrics, h)
        + _robustness(metrics, h)
        + _distribution(metrics, h)
    )
    return "\n".join(lines).rstrip("\n") + "\n"
