"""Render a `SkillEvaluation` as SPEC §2's JSON shape and as Markdown.

JSON per skill (keys beyond SPEC's are additions, none renamed):

    {"skill": {..., "line_count"}, "depth", "compat", "certify", "confidence", "confidence_basis",
     "threshold", "passed", "certification" (certify only),
     "composite": {"score", "badge", "elo", "grade", "display_grade", "penalty", "raw",
                   "measured_weight", "badge_basis", "simulated",
                   "dimensions": [{"name", "weight", "score", "ci_lower", "ci_upper", "grade",
                                   "weighted_score"}]},
     "dimensions": {name: {"score", "grade", "ci_low", "ci_high", "display_grade",
                           "weight", "layers": {"static", "judge", "monte_carlo"},
                           "simulated"}},
     "layers": [{"name": "static", "duration_ms", "measured", "anti_patterns", ...},
                {"name": "judge", "duration_ms", "measured", "judges", "kappa", ...,
                 "triggering": {"f1", "precision", "recall", "positives", "negatives",
                                "reason"},
                 "prompts": [{"prompt", "should_trigger", "source", "would_trigger":
                              {judge: bool}}]},
                {"name": "monte_carlo", "duration_ms", "measured", "simulated", ...}],
     "elo": {...} | null, "findings": [...]}

A batch (a directory of skills) is `{"skills": [per-skill objects], "plugins": [plugin-level
scores, `plugin_summaries`], "summary": {...}}`. Markdown and HTML are rendered from the same
blocks (`doc.py`), so they say the same thing.

Every score, grade, badge, Elo and confidence comes from measured layers only. A simulated
Monte Carlo layer (the offline router) is shown apart, in `simulated` blocks labelled
`"label": "simulated"` (JSON) or "simulated" (Markdown) — the blend it would give — and its
values never appear under `layers` of a dimension; `simulated` is null when there is none.

Unmeasured values are null, never 0. Scores are rounded for display (dimensions 4 places,
composite 2, Elo 1); `duration_ms` is the only field that varies between identical runs.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalflow.domain.plugineval.antipatterns import FLAGS
from evalflow.domain.plugineval.composite import (
    BADGE_DISPLAY,
    BADGE_STARS,
    BADGES,
    COMPOSITE_DECIMALS,
    DIMENSION_WEIGHTS,
    NO_BADGE,
    SCORE_DECIMALS,
    STATIC_SCORE,
    display_grade,
    letter_grade,
)
from evalflow.domain.plugineval.doc import Block, Heading, Items, Para, Table, to_html, to_markdown
from evalflow.domain.plugineval.evaluate import SkillEvaluation
from evalflow.domain.plugineval.model import DIMENSIONS
from evalflow.domain.plugineval.static import STATIC_TO_DIMENSION

if TYPE_CHECKING:
    from evalflow.domain.plugineval.judge_layer import JudgeLayerResult


def _judge_triggering(j: JudgeLayerResult) -> dict[str, Any]:
    """Triggering against evalflow's labels (means over judges); null F1 with a reason."""
    t = j.triggering
    return {
        "f1": _r(t.f1) if t else None,
        "precision": _r(t.precision) if t else None,
        "recall": _r(t.recall) if t else None,
        "positives": sum(1 for p in j.prompts if p.should_trigger),
        "negatives": sum(1 for p in j.prompts if not p.should_trigger),
        "reason": j.triggering_reason,
    }


def _r(x: float | None, places: int = SCORE_DECIMALS) -> float | None:
    return None if x is None else round(float(x), places)


# Bidirectional-text controls: they reorder what a reader sees (Trojan Source).
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def terminal_safe(text: str, *, keep_newlines: bool = True) -> str:
    """Text from a hostile skill made harmless for a terminal: control characters (ESC, BEL,
    CR, C1 …) and bidi controls are shown as visible escapes such as `\\x1b`, never sent raw.
    """
    out = []
    for ch in text:
        if (ch == "\n" and keep_newlines) or not (
            unicodedata.category(ch) == "Cc" or ch in BIDI_CONTROLS
        ):
            out.append(ch)
        elif ord(ch) <= 0xFF:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\u{ord(ch):04x}")
    return "".join(out)


