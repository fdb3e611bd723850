"""Two-run leaderboard of the real benchmark lva_conversation_storage: Claude's and Codex's runs.

Owns the one question validate.py cannot answer run by run: does evalflow order the two
agents' builds of the same PRD as the hand gold does? It clones both mirrors safely (as
validate.py does), scores both runs into ONE warehouse with the default judge and into a
second one with each run's gold labels (`--judge labels --labels <run's file>`), exactly as a
user would with `evalflow score` and `evalflow leaderboard`, and prints both leaderboards
(rank, Final, bounds, band, Bradley–Terry rating ± CI, reason when not ranked).

    EVALFLOW_REAL_REPOS_MIRRORS=/work/.mirror .venv/bin/python benchmarks/real_repos/rank_lva.py
    .venv/bin/python benchmarks/real_repos/rank_lva.py --mirror NAME=GIT_DIR ... [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from validate import BENCHMARKS, _evalflow, _fmt, _parse_mirrors, _prepare

from evalflow.errors import EvalflowError, InputError

BENCHMARK = "lva_conversation_storage"
RUNS = tuple(b for b in BENCHMARKS if b.run_key.startswith(BENCHMARK + "."))


def leaderboard(warehouse: Path) -> list[dict[str, Any]]:
    """The benchmark's leaderboard rows as `evalflow leaderboard --json` prints them."""
    rows = json.loads(
        _evalflow("leaderboard", "--benchmark", BENCHMARK, "--warehouse", str(warehouse), "--json")
    )
    return sorted(rows, key=lambda r: r["run_key"])


def rank(mirrors: dict[str, Path]) -> dict[str, list[dict[str, Any]]]:
    for bench in RUNS:
        note = _prepare(bench, mirrors)
        if note:
            raise InputError(f"{bench.name}: {note}")
    with tempfile.TemporaryDirectory(prefix="evalflow-rank-lva-") as tmp:
        judge_wh, gold_wh = Path(tmp) / "heuristic", Path(tmp) / "gold"
        for bench in RUNS:
            manifest = str(bench.manifest)
            _evalflow("score", manifest, "--warehouse", str(judge_wh), "--judge", "heuristic")
            _evalflow(
                "score",
                manifest,
                "--warehouse",
                str(gold_wh),
                "--judge",
                "labels",
                "--labels",
                str(bench.labels),
            )
        return {"judge": leaderboard(judge_wh), "gold": leaderboard(gold_wh)}


def render(boards: dict[str, list[dict[str, Any]]]) -> str:
    lines: list[str] = []
    for side, rows in boards.items():
        lines += [
            f"{side}:",
            "| run | rank | Final [bounds] | band | BT rating [CI] | not ranked because |",
            "|" + "---|" * 6,
        ]
        for r in rows:
            rating = f"{_fmt(r['rating'])} [{_fmt(r['rating_ci_low'])}–{_fmt(r['rating_ci_high'])}]"
            lines.append(
                f"| {r['run_key']} | {_fmt(r['rank'])} "
                f"| {_fmt(r['final'])} [{_fmt(r['final_lower'])}–{_fmt(r['final_upper'])}] "
                f"| {_fmt(r['band'])} | {rating} | {r.get('not_ranked_reason') or ''} |"
            )
        lines.append("")
    return "\n".join(lines).rstrip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", action="append", default=[], help="NAME=GIT_DIR")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    try:
        boards = rank(_parse_mirrors(args.mirror))
    except EvalflowError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    print(json.dumps(boards, indent=2, sort_keys=True) if args.json else render(boards))
    return 0


if __name__ == "__main__":
    sys.exit(main())
