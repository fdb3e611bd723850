"""Parity of `evalflow plugin score --depth quick` with the public PluginEval tool.

Full run: give a checkout of `wshobson/agents` (the public tool's source and its own skills;
docs/plugineval.md names the commit measured). For every `SKILL.md` under its `plugins/`,
the public tool's quick composite (its `EvalEngine`, imported from
`plugins/plugin-eval/src`, needs pydantic and PyYAML only) is compared with evalflow's in
`--compat public` mode and in evalflow's own mode, all in this process:

    .venv/bin/python benchmarks/bench_plugineval_parity.py --public-repo /path/to/agents

It prints, for each mode, how many composites agree within 0.005 and within 0.5, the median
and largest |Δ|, the badges that differ, and every skill beyond 0.5 points; exit 1 when
`--compat public` is not within 0.005 on every skill (the parity claim in
docs/plugineval.md).

`--smoke` needs no checkout: it compares `--compat public` with the public tool's stored JSON
outputs for the fixture skills in `evalflow_tests/fixtures/plugineval_public` (within 0.01,
the precision those outputs were pinned to) and exits 0 when they agree.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalflow.domain.plugineval.evaluate import EvalOptions
from evalflow.io.plugineval import evaluate_path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "evalflow_tests" / "fixtures" / "plugineval_public"
TIGHT = 0.005
LOOSE = 0.5


def evalflow_scores(plugins: Path, compat: str | None) -> dict[str, tuple[float, str]]:
    """(composite, badge) of every skill under `plugins`, keyed by its path relative to it."""
    evaluations, _ = evaluate_path(plugins, EvalOptions(depth="quick", compat=compat))
    return {
        Path(ev.parsed.location).relative_to(plugins).as_posix(): (
            float(ev.composite.score or 0.0),
            ev.badge,
        )
        for ev in evaluations
    }


def public_scorer(repo: Path) -> Callable[[Path], tuple[float, str]]:
    """The public tool's quick scorer, imported from its source in `repo`."""
    sys.path.insert(0, str(repo / "plugins" / "plugin-eval" / "src"))
    from plugin_eval.engine import EvalEngine  # type: ignore[import-not-found]
    from plugin_eval.models import Depth, EvalConfig  # type: ignore[import-not-found]

    engine = EvalEngine(EvalConfig(depth=Depth.QUICK))

    def score(skill_dir: Path) -> tuple[float, str]:
        composite = engine.evaluate_skill(skill_dir).composite
        return float(composite.score), str(composite.badge.value)

    return score


def compare(
    public: dict[str, tuple[float, str]], ours: dict[str, tuple[float, str]], tight: float
) -> dict[str, Any]:
    """Agreement counts, |Δ| statistics and the skills that differ."""
    keys = sorted(public)
    deltas = {k: abs(ours[k][0] - public[k][0]) for k in keys if k in ours}
    return {
        "skills": len(keys),
        "scored_by_both": len(deltas),
        "within_tight": sum(d <= tight for d in deltas.values()),
        "within_0.5": sum(d <= LOOSE for d in deltas.values()),
        "median_abs_delta": round(statistics.median(deltas.values()), 4) if deltas else None,
        "max_abs_delta": round(max(deltas.values()), 4) if deltas else None,
        "badges_differ": sorted(k for k in deltas if ours[k][1] != public[k][1]),
        "beyond_0.5": {
            k: {"public": round(public[k][0], 2), "evalflow": round(ours[k][0], 2)}
            for k in keys
            if deltas.get(k, 0.0) > LOOSE
        },
    }


def smoke() -> int:
    """--compat public against the public tool's stored outputs for the fixture skills."""
    ours = evalflow_scores(FIXTURE / "skills", "public")
    public = {}
    for path in sorted((FIXTURE / "public_outputs").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        plugin, _, skill = path.stem.partition("_")
        public[f"{plugin}/{skill}"] = (
            float(data["composite"]["score"]),
            str(data["composite"]["badge"]),
        )
    result = compare(public, ours, 0.01)
    print(json.dumps({"smoke": True, "compat public": result}, indent=2))
    if result["within_tight"] != result["skills"]:
        print("smoke: --compat public differs from the stored public outputs", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--public-repo", type=Path, help="a checkout of wshobson/agents")
    parser.add_argument("--smoke", action="store_true", help="fixture skills only, no checkout")
    args = parser.parse_args(argv)
    if args.smoke:
        return smoke()
    if args.public_repo is None:
        parser.error("--public-repo is required (or --smoke)")
    plugins = args.public_repo / "plugins"
    score = public_scorer(args.public_repo)
    skill_dirs = sorted(p.parent for p in plugins.rglob("SKILL.md"))
    public = {d.relative_to(plugins).as_posix(): score(d) for d in skill_dirs}
    report = {
        "compat public": compare(public, evalflow_scores(plugins, "public"), TIGHT),
        "evalflow default": compare(public, evalflow_scores(plugins, None), TIGHT),
    }
    print(json.dumps(report, indent=2))
    strict = report["compat public"]
    return 0 if strict["within_tight"] == strict["skills"] else 1


if __name__ == "__main__":
    sys.exit(main())
