"""The heuristic judge against the gold labels, check by check, without the pipeline.

`validate.py` scores each run through the CLI and Dagster (minutes per run, also the Final
and the side metrics); this runs only what decides the verdicts — the same `prepare_run`,
snapshot, judge and shared evidence validator as a scoring run (`evalflow.io.evaluation`) —
in seconds, for the counts docs/validity.md reports: decided share, false MET, false UNMET
(check ids), evidence off, and the Final or its bounds by the product's roll-up, beside the
gold's. The heuristic judge is deterministic, so one run stands for k.

    EVALFLOW_REAL_REPOS_MIRRORS=/work/.mirror \
        .venv/bin/python benchmarks/real_repos/judge_only.py [NAME ...]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pandas as pd
from validate import BENCHMARKS, _gold_labels, _prepare, compare

from evalflow.domain.rollup import rollup
from evalflow.io.evaluation import (
    checks_frame,
    open_snapshot,
    prepare_run,
    score_run,
    stories_frame,
)
from evalflow.judges.heuristic import HeuristicJudge


def _bounds(prepared, statuses: dict[str, str]) -> str:
    """Final (or its bounds when undetermined) by the product's own roll-up."""
    votes = pd.DataFrame(
        [{"run_key": "r", "check_id": c, "majority": s} for c, s in statuses.items()]
    )
    bench = prepared.benchmark
    final = rollup(votes, checks_frame(bench.baseline), stories_frame(bench.prd)).final.iloc[0]
    if bool(final["complete"]):
        return f"{final['final']:.2f}"
    return f"NULL [{final['final_lower']:.2f}-{final['final_upper']:.2f}]"


def main(names: list[str]) -> int:
    for bench in BENCHMARKS:
        if names and bench.name not in names:
            continue
        note = _prepare(bench, {})
        if note:
            print(f"{bench.name}: {note}")
            continue
        with tempfile.TemporaryDirectory(prefix="evalflow-judge-only-") as tmp:
            prepared = prepare_run(bench.manifest, Path(tmp))
            verdicts = score_run(prepared, HeuristicJudge(), 1, open_snapshot(prepared))
        gold = _gold_labels(bench.labels)
        judge = {
            v.check_id: {"status": v.status, "evidence": [e.model_dump() for e in v.evidence]}
            for v in verdicts
        }
        r = compare(judge, gold)
        print(
            f"{bench.name}: decided {r['decided']}/{r['checks']}, "
            f"false MET {r['false_met'] or 0}, false UNMET {r['false_unmet'] or 0}, "
            f"evidence off {r['evidence_off'] or 0}, "
            f"Final {_bounds(prepared, {c: v['status'] for c, v in judge.items()})} "
            f"(gold {_bounds(prepared, {c: v['status'] for c, v in gold.items()})})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
