"""PluginEval assets over each framework run's own skills (`skills_dir` in the manifest).

One evaluation per skill feeds four assets, so no layer is computed twice:
- `static_analysis`: the six static sub-checks, dimension scores and anti-patterns;
- `plugin_judge`: the LLM judge layer — Claude when the run's judge is `anthropic` or
  `hybrid`, otherwise unmeasured with the reason; never invented;
- `mc_simulation`: the Monte Carlo layer — through the offline router by default, a
  *simulation* that every row says so (`simulated = true`); through Claude, choosing from a
  catalogue of skill descriptions, when the run is judged by Claude (`simulated = false`);
- `plugin_composite`: the composite, grade, badge and the confidence label from the layers
  that really produced data.
`skills_dir` resolves against the manifest's directory; a run without one yields empty tables.
Each skill's score is appended to the ledger (`plugin_score:<run_key>/<skill>`, pass = a badge).
"""

from pathlib import Path

import dagster as dg
import pandas as pd

from evalflow.domain.plugineval.composite import NO_BADGE
from evalflow.domain.plugineval.evaluate import EvalOptions
from evalflow.domain.plugineval.report import report_dict
from evalflow.io.inputs import load_manifest
from evalflow.io.ledger import ledger_path_for, record_evaluation
from evalflow.io.plugineval import evaluate_path
from evalflow.io.registry import manifest_for
from evalflow.judges.cost import UsageRecord, usage_sums
from evalflow.pipeline.assets.common import run_output, stamp
from evalflow.pipeline.resources import PLUGINEVAL_JUDGES, EvalflowResource
from evalflow.storage.tables import columns, named_scores

DEPTH = "deep"
SEED = 0
MC_STATS = [
    "activation_rate", "activation_ci_low", "activation_ci_high", "triggering_f1",
    "mean_quality", "quality_cv", "failure_rate", "failure_ci_low", "failure_ci_high",
    "token_median", "token_iqr", "token_outliers", "efficiency_norm",
]  # fmt: skip


def _layer(report: dict, name: str) -> dict:
    return next(layer for layer in report["layers"] if layer["name"] == name)


OFFLINE = EvalOptions(depth=DEPTH, seed=SEED)


def plugin_options(
    evalflow: EvalflowResource,
    manifest_judge: str | None,
    run_key: str | None = None,
    fingerprint: str = "",
) -> EvalOptions:
    """Offline (static + simulated Monte Carlo) unless the run is judged by Claude: then the
    judge layer and the Monte Carlo layer use Claude too, with the run's cache and
    PluginEval's own share of the framework run's cost limit, so they never starve the
    checks (`EvalflowResource.budget_for`)."""
    if evalflow.judge_name(manifest_judge) not in PLUGINEVAL_JUDGES:
        return OFFLINE
    from evalflow.judges.anthropic_judge import ClaudeSettings
    from evalflow.judges.claude_mc import ClaudeMcFactory
    from evalflow.judges.claude_plugin import make_plugin_judges
    from evalflow.judges.registry import require_api_key

    require_api_key("--judge anthropic")
    warehouse = evalflow.get_warehouse()
    cache_dir = warehouse.workdir / "cache"
    budget = evalflow.budget_for(run_key, "plugineval", fingerprint=fingerprint)
    claude = ClaudeSettings.from_env(rejudge=evalflow.rejudge == "unscored")
    judges = make_plugin_judges([claude.model], cache_dir=cache_dir, budget=budget, seed=SEED)
    mc = ClaudeMcFactory(claude, cache_dir=cache_dir, budget=budget)
    return EvalOptions(depth=DEPTH, seed=SEED, judges=judges, mc_factory=mc)


def _calls_per_skill(options: EvalOptions) -> dict[str, list[UsageRecord]]:
    """The judged layers' model calls (`plugineval:<skill>` sites), by skill name."""
    records: list[UsageRecord] = []
    for source in (*options.judges, options.mc_factory):
        drain = getattr(source, "drain_usage", None)  # the Claude-backed ones record usage
        if drain is not None:
            records += drain()
    calls: dict[str, list[UsageRecord]] = {}
    for record in records:
        calls.setdefault(record.run_key.removeprefix("plugineval:"), []).append(record)
    return calls