def _layers(ev: SkillEvaluation) -> list[dict[str, Any]]:
    ms = ev.durations_ms
    out: list[dict[str, Any]] = [
        {
            "name": "static",
            "duration_ms": round(ms.get("static", 0.0)),
            "measured": True,
            "anti_patterns": [a.flag for a in ev.static.anti_patterns],
            "anti_pattern_details": [a.as_dict() for a in ev.static.anti_patterns],
            "penalty": _r(ev.static.penalty),
            "sub_scores": {k: _r(v) for k, v in ev.static.sub_scores.items()},
        }
    ]
    if ev.judge is not None:
        j = ev.judge
        out.append(
            {
                "name": "judge",
                "duration_ms": round(ms.get("judge", 0.0)),
                "measured": j.measured,
                "reason": j.reason,
                "judges": j.judges,
                "judges_requested": j.requested,
                "kappa": _r(j.kappa),
                "kappa_pairs": j.kappa_pairs,
                "scores": {k: _r(v) for k, v in j.dimensions.items()},
                "per_judge": [
                    {k: (_r(v) if isinstance(v, float) else v) for k, v in pj.items()}
                    for pj in j.per_judge
                ],
                "triggering": _judge_triggering(j),
                # evalflow's labelled prompt set, so a user can audit what F1 was graded on.
                "prompts": [
                    {
                        "prompt": p.text,
                        "should_trigger": p.should_trigger,
                        "source": p.source,
                        "would_trigger": {
                            str(pj["judge"]): a[i]
                            for pj, a in zip(j.per_judge, j.answers, strict=True)
                        },
                    }
                    for i, p in enumerate(j.prompts)
                ],
            }
        )
    if ev.monte_carlo is not None:
        mc = ev.monte_carlo
        out.append(
            {
                "name": "monte_carlo",
                "duration_ms": round(ms.get("monte_carlo", 0.0)),
                # A simulation ran but measured nothing: it never says "measured".
                "measured": mc.measured and not mc.simulated,
                "reason": mc.reason,
                "simulated": mc.simulated,
                "backend": mc.backend,
                "runs": mc.runs,
                "errored_runs": mc.errored,
                "mc_score": _r(mc.mc_score),
                "mc_score_missing": list(mc.mc_score_missing),
                "stats": {k: (_r(v) if isinstance(v, float) else v) for k, v in mc.stats.items()},
                "scores": {k: _r(v) for k, v in mc.dimensions.items()},
            }
        )
    return out


def _elo(ev: SkillEvaluation) -> dict[str, Any] | None:
    e = ev.elo
    if e is None:
        return None
    # An EloResult exists, so its module (numpy) is loaded already; the quick path never is.
    from evalflow.domain.plugineval.elo import JUDGED

    return {
        "computed": e.computed,
        "reason": e.reason,
        "rating": _r(e.rating, 1),
        "ci_low": _r(e.ci_low, 1),
        "ci_high": _r(e.ci_high, 1),
        "corpus_percentile": _r(e.corpus_percentile, 1),
        "opponents": e.opponents,
        "matches": e.matches,
        # Comparing two stored scores has no order to disagree on: the position-bias check
        # did not run, so it is null, not a reassuring 0.
        "order_disagreements": None if e.kind == STATIC_SCORE else e.disagreements,
        "permutations": e.permutations,
        "bootstrap_samples": e.bootstrap_samples,
        "kind": e.kind,
        "label": "Judged Elo" if e.kind == JUDGED else "Static-score Elo",
        "basis": e.basis,
        "note": _STATIC_ELO_NOTE if e.kind == STATIC_SCORE else None,
        "judge": e.judge,
        "left_out": [{"path": path, "reason": why} for path, why in e.left_out],
    }


_STATIC_ELO_NOTE = (
    "static-score Elo: no pairwise judge is configured, so matches compare the two skills' "
    "dimension scores; no position-bias check applies (null order_disagreements)"
)


def passed(score: float | None, threshold: float | None) -> bool | None:
    """None without a threshold; an unmeasured composite never passes one."""
    if threshold is None:
        return None
    return score is not None and score >= threshold


def threshold_line(report: Mapping[str, Any]) -> str:
    """The one stderr line for a skill below the threshold."""
    score = report["composite"]["score"]
    shown = "unmeasured" if score is None else f"{score:.2f}"
    return f"composite {shown} < threshold {report['threshold']:g}"


