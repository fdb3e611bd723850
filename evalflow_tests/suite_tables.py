"""Synthetic warehouse tables for suite tests: contract-complete frames built from a few
fields per run, so CLI and asset tests need no materialisation."""

from __future__ import annotations

from pathlib import Path
from types import NoneType, UnionType
from typing import Union, get_args, get_origin

import pandas as pd

from evalflow.storage.migration import judge_name_of
from evalflow.storage.tables import TABLES
from evalflow.storage.warehouse import Warehouse

_DEFAULTS = {str: "", int: 0, float: 0.0, bool: False}


def contract_frame(table: str, rows: list[dict]) -> pd.DataFrame:
    """`rows` completed with a neutral value per missing contract column (NULL if nullable)."""
    fields = TABLES[table].model.model_fields
    full = []
    for row in rows:
        values = {}
        for name, field in fields.items():
            annotation = field.annotation
            nullable = get_origin(annotation) in (Union, UnionType) and NoneType in get_args(
                annotation
            )
            default = None if nullable else _DEFAULTS.get(annotation, "")
            values[name] = row.get(name, default)
        full.append(values)
    return pd.DataFrame(full, columns=list(fields))


def suite_runs(judges: dict[str, str] | None = None) -> list[dict]:
    """Two PRDs (p1, p2) × frameworks a, b (two runs each) and c (one run, incomplete on p1)."""
    judges = judges or {}
    runs = []
    for prd in ("p1", "p2"):
        for framework, n_runs, level in (("a", 2, 0.9), ("b", 2, 0.5), ("c", 1, 0.3)):
            for r in range(1, n_runs + 1):
                key = f"{prd}.{framework}.r{r}"
                incomplete = framework == "c" and prd == "p1"
                final = None if incomplete else round(level + 0.02 * r, 2)
                runs.append(
                    {
                        "run_key": key,
                        "benchmark": prd,
                        "framework": framework,
                        "final": final,
                        "ranked": not incomplete,
                        "not_ranked_reason": "incomplete: 1 check unscored" if incomplete else None,
                        "complete": not incomplete,
                        "judge_id": judges.get(key, "heuristic"),
                        "judge_prompt_version": "heuristic-4",
                        "baseline_sha256": f"sha-{prd}",
                        "comparability_key": f"key-{prd}",
                        "framework_cost_usd": 1.0,
                        "judge_cost_usd": 0.0,
                        "level": level + 0.02 * r,
                    }
                )
    return runs


def write_suite_warehouse(root: Path, runs: list[dict]) -> None:
    """leaderboard, ac_score (3 ACs per run), empty majority_vote and run_manifest."""
    wh = Warehouse(str(root))
    # Each run's one result, under the judge its judge_id names.
    runs = [
        {**run, "judge_name": judge_name_of(run.get("judge_id") or "heuristic")} for run in runs
    ]
    board = [{k: v for k, v in run.items() if k != "level"} for run in runs]
    wh.write("leaderboard", contract_frame("leaderboard", board))
    for run in runs:
        judge = run["judge_name"]
        acs = [
            {"run_key": run["run_key"], "judge_name": judge, "story_id": "S1",
             "ac_id": f"S1-AC{i}", "priority": "P0", "weight": 3, "scored": True,
             "ac_score": round(min(1.0, run["level"] - 0.1 * i), 2)}
            for i in range(3)
        ]  # fmt: skip
        wh.write("ac_score", contract_frame("ac_score", acs), run["run_key"])
        wh.write("majority_vote", contract_frame("majority_vote", []), run["run_key"], judge)
        manifest = contract_frame("run_manifest", [])
        wh.write("run_manifest", manifest, run["run_key"], judge)


def write_suite_file(folder: Path, name: str = "s", extra: str = "") -> Path:
    path = folder / f"{name}.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(f"name: {name}\nbenchmarks: [p1, p2]\n{extra}", encoding="utf-8")
    return path
