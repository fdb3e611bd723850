"""Render a `SkillEvaluation` as SPEC §2's JSON shape and as Markdown.

JSON per skill (keys beyond SPEC's are additions, none renamed):

    {"skill": {...}, "depth", "certify", "confidence", "confidence_basis",
     "composite": {"score", "badge", "elo", "grade", "display_grade", "penalty", "raw",
                   "measured_weight", "badge_basis"},
     "dimensions": {name: {"score", "grade", "ci_low", "ci_high", "display_grade",
                           "weight", "layers": {"static", "judge", "monte_carlo"}}},
     "layers": [{"name": "static", "duration_ms", "measured", "anti_patterns", ...},
                {"name": "judge", "duration_ms", "measured", "judges", "kappa", ...},
                {"name": "monte_carlo", "duration_ms", "measured", "simulated", ...}],
     "elo": {...} | null, "findings": [...]}

Unmeasured values are null, never 0. Scores are rounded for display (dimensions 4 places,
composite 2, Elo 1); `duration_ms` is the only field that varies between identical runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalflow.domain.plugineval.composite import (
    BADGE_STARS,
    COMPOSITE_DECIMALS,
    DIMENSION_WEIGHTS,
    SCORE_DECIMALS,
    display_grade,
    letter_grade,
)
from evalflow.domain.plugineval.evaluate import SkillEvaluation
from evalflow.domain.plugineval.model import DIMENSIONS


def _r(x: float | None, places: int = SCORE_DECIMALS) -> float | None:
    return None if x is None else round(float(x), places)


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
            }
        )
    if ev.monte_carlo is not None:
        mc = ev.monte_carlo
        out.append(
            {
                "name": "monte_carlo",
                "duration_ms": round(ms.get("monte_carlo", 0.0)),
                "measured": mc.measured,
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
    return {
        "computed": e.computed,
        "reason": e.reason,
        "rating": _r(e.rating, 1),
        "ci_low": _r(e.ci_low, 1),
        "ci_high": _r(e.ci_high, 1),
        "corpus_percentile": _r(e.corpus_percentile, 1),
        "opponents": e.opponents,
        "matches": e.matches,
        "order_disagreements": e.disagreements,
        "permutations": e.permutations,
        "bootstrap_samples": e.bootstrap_samples,
    }


def report_dict(ev: SkillEvaluation, *, certify: bool = False) -> dict[str, Any]:
    """The per-skill JSON object."""
    p = ev.parsed
    c = ev.composite
    elo_computed = ev.elo is not None and ev.elo.computed
    elo_value = _r(ev.elo.rating, 1) if ev.elo is not None and ev.elo.computed else None
    if elo_computed:
        basis = "composite and Elo"
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
        }
    basis_layers = ["static"]
    if ev.judge is not None and ev.judge.measured:
        basis_layers.append("judge")
    if ev.monte_carlo is not None and ev.monte_carlo.measured:
        basis_layers.append(
            "monte_carlo (simulated)" if ev.monte_carlo.simulated else "monte_carlo"
        )
    score = _r(c.score, COMPOSITE_DECIMALS)
    return {
        "skill": {
            "name": p.name,
            "dir_name": p.dir_name,
            "path": p.location,
            "plugin": p.plugin,
            "sha256": ev.sha256,
        },
        "depth": ev.depth,
        "certify": certify,
        "confidence": ev.confidence,
        "confidence_basis": basis_layers,
        "composite": {
            "score": score,
            "badge": ev.badge,
            "elo": elo_value,
            "grade": letter_grade(None if c.score is None else c.score / 100.0),
            "display_grade": display_grade(c.score),
            "penalty": _r(c.penalty),
            "raw": _r(c.raw),
            "measured_weight": _r(c.measured_weight),
            "badge_basis": basis,
        },
        "dimensions": dims,
        "layers": _layers(ev),
        "elo": _elo(ev),
        "findings": [f.as_dict() for f in ev.findings],
    }


def batch_dict(reports: Sequence[Mapping[str, Any]], threshold: float | None) -> dict[str, Any]:
    """Many skills scored in one process: the per-skill objects plus a summary."""
    scores = [r["composite"]["score"] for r in reports if r["composite"]["score"] is not None]
    below = [
        r["skill"]["path"]
        for r in reports
        if threshold is not None
        and (r["composite"]["score"] is None or r["composite"]["score"] < threshold)
    ]
    return {
        "skills": list(reports),
        "summary": {
            "count": len(reports),
            "mean_composite": _r(sum(scores) / len(scores), COMPOSITE_DECIMALS) if scores else None,
            "threshold": threshold,
            "below_threshold": below,
        },
    }


def _fmt(x: float | None, places: int = 2) -> str:
    return "—" if x is None else f"{x:.{places}f}"


def _layer_line(layer: Mapping[str, Any]) -> str:
    name = layer["name"]
    if name == "monte_carlo" and layer.get("simulated"):
        name = "monte_carlo (simulated)"
    if not layer["measured"]:
        return f"- **{name}**: unmeasured — {layer['reason']}"
    head = f"- **{name}** ({layer['duration_ms']} ms)"
    if layer["name"] == "static":
        flags = ", ".join(layer["anti_patterns"]) or "none"
        return f"{head}: anti-patterns: {flags} (penalty ×{layer['penalty']:.2f})"
    if layer["name"] == "judge":
        return f"{head}: {layer['judges']} judge(s), kappa {_fmt(layer['kappa'])}"
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


def render_markdown(report: Mapping[str, Any]) -> str:
    """One skill as Markdown; the simulated Monte Carlo layer is marked "(simulated)"."""
    comp = report["composite"]
    skill = report["skill"]
    stars = BADGE_STARS[comp["badge"]]
    lines = [
        f"## {skill['name']} — {_fmt(comp['score'])}/100 ({comp['display_grade'] or '—'}) · "
        f"{stars} {comp['badge']}",
        "",
        f"`{skill['path']}` · depth {report['depth']} · confidence {report['confidence']} "
        f"({', '.join(report['confidence_basis'])})",
        "",
    ]
    elo = report["elo"]
    if elo is not None and elo["computed"]:
        lines.append(
            f"Elo {elo['rating']:.1f} [{elo['ci_low']:.1f}, {elo['ci_high']:.1f}] · corpus "
            f"percentile {elo['corpus_percentile']:.1f} · {elo['matches']} matches, "
            f"{elo['order_disagreements']} order disagreement(s)"
        )
    lines.append(f"Badge basis: {comp['badge_basis']}")
    lines += [
        "",
        "| dimension | weight | score | grade | 95% CI | static | judge | monte carlo |",
        "|---|---:|---:|:---:|---|---:|---:|---:|",
    ]
    mc_label = "monte_carlo"
    for name, d in report["dimensions"].items():
        ci = "—" if d["ci_low"] is None else f"[{d['ci_low']:.3f}, {d['ci_high']:.3f}]"
        lay = d["layers"]
        mc_cell = _fmt(lay[mc_label], 3)
        if lay[mc_label] is not None:
            mc_cell += " (simulated)" if _mc_simulated(report) else ""
        lines.append(
            f"| {name} | {d['weight']:.2f} | {_fmt(d['score'], 3)} | "
            f"{d['grade'] or 'unmeasured'} | {ci} | {_fmt(lay['static'], 3)} | "
            f"{_fmt(lay['judge'], 3)} | {mc_cell} |"
        )
    lines += ["", "Layers:"]
    lines += [_layer_line(layer) for layer in report["layers"]]
    if report["findings"]:
        lines += ["", "Findings:"]
        lines += [f"- {f['severity']} {f['code']}: {f['message']}" for f in report["findings"]]
    return "\n".join(lines) + "\n"


def _mc_simulated(report: Mapping[str, Any]) -> bool:
    return any(
        layer["name"] == "monte_carlo" and layer.get("simulated") for layer in report["layers"]
    )


def render_batch_markdown(batch: Mapping[str, Any]) -> str:
    """A summary table followed by each skill's section."""
    summary = batch["summary"]
    lines = [
        f"# PluginEval — {summary['count']} skill(s), mean composite "
        f"{_fmt(summary['mean_composite'])}",
        "",
        "| skill | composite | grade | badge | anti-patterns |",
        "|---|---:|:---:|---|---|",
    ]
    for r in batch["skills"]:
        flags = ", ".join(r["layers"][0]["anti_patterns"]) or "—"
        lines.append(
            f"| `{r['skill']['path']}` | {_fmt(r['composite']['score'])} | "
            f"{r['composite']['display_grade'] or '—'} | {r['composite']['badge']} | {flags} |"
        )
    if summary["threshold"] is not None:
        lines += [
            "",
            f"Below threshold {summary['threshold']}: {len(summary['below_threshold'])}",
        ]
    lines.append("")
    return "\n".join(lines) + "\n" + "\n".join(render_markdown(r) for r in batch["skills"])


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
    return {
        "a": a,
        "b": b,
        "composite": {"a": ca, "b": cb, "delta": delta(ca, cb, COMPOSITE_DECIMALS)},
        "dimensions": dims,
    }


def render_compare_markdown(cmp: Mapping[str, Any]) -> str:
    a, b = cmp["a"]["skill"], cmp["b"]["skill"]
    lines = [
        f"# Compare: A = `{a['path']}` vs B = `{b['path']}`",
        "",
        "| dimension | weight | A | B | B − A |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, d in cmp["dimensions"].items():
        dl = "—" if d["delta"] is None else f"{d['delta']:+.2f}"
        lines.append(f"| {name} | {d['weight']:.2f} | {_fmt(d['a'])} | {_fmt(d['b'])} | {dl} |")
    c = cmp["composite"]
    cd = "—" if c["delta"] is None else f"{c['delta']:+.2f}"
    lines.append(f"| **composite** | | {_fmt(c['a'])} | {_fmt(c['b'])} | {cd} |")
    return "\n".join(lines) + "\n"