def plugin_tables(
    skills_dir: Path | None, options: EvalOptions = OFFLINE
) -> tuple[pd.DataFrame, ...]:
    """The four tables for one framework run's skills (empty when it has none)."""
    static, judge, mc, composite = [], [], [], []
    reports = []
    if skills_dir is not None:
        evaluations_, _ = evaluate_path(skills_dir, options)
        reports = [report_dict(ev) for ev in evaluations_]
    calls = _calls_per_skill(options)
    for report in reports:
        name = report["skill"]["name"]
        static_layer = _layer(report, "static")
        anti = list(static_layer["anti_patterns"])
        static += [
            {"skill": name, "skill_sha256": report["skill"]["sha256"], "sub_check": sub,
             "score": score, "anti_patterns": anti, "penalty": static_layer["penalty"]}
            for sub, score in sorted(static_layer["sub_scores"].items())
        ]  # fmt: skip
        judge_layer = _layer(report, "judge")
        judge.append(
            {
                "skill": name,
                "measured": judge_layer["measured"],
                "reason": judge_layer.get("reason"),
                "judges": judge_layer["judges"],
                "kappa": judge_layer["kappa"],
                "scores": named_scores(judge_layer["scores"]),
                # Each skill's calls once (two skills of one name: the first row).
                **usage_sums(calls.pop(name or report["skill"]["dir_name"], [])),
            }
        )
        mc_layer = _layer(report, "monte_carlo")
        stats = mc_layer.get("stats") or {}
        mc.append(
            {
                "skill": name,
                "simulated": bool(mc_layer.get("simulated", True)),
                "backend": mc_layer.get("backend"),
                "runs": mc_layer.get("runs"),
                "errored_runs": mc_layer.get("errored_runs"),
                "mc_score": mc_layer.get("mc_score"),
                **{key: stats.get(key) for key in MC_STATS},
            }
        )
        comp = report["composite"]
        composite.append(
            {
                "skill": name,
                "skill_path": report["skill"]["path"],
                "composite": comp["score"],
                "grade": comp["grade"],
                "display_grade": comp["display_grade"],
                "badge": comp["badge"],
                "elo": comp["elo"],
                "confidence": report["confidence"],
                "confidence_basis": list(report["confidence_basis"]),
                "penalty": comp["penalty"],
                "anti_patterns": anti,
                "measured_weight": comp["measured_weight"],
                "depth": report["depth"],
            }
        )
    return (
        pd.DataFrame(static, columns=columns("static_analysis", stamped=False)),
        pd.DataFrame(judge, columns=columns("plugin_judge", stamped=False)),
        pd.DataFrame(mc, columns=columns("mc_simulation", stamped=False)),
        pd.DataFrame(composite, columns=columns("plugin_composite", stamped=False)),
    )


PLUGIN_TABLES = ("static_analysis", "plugin_judge", "mc_simulation", "plugin_composite")


def plugineval(
    context: dg.AssetExecutionContext, evalflow: EvalflowResource, run_manifest: pd.DataFrame
) -> tuple[dg.Output, dg.Output, dg.Output, dg.Output]:
    """Score the framework's own skills/plugins (PluginEval: static, judge, Monte Carlo)."""
    loaded = load_manifest(manifest_for(evalflow.get_warehouse(), context.partition_key))
    skills = loaded.manifest.skills_dir
    fingerprint = str(run_manifest["fingerprint"].iloc[0])
    options = plugin_options(evalflow, loaded.manifest.judge, context.partition_key, fingerprint)
    tables = plugin_tables(loaded.resolve(skills) if skills else None, options)
    composite = tables[3]
    root = evalflow.get_warehouse().workdir
    for row in composite.itertuples(index=False):
        record_evaluation(
            "plugin_score",
            f"{context.partition_key}/{row.skill}",
            scores={"composite": row.composite, "penalty": row.penalty},
            results=[(flag, False, None) for flag in row.anti_patterns],
            passed=row.badge != NO_BADGE,
            ledger_path=ledger_path_for(root),
        )
    summary = (
        {"skills": len(composite), "mean_composite": float(composite["composite"].mean())}
        if len(composite)
        else {"skills": 0}
    )
    return tuple(
        run_output(
            name,
            stamp(table, run_manifest),
            run_manifest,
            summary if name == "plugin_composite" else None,
        )
        for name, table in zip(PLUGIN_TABLES, tables, strict=True)
    )