def _simulated_composite(ev: SkillEvaluation) -> dict[str, Any] | None:
    sim = ev.simulated
    if sim is None:
        return None
    return {
        "label": "simulated",
        "backend": sim.backend,
        "score": _r(sim.composite.score, COMPOSITE_DECIMALS),
        "display_grade": display_grade(sim.composite.score),
        "measured_weight": _r(sim.composite.measured_weight),
        "note": "what the composite would be if the simulated Monte Carlo layer were a "
        "measurement; not part of the composite, badge, Elo or confidence",
    }


def _simulated_dimension(ev: SkillEvaluation, dim: str) -> dict[str, Any] | None:
    sim = ev.simulated
    if sim is None or ev.monte_carlo is None or dim not in ev.monte_carlo.dimensions:
        return None
    return {
        "label": "simulated",
        "monte_carlo": _r(ev.monte_carlo.dimensions[dim]),
        "score": _r(sim.dimensions[dim].score),
    }


def _elo_missing(ev: SkillEvaluation) -> str | None:
    """Why certify has no Elo (None when it has one): a badge needs composite AND Elo."""
    if ev.elo is None:
        return f"no Elo: not computed at depth {ev.depth}"
    if not ev.elo.computed:
        return f"no Elo: {ev.elo.reason}"
    return None


def _certification(ev: SkillEvaluation) -> dict[str, Any]:
    """What `certify` could and could not certify: every measured layer plus an Elo (seed 004).

    Without an Elo nothing is certified and the badge is withheld, saying why.
    """
    layers = ev.measured_layers
    lacking = []
    if "judge" not in layers:
        lacking.append("no judge (--judge anthropic)")
    if "monte_carlo" not in layers:
        mc = ev.monte_carlo
        lacking.append(
            "no real Monte Carlo backend (the offline router is a simulation; "
            "--mc-backend anthropic)"
            if mc is None or mc.simulated
            else f"the Monte Carlo layer is unmeasured ({mc.reason})"
        )
    no_elo = _elo_missing(ev)
    if no_elo is not None:
        lacking.append(no_elo)
    if not lacking:
        statement = "certified on measured static, judge and Monte Carlo layers and an Elo"
    elif layers == ("static", "judge", "monte_carlo"):
        statement = f"not certified: {'; '.join(lacking)}"
    else:
        statement = (
            f"cannot certify beyond the measured layers ({', '.join(layers)}): {'; '.join(lacking)}"
        )
    if no_elo is not None:
        statement += "; badge withheld (a badge needs composite AND Elo)"
    elif lacking:
        statement += "; the badge is what those layers support"
    return {
        "complete": not lacking,
        "measured_layers": list(layers),
        "badge_withheld": no_elo,
        "statement": statement,
    }


