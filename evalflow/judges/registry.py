"""Judge selection by name (`--judge`, manifest `judge:` key, config).

`heuristic` (offline default), `anthropic` (Claude), `hybrid` (heuristic first, Claude for
the rest), `labels` (verdicts from a file). The LLM judges need `ANTHROPIC_API_KEY`; their
modules are imported only when chosen, so the offline path never loads the SDK.
"""

from __future__ import annotations

import os
from pathlib import Path

from evalflow.errors import InputError
from evalflow.judges.base import Judge
from evalflow.judges.cost import Budget
from evalflow.judges.heuristic import HeuristicJudge

JUDGE_NAMES = ("heuristic", "anthropic", "hybrid", "labels")


def require_api_key(name: str) -> None:
    if not os.environ.get("ANTHROPIC_API_KEY", "").strip():
        raise InputError(
            "ANTHROPIC_API_KEY is not set",
            where=f"judge {name!r}",
            fix="export ANTHROPIC_API_KEY=<your key> to use the Claude judge, or use "
            "--judge heuristic (the offline default, no key needed)",
        )


def make_judge(
    name: str,
    *,
    cache_dir: Path | None = None,
    labels_path: Path | None = None,
    budget: Budget | None = None,
) -> Judge:
    """The judge called `name`.

    `cache_dir` is the warehouse cache root (`<warehouse>/cache`): the Claude judges keep
    their response cache under `<cache_dir>/anthropic`. `budget` is the `--max-cost` limit to
    share (pass one `Budget` to every judge of one evaluation so the k runs draw on the same
    limit); without it the Claude judges read `EVALFLOW_MAX_COST_USD`.
    """
    if name == "heuristic":
        return HeuristicJudge()
    if name == "labels":
        from evalflow.judges.labels import LabelsJudge

        return LabelsJudge(labels_path)
    if name in {"anthropic", "hybrid"}:
        require_api_key(name)
        from evalflow.judges.anthropic_judge import ClaudeJudge

        claude = ClaudeJudge(cache_dir=cache_dir, budget=budget)
        if name == "anthropic":
            return claude
        from evalflow.judges.hybrid import HybridJudge

        return HybridJudge(claude)
    raise InputError(f"unknown judge {name!r}", fix=f"use one of: {', '.join(JUDGE_NAMES)}")
