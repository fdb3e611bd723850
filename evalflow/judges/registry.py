"""Judge selection by name (`--judge`, manifest `judge:` key, config).

`heuristic` (offline default), `anthropic` (Claude), `openai` (OpenAI's Responses API, or any
OpenAI-compatible Chat Completions API: Gemini's compatible endpoint, vLLM, Ollama), `hybrid`
(heuristic first, Claude for the rest), `labels` (verdicts from a file), and panels
`panel:<name>,<name>[,<name>]` that split the k scoring runs across judges (`panel`). The
LLM judges need their API key (`ANTHROPIC_API_KEY`; for openai the variable
`EVALFLOW_OPENAI_API_KEY_ENV` names, default `OPENAI_API_KEY`); their modules are imported only
when chosen, so the offline path never loads an SDK or an HTTP client.

Every judge module, the heuristic one included, is imported by its factory (`_FACTORIES`)
only: the CLI's `--judge` option needs the names (`JUDGE_NAMES`, checked against the
factories by a test), and importing the judges for them made every light command that
declares the option pay for the domain models and the heuristic judge.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from evalflow.errors import InputError

if TYPE_CHECKING:
    from evalflow.judges.base import Judge
    from evalflow.judges.cost import Budget

JUDGE_NAMES = ("heuristic", "anthropic", "openai", "hybrid", "labels")
# The `panel:` of `panel:a,b`; evalflow_tests/judges/test_registry.py keeps it equal to
# `evalflow.judges.panel.PANEL_PREFIX`, which this module does not import (pandas, models).
PANEL_PREFIX = "panel:"
# A panel member judges on its own: not a labels file (one per run), not another panel.
PANEL_MEMBERS = ("heuristic", "anthropic", "openai", "hybrid")
MAX_PANEL = 3  # k = 3 runs: a fourth member would never vote


def missing_key(variable: str, where: str, hint: str = "") -> InputError:
    """The one-line error of every LLM-backed command started without its key (exit 2):
    the same words for Claude and OpenAI-compatible judges, drafters and PluginEval."""
    return InputError(
        f"{variable} is not set",
        where=where,
        fix=f"export {variable}=<your key>{hint}, or work offline without one "
        "(--judge heuristic, --drafter offline)",
    )


def require_api_key(where: str) -> str:
    """The Claude API key: the one check every Claude-backed command makes before its first
    call, and the one lookup the SDK client is built with (`anthropic_judge._make_client`).
    No key is one line and exit 2 (the same words everywhere), never an SDK error deep inside
    the run."""
    key = os.environ.get("ANTHROPIC_API_KEY", "").strip()
    if not key:
        raise missing_key("ANTHROPIC_API_KEY", where)
    return key


def panel_members(name: str) -> tuple[str, ...] | None:
    """The member names of `panel:a,b` (validated), or None when `name` is not a panel."""
    if not name.startswith(PANEL_PREFIX):
        return None
    members = tuple(part.strip() for part in name.removeprefix(PANEL_PREFIX).split(","))
    fix = (
        f"name 2 to {MAX_PANEL} different judges of {', '.join(PANEL_MEMBERS)}, "
        "e.g. --judge panel:anthropic,openai"
    )
    unknown = [m for m in members if m not in PANEL_MEMBERS]
    if unknown:
        raise InputError(f"unknown panel member {unknown[0]!r}", where=name, fix=fix)
    if not 2 <= len(members) <= MAX_PANEL or len(set(members)) != len(members):
        raise InputError(f"a panel needs 2 to {MAX_PANEL} different judges", where=name, fix=fix)
    return members


def check_judge_name(name: str) -> str:
    """`name` in canonical form (a panel without spaces), or a one-line InputError."""
    members = panel_members(name.strip())
    if members is not None:
        return PANEL_PREFIX + ",".join(members)
    if name not in JUDGE_NAMES:
        raise InputError(
            f"unknown judge {name!r}",
            fix=f"use one of: {', '.join(JUDGE_NAMES)}, or panel:<judge>,<judge>",
        )
    return name


class JudgeName(click.ParamType):
    """`--judge`: one of JUDGE_NAMES or a panel, checked like the manifest's `judge:`."""

    name = "judge"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None):
        try:
            return check_judge_name(str(value))
        except InputError as exc:
            self.fail(exc.one_line(), param, ctx)

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(JUDGE_NAMES) + "|panel:A,B]"


def _heuristic(
    cache_dir: Path | None, labels_path: Path | None, budget: Budget | None, rejudge: bool
) -> Judge:
    from evalflow.judges.heuristic import HeuristicJudge

    return HeuristicJudge()


def _labels(
    cache_dir: Path | None, labels_path: Path | None, budget: Budget | None, rejudge: bool
) -> Judge:
    from evalflow.judges.labels import LabelsJudge

    return LabelsJudge(labels_path)


def _openai(
    cache_dir: Path | None, labels_path: Path | None, budget: Budget | None, rejudge: bool
) -> Judge:
    from evalflow.judges.openai_judge import OpenAIJudge, OpenAISettings

    settings = OpenAISettings.from_env(rejudge=rejudge)
    return OpenAIJudge(settings, cache_dir=cache_dir, budget=budget)


def _claude(name: str, cache_dir: Path | None, budget: Budget | None, rejudge: bool) -> Judge:
    require_api_key(f"--judge {name}")
    from evalflow.judges.anthropic_judge import ClaudeJudge, ClaudeSettings

    settings = ClaudeSettings.from_env(rejudge=rejudge)
    return ClaudeJudge(settings, cache_dir=cache_dir, budget=budget)


def _anthropic(
    cache_dir: Path | None, labels_path: Path | None, budget: Budget | None, rejudge: bool
) -> Judge:
    return _claude("anthropic", cache_dir, budget, rejudge)


def _hybrid(
    cache_dir: Path | None, labels_path: Path | None, budget: Budget | None, rejudge: bool
) -> Judge:
    from evalflow.judges.hybrid import HybridJudge

    return HybridJudge(_claude("hybrid", cache_dir, budget, rejudge))


# Judge name → factory(cache_dir, labels_path, budget, rejudge); the keys are JUDGE_NAMES
# (tested).
_FACTORIES: dict[str, Callable[[Path | None, Path | None, Budget | None, bool], Judge]] = {
    "heuristic": _heuristic,
    "anthropic": _anthropic,
    "openai": _openai,
    "hybrid": _hybrid,
    "labels": _labels,
}


def make_judge(
    name: str,
    *,
    cache_dir: Path | None = None,
    labels_path: Path | None = None,
    budget: Budget | None = None,
    rejudge: bool = False,
) -> Judge:
    """The judge called `name`.

    `cache_dir` is the warehouse cache root (`<warehouse>/cache`): the LLM judges keep their
    response caches under `<cache_dir>/anthropic` and `<cache_dir>/openai`. `budget` is the
    `--max-cost` limit to share (pass one `Budget` to every judge of one evaluation so the k
    runs — and every member of a panel — draw on the same limit); without it the LLM judges
    read `EVALFLOW_MAX_COST_USD`. `rejudge` (`--rejudge unscored`) makes the LLM judges ask
    again the checks their stored answers left UNSCORED (`cache` module docstring); without
    it an unchanged run replays every stored answer and sends nothing.
    """
    name = check_judge_name(name)
    members = panel_members(name)
    if members is not None:
        from evalflow.judges.panel import PanelJudge

        return PanelJudge(
            [make_judge(m, cache_dir=cache_dir, budget=budget, rejudge=rejudge) for m in members]
        )
    return _FACTORIES[name](cache_dir, labels_path, budget, rejudge)