def _composite_dimensions(dims: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """`composite.dimensions` as the public tool's JSON lists it (name, weight, score, CI,
    grade on its +/− scale, weighted_score), so a script reading published output reads
    evalflow's; an unmeasured dimension is null where the public tool writes 0."""
    return [
        {
            "name": name,
            "weight": d["weight"],
            "score": d["score"],
            "ci_lower": d["ci_low"],
            "ci_upper": d["ci_high"],
            "grade": d["display_grade"],
            "weighted_score": None if d["score"] is None else _r(d["weight"] * d["score"]),
        }
        for name, d in dims.items()
    ]


def report_dict(
    ev: SkillEvaluation, *, certify: bool = False, threshold: float | None = None
) -> dict[str, Any]:
    """The per-skill JSON object."""
    p = ev.parsed
    c = ev.composite
    elo_computed = ev.elo is not None and ev.elo.computed
    elo_value = _r(ev.elo.rating, 1) if ev.elo is not None and ev.elo.computed else None
    if elo_computed:
        basis = "composite and judged Elo"
        if ev.elo is not None and ev.elo.kind == STATIC_SCORE:
            basis = "composite and static-score Elo"
    elif ev.elo is not None:
        basis = f"composite only (Elo not computed: {ev.elo.reason})"
    else:
        basis = f"composite only (Elo not computed at depth {ev.depth})"
    dims: dict[str, Any] = {}
    for d in DIMENSIONS:
        s = ev.dimensions[d]
        dims[d] = {
            "score": _r(s.score),
            "grade": letter_grade(s.score),
            "ci_low": _r(s.ci_low),
            "ci_high": _r(s.ci_high),
            "display_grade": None if s.score is None else display_grade(s.score * 100.0),
            "weight": DIMENSION_WEIGHTS[d],
            "layers": {k: _r(v) for k, v in s.layers.items()},
            "simulated": _simulated_dimension(ev, d),
        }
    score = _r(c.score, COMPOSITE_DECIMALS)
    shown_badge = ev.badge
    no_elo = _elo_missing(ev) if certify else None
    if no_elo is not None:
        shown_badge = NO_BADGE
        basis = f"withheld: certify needs composite AND Elo ({no_elo})"
    out: dict[str, Any] = {
        "skill": {
            "name": p.name,
            "dir_name": p.dir_name,
            "path": p.location,
            "plugin": p.plugin,
            "sha256": ev.sha256,
            "line_count": p.line_count,
        },
        "depth": ev.depth,
        "compat": ev.compat,
        "certify": certify,
        "confidence": ev.confidence,
        "confidence_basis": list(ev.measured_layers),
        "threshold": threshold,
        "passed": passed(score, threshold),
        "composite": {
            "score": score,
            "badge": shown_badge,
            "elo": elo_value,
            "grade": letter_grade(None if c.score is None else c.score / 100.0),
            "display_grade": display_grade(c.score),
            "penalty": _r(c.penalty),
            "raw": _r(c.raw),
            "measured_weight": _r(c.measured_weight),
            "badge_basis": basis,
            "simulated": _simulated_composite(ev),
            "dimensions": _composite_dimensions(dims),
        },
        "dimensions": dims,
        "layers": _layers(ev),
        "elo": _elo(ev),
        "findings": [f.as_dict() for f in ev.findings],
    }
    if certify:
        out["certification"] = _certification(ev)
    return out


def batch_dict(reports: Sequence[Mapping[str, Any]], threshold: float | None) -> dict[str, Any]:
    """Many skills scored in one process: the per-skill objects plus a summary."""
    scores = [r["composite"]["score"] for r in reports if r["composite"]["score"] is not None]
    below = [
        r["skill"]["path"]
        for r in reports
        if threshold is not None
        and (r["composite"]["score"] is None or r["composite"]["score"] < threshold)
    ]
    sims = [r["composite"]["simulated"] for r in reports if r["composite"]["simulated"]]
    sim_scores = [x["score"] for x in sims if x["score"] is not None]
    simulated = None
    if sims:
        simulated = {
            "label": "simulated",
            "count": len(sims),
            "mean_composite": _r(sum(sim_scores) / len(sim_scores), COMPOSITE_DECIMALS)
            if sim_scores
            else None,
        }
    return {
        "skills": list(reports),
        "plugins": plugin_summaries(reports),
        "summary": {
            "count": len(reports),
            "mean_composite": _r(sum(scores) / len(scores), COMPOSITE_DECIMALS) if scores else None,
            "threshold": threshold,
            "below_threshold": below,
            "simulated": simulated,
        },
    }


def _fmt(x: float | None, places: int = 2) -> str:
    return "—" if x is None else f"{x:.{places}f}"


def _layer_line(layer: Mapping[str, Any]) -> str:
    name = layer["name"]
    simulated = name == "monte_carlo" and layer.get("simulated")
    if simulated:
        name = "monte_carlo (simulated)"
    if not layer["measured"] and not (simulated and layer["reason"] is None):
        return f"**{name}**: unmeasured — {layer['reason']}"
    head = f"**{name}** ({layer['duration_ms']} ms)"
    if layer["name"] == "static":
        flags = ", ".join(layer["anti_patterns"]) or "none"
        return f"{head}: anti-patterns: {flags} (penalty ×{layer['penalty']:.2f})"
    if layer["name"] == "judge":
        trig = layer["triggering"]
        labels = f"{trig['positives']} should / {trig['negatives']} should-not prompts"
        f1 = (
            f"triggering F1 {_fmt(trig['f1'])} (precision {_fmt(trig['precision'])}, "
            f"recall {_fmt(trig['recall'])}) on evalflow's labels, {labels}"
            if trig["reason"] is None
            else f"{trig['reason']} ({labels})"
        )
        return f"{head}: {layer['judges']} judge(s), kappa {_fmt(layer['kappa'])}; {f1}"
    st = layer["stats"]
    parts = [f"backend {layer['backend']}", f"{layer['runs']} runs"]
    if st.get("activation_rate") is not None:
        parts.append(
            f"activation {_fmt(st['activation_rate'])} "
            f"[{_fmt(st['activation_ci_low'])}, {_fmt(st['activation_ci_high'])}]"
        )
    if st.get("failure_rate") is not None:
        parts.append(
            f"failure {_fmt(st['failure_rate'])} "
            f"[{_fmt(st['failure_ci_low'])}, {_fmt(st['failure_ci_high'])}]"
        )
    if st.get("token_median") is not None:
        parts.append(
            f"tokens median {st['token_median']:.0f}, IQR {st['token_iqr']:.0f}, "
            f"{st['token_outliers']} outlier(s)"
        )
    parts.append(f"mc_score {_fmt(layer['mc_score'])}")
    return f"{head}: " + "; ".join(parts)


def _safe(value: Any) -> str:
    """A name or path from the skill on one line, control characters made visible."""
    return terminal_safe(str(value), keep_newlines=False)


def skill_blocks(report: Mapping[str, Any], *, verbose: bool = False) -> list[Block]:
    """One skill's report; the simulated Monte Carlo layer is marked "(simulated)"."""
    comp = report["composite"]
    skill = report["skill"]
    stars = BADGE_STARS[comp["badge"]]
    blocks: list[Block] = [
        Heading(
            2,
            f"{_safe(skill['name'])} — {_fmt(comp['score'])}/100 "
            f"({comp['display_grade'] or '—'}) · {stars} {BADGE_DISPLAY[comp['badge']]}",
        ),
        Para(
            (
                f"`{_safe(skill['path'])}` · depth {report['depth']} · confidence "
                f"{report['confidence']} ({', '.join(report['confidence_basis'])})",
            )
        ),
    ]
    if report["compat"] == "public":
        blocks.append(
            Para(("Static layer by the public PluginEval tool's rules (--compat public).",))
        )
    lines: list[str] = []
    elo = report["elo"]
    if elo is not None and elo["computed"]:
        # A judged Elo's basis names its judge; a static-score one's the depth it was scored at.
        basis = f"scored at {elo['basis']}" if elo["kind"] == STATIC_SCORE else elo["basis"]
        lines.append(
            f"{elo['label']} {elo['rating']:.1f} [{elo['ci_low']:.1f}, {elo['ci_high']:.1f}] · "
            f"corpus percentile {elo['corpus_percentile']:.1f} · {elo['matches']} matches, "
            + (
                "no position-bias check (static)"
                if elo["order_disagreements"] is None
                else f"{elo['order_disagreements']} order disagreement(s)"
            )
            + f" · {basis}"
        )
        if elo["note"]:
            lines.append(f"({elo['note']})")
    if elo is not None and elo["left_out"]:
        lines.append(
            f"{elo['label']} left out {len(elo['left_out'])} corpus skill(s): "
            + "; ".join(f"`{_safe(x['path'])}` ({x['reason']})" for x in elo["left_out"])
        )
    lines.append(f"Badge basis: {comp['badge_basis']}")
    if "certification" in report:
        lines.append(f"Certification: {report['certification']['statement']}")
    if report["threshold"] is not None:
        verdict = "passed" if report["passed"] else "below"
        lines.append(f"Threshold {report['threshold']:g}: {verdict}")
    blocks.append(Para(tuple(lines)))
    rows = []
    for name, d in report["dimensions"].items():
        ci = "—" if d["ci_low"] is None else f"[{d['ci_low']:.3f}, {d['ci_high']:.3f}]"
        lay = d["layers"]
        rows.append(
            (
                name,
                f"{d['weight']:.2f}",
                _fmt(d["score"], 3),
                d["grade"] or "unmeasured",
                ci,
                _fmt(lay["static"], 3),
                _fmt(lay["judge"], 3),
                _fmt(lay["monte_carlo"], 3),
            )
        )
    blocks.append(
        Table(
            ("dimension", "weight", "score", "grade", "95% CI", "static", "judge", "monte carlo"),
            "lrrclrrr",
            tuple(rows),
        )
    )
    blocks += _simulated_blocks(report)
    blocks.append(Items("Layers:", tuple(_layer_line(layer) for layer in report["layers"])))
    if report["findings"]:
        blocks.append(
            Items(
                "Findings:",
                tuple(f"{f['severity']} {f['code']}: {f['message']}" for f in report["findings"]),
            )
        )
    if verbose:
        blocks += _verbose_blocks(report)
    return blocks


def _verbose_blocks(report: Mapping[str, Any]) -> list[Block]:
    """--verbose: the static sub-scores, each anti-pattern's evidence, the judge's prompts."""
    static = report["layers"][0]
    blocks: list[Block] = [
        Heading(3, "Static sub-scores"),
        Table(
            ("sub-check", "score", "feeds dimension"),
            "lrl",
            tuple(
                (name, _fmt(value, 3), STATIC_TO_DIMENSION[name])
                for name, value in static["sub_scores"].items()
            ),
        ),
    ]
    if static["anti_pattern_details"]:
        blocks.append(
            Items(
                "Anti-patterns:",
                tuple(f"{a['flag']}: {a['message']}" for a in static["anti_pattern_details"]),
            )
        )
    judge = next((x for x in report["layers"] if x["name"] == "judge"), None)
    if judge is not None and judge["prompts"]:
        judges = [str(pj["judge"]) for pj in judge["per_judge"]]
        blocks += [
            Heading(3, "Judge prompts (evalflow's labels, each judge's answer)"),
            Table(
                ("prompt", "should trigger", "source", *judges),
                "lcl" + "c" * len(judges),
                tuple(
                    (
                        p["prompt"],
                        "yes" if p["should_trigger"] else "no",
                        p["source"],
                        *(_yes_no(p["would_trigger"].get(j)) for j in judges),
                    )
                    for p in judge["prompts"]
                ),
            ),
        ]
    return blocks


def _yes_no(answer: bool | None) -> str:
    return "—" if answer is None else ("yes" if answer else "no")


def render_markdown(report: Mapping[str, Any], *, verbose: bool = False) -> str:
    """One skill as Markdown."""
    return terminal_safe(to_markdown(skill_blocks(report, verbose=verbose)))


def render_html(report: Mapping[str, Any], *, verbose: bool = False) -> str:
    """One skill as a self-contained HTML page."""
    title = f"PluginEval — {_safe(report['skill']['name'])}"
    return terminal_safe(to_html(title, skill_blocks(report, verbose=verbose)))


def _simulated_blocks(report: Mapping[str, Any]) -> list[Block]:
    """The simulated block, apart from the scored table (empty when nothing was simulated)."""
    sim = report["composite"]["simulated"]
    if sim is None:
        return []
    return [
        Heading(
            3,
            f"Simulated — {sim['backend']} (not in the composite, badge, Elo or confidence)",
        ),
        Para((f"Simulated composite {_fmt(sim['score'])}/100 ({sim['display_grade'] or '—'})",)),
        Table(
            ("dimension", "simulated monte carlo", "simulated blend"),
            "lrr",
            tuple(
                (
                    name,
                    _fmt(d["simulated"]["monte_carlo"], 3),
                    _fmt(d["simulated"]["score"], 3),
                )
                for name, d in report["dimensions"].items()
                if d["simulated"] is not None
            ),
        ),
    ]


def batch_blocks(batch: Mapping[str, Any], *, verbose: bool = False) -> list[Block]:
    """A summary table, the plugin-level scores, then each skill's section."""
    summary = batch["summary"]
    rows = []
    for r in batch["skills"]:
        flags = ", ".join(r["layers"][0]["anti_patterns"]) or "—"
        sim = r["composite"]["simulated"]
        elo = r["elo"]
        elo_cell = "—"
        if elo is not None and elo["computed"]:
            elo_cell = f"{elo['rating']:.1f} ({elo['label'].removesuffix(' Elo').lower()})"
        rows.append(
            (
                f"`{_safe(r['skill']['path'])}`",
                _fmt(r["composite"]["score"]),
                r["composite"]["display_grade"] or "—",
                BADGE_DISPLAY[r["composite"]["badge"]],
                elo_cell,
                flags,
                "—" if sim is None else f"{_fmt(sim['score'])} (simulated)",
            )
        )
    blocks: list[Block] = [
        Heading(
            1,
            f"PluginEval — {summary['count']} skill(s), mean composite "
            f"{_fmt(summary['mean_composite'])}",
        ),
        Table(
            (
                "skill",
                "composite",
                "grade",
                "badge",
                "Elo",
                "anti-patterns",
                "simulated composite",
            ),
            "lrclllr",
            tuple(rows),
        ),
    ]
    if summary["simulated"] is not None:
        blocks.append(
            Para(
                (
                    "Simulated mean composite (not certified): "
                    f"{_fmt(summary['simulated']['mean_composite'])}",
                )
            )
        )
    if summary["threshold"] is not None:
        blocks.append(
            Para((f"Below threshold {summary['threshold']}: {len(summary['below_threshold'])}",))
        )
    blocks += plugin_blocks(batch["plugins"])
    for r in batch["skills"]:
        blocks += skill_blocks(r, verbose=verbose)
    return blocks


def render_batch_markdown(batch: Mapping[str, Any], *, verbose: bool = False) -> str:
    """A summary table, the plugin-level scores, then each skill's section."""
    return terminal_safe(to_markdown(batch_blocks(batch, verbose=verbose)))


def render_batch_html(batch: Mapping[str, Any], *, verbose: bool = False) -> str:
    """The batch / plugin report as a self-contained HTML page."""
    named = [p["plugin"] for p in batch["plugins"] if p["plugin"] is not None]
    title = "PluginEval — " + (
        ", ".join(_safe(n) for n in named) if 0 < len(named) <= 3 else "skills"
    )
    return terminal_safe(to_html(title, batch_blocks(batch, verbose=verbose)))


def plugin_summaries(reports: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The plugin-level score of each plugin among `reports` (grouped by manifest name; skills
    outside any plugin form one group named null).

    A plugin's score is the mean of its skills' composites — each already carries that skill's
    own anti-pattern penalty — over the skills with a measured composite; each dimension's is
    the mean over the skills that measured it. Unmeasured stays null, never 0.
    """
    groups: dict[str | None, list[Mapping[str, Any]]] = {}
    for r in reports:
        groups.setdefault(r["skill"]["plugin"], []).append(r)
    out: list[dict[str, Any]] = []
    for name in sorted(groups, key=lambda n: (n is None, n or "")):
        members = groups[name]
        scored = sorted(
            (r["composite"]["score"], r["skill"]["path"])
            for r in members
            if r["composite"]["score"] is not None
        )
        mean = _r(sum(s for s, _ in scored) / len(scored), COMPOSITE_DECIMALS) if scored else None
        dims: dict[str, Any] = {}
        for d in DIMENSIONS:
            values = [
                r["dimensions"][d]["score"]
                for r in members
                if r["dimensions"][d]["score"] is not None
            ]
            dims[d] = {
                "weight": DIMENSION_WEIGHTS[d],
                "mean": _r(sum(values) / len(values)) if values else None,
                "min": min(values) if values else None,
                "measured_skills": len(values),
            }
        badges = [r["composite"]["badge"] for r in members]
        flags = [f for r in members for f in r["layers"][0]["anti_patterns"]]
        out.append(
            {
                "plugin": name,
                "skills": len(members),
                "scored_skills": len(scored),
                "score": mean,
                "grade": letter_grade(None if mean is None else mean / 100.0),
                "display_grade": display_grade(mean),
                "basis": f"mean of the composites of {len(scored)} scored skill(s)",
                "min_composite": scored[0][0] if scored else None,
                "weakest_skill": scored[0][1] if scored else None,
                "dimensions": dims,
                "badges": {
                    b: badges.count(b) for b in (*(x[0] for x in BADGES), NO_BADGE) if b in badges
                },
                "anti_patterns": {f: flags.count(f) for f in FLAGS if f in flags},
            }
        )
    return out


def plugin_blocks(plugins: Sequence[Mapping[str, Any]]) -> list[Block]:
    """Plugin-level scores: one summary table, then each plugin's dimension means."""
    if not any(p["plugin"] is not None for p in plugins):
        return []
    blocks: list[Block] = [
        Heading(2, "Plugins"),
        Para(
            (
                "Plugin score = mean of its skills' composites (each with its own "
                "anti-pattern penalty); a dimension = mean over the skills that measured it.",
            )
        ),
        Table(
            (
                "plugin",
                "skills",
                "plugin score",
                "grade",
                "weakest skill",
                "lowest composite",
                "badges",
                "anti-patterns",
            ),
            "lrrclrll",
            tuple(
                (
                    "(no plugin)" if p["plugin"] is None else _safe(p["plugin"]),
                    f"{p['scored_skills']}/{p['skills']}",
                    _fmt(p["score"]),
                    p["display_grade"] or "—",
                    "—" if p["weakest_skill"] is None else f"`{_safe(p['weakest_skill'])}`",
                    _fmt(p["min_composite"]),
                    ", ".join(f"{BADGE_DISPLAY[b]} {n}" for b, n in p["badges"].items()) or "—",
                    ", ".join(f"{f} {n}" for f, n in p["anti_patterns"].items()) or "—",
                )
                for p in plugins
            ),
        ),
    ]
    for p in plugins:
        name = "(no plugin)" if p["plugin"] is None else _safe(p["plugin"])
        blocks += [
            Heading(3, f"Plugin {name} — {_fmt(p['score'])}/100 ({p['display_grade'] or '—'})"),
            Table(
                ("dimension", "weight", "mean", "lowest", "skills measured"),
                "lrrrr",
                tuple(
                    (
                        d,
                        f"{v['weight']:.2f}",
                        _fmt(v["mean"], 3),
                        _fmt(v["min"], 3),
                        f"{v['measured_skills']}/{p['skills']}",
                    )
                    for d, v in p["dimensions"].items()
                ),
            ),
        ]
    return blocks


def compare_dict(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Per-dimension head-to-head of two skill reports (delta = b − a where both measured)."""

    def delta(x: float | None, y: float | None, places: int) -> float | None:
        return None if x is None or y is None else round(y - x, places)

    dims = {
        d: {
            "weight": DIMENSION_WEIGHTS[d],
            "a": a["dimensions"][d]["score"],
            "b": b["dimensions"][d]["score"],
            "delta": delta(a["dimensions"][d]["score"], b["dimensions"][d]["score"], 4),
        }
        for d in DIMENSIONS
    }
    ca, cb = a["composite"]["score"], b["composite"]["score"]
    simulated = None
    sa, sb = a["composite"]["simulated"], b["composite"]["simulated"]
    if sa is not None or sb is not None:
        xa = None if sa is None else sa["score"]
        xb = None if sb is None else sb["score"]
        simulated = {
            "label": "simulated",
            "composite": {"a": xa, "b": xb, "delta": delta(xa, xb, COMPOSITE_DECIMALS)},
        }
    return {
        "a": a,
        "b": b,
        # Both sides are scored with the same options, so one compat mode describes the pair.
        "compat": a["compat"],
        "composite": {"a": ca, "b": cb, "delta": delta(ca, cb, COMPOSITE_DECIMALS)},
        "dimensions": dims,
        "simulated": simulated,
    }


def compare_blocks(cmp: Mapping[str, Any], *, verbose: bool = False) -> list[Block]:
    """The head-to-head table; `verbose` adds both skills' full sections."""
    a, b = cmp["a"]["skill"], cmp["b"]["skill"]
    blocks: list[Block] = [
        Heading(1, f"Compare: A = `{_safe(a['path'])}` vs B = `{_safe(b['path'])}`")
    ]
    if cmp["compat"] == "public":
        blocks.append(
            Para(("Static layers by the public PluginEval tool's rules (--compat public).",))
        )
    rows = []
    for name, d in cmp["dimensions"].items():
        dl = "—" if d["delta"] is None else f"{d['delta']:+.2f}"
        rows.append((name, f"{d['weight']:.2f}", _fmt(d["a"]), _fmt(d["b"]), dl))
    c = cmp["composite"]
    cd = "—" if c["delta"] is None else f"{c['delta']:+.2f}"
    rows.append(("**composite**", "", _fmt(c["a"]), _fmt(c["b"]), cd))
    blocks.append(Table(("dimension", "weight", "A", "B", "B − A"), "lrrrr", tuple(rows)))
    sim = cmp["simulated"]
    if sim is not None:
        s = sim["composite"]
        sd = "—" if s["delta"] is None else f"{s['delta']:+.2f}"
        blocks.append(
            Para(
                (
                    f"Simulated composite (not certified): A {_fmt(s['a'])} · B {_fmt(s['b'])} · "
                    f"B − A {sd}",
                )
            )
        )
    if verbose:
        blocks += skill_blocks(cmp["a"], verbose=True) + skill_blocks(cmp["b"], verbose=True)
    return blocks


def render_compare_markdown(cmp: Mapping[str, Any], *, verbose: bool = False) -> str:
    return terminal_safe(to_markdown(compare_blocks(cmp, verbose=verbose)))


def render_compare_html(cmp: Mapping[str, Any], *, verbose: bool = False) -> str:
    return terminal_safe(to_html("PluginEval — compare", compare_blocks(cmp, verbose=verbose)))
