"""Judge selection by name (`--judge`, manifest `judge:` key, config)."""

from __future__ import annotations

from evalflow.errors import InputError
from evalflow.judges.base import Judge
from evalflow.judges.heuristic import HeuristicJudge

JUDGE_NAMES = ("heuristic",)


def make_judge(name: str) -> Judge:
    if name == "heuristic":
        return HeuristicJudge()
    raise InputError(f"unknown judge {name!r}", fix=f"use one of: {', '.join(JUDGE_NAMES)}")
