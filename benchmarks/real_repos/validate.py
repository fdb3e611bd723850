"""Real-world validation: the default (heuristic) judge against hand-made gold labels.

For each validation benchmark (docs/validity.md) this scores the framework run twice through
the CLI, into a throw-away warehouse: once with the default judge, once with the gold labels
(`--judge labels`, which must reproduce the hand-computed gold Final). It then compares
verdicts check by check and prints, per benchmark:

- decided share: checks the judge answered MET or UNMET / all checks;
- agreement: on the decided checks, the share where the judge's verdict equals the gold one;
- false MET (judge MET, gold UNMET) and false UNMET (judge UNMET, gold MET), with check ids;
- evidence off: MET on both sides, but no file range of the judge overlaps the gold's;
- by running: MET on both sides, proven only by a `run` probe (behaviour, no file line to
  compare with the gold's);
- Final as the product reports it (value and bounds) beside the gold Final;
- the side metrics the product stores (S verdict, E recall and precision) beside the hand
  adjudication in the benchmark's `gold/side_metrics.yaml`.

The vendored benchmark (hello_spec_kit) always runs, offline, from its git bundle. The others
run only when their fetched mirror exists: `--mirror NAME=GIT_DIR`, or
`EVALFLOW_REAL_REPOS_MIRRORS=DIR` holding `<owner>+<repo>/repo` as the `fetch` tool lays it
out; otherwise they are skipped with a note. A mirror is never used in place: it is cloned
with `evalflow.io.real_repos.safe_clone` (no working tree, no config or hooks of its own). No
gate runs: the manifests have none. A benchmark whose baseline has `run` probes (task_planner)
executes the fetched code only there, inside evalflow's gate sandbox (setup with registry
access only, then offline), never on the host.

Run from the repository root:

    .venv/bin/python benchmarks/real_repos/validate.py [--only NAME] [--mirror NAME=DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from evalflow.errors import EvalflowError, InputError
from evalflow.io.real_repos import derived_clone, has_commit, safe_clone, vendored_checkout

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MIRRORS_ENV = "EVALFLOW_REAL_REPOS_MIRRORS"
_CLI = "import sys; from evalflow.cli import main; sys.exit(main())"


@dataclass(frozen=True)
class Benchmark:
    name: str
    manifest: Path
    labels: Path
    side_gold: Path | None
    run_key: str
    vendored: str | None = None  # name in evalflow.io.real_repos.VENDORED
    mirror: str | None = None  # "<owner>+<repo>" as laid out by the fetch tool
    pin: str | None = None  # head commit the mirror (or the derived repository) must contain
    # A mirror lacking some blobs (its largest files) cannot be cloned: the benchmark then reads
    # a repository derived from it, holding only these pathspecs of these source commits.
    derive_paths: tuple[str, ...] = ()
    derive_commits: tuple[str, ...] = ()

    def checkout(self) -> Path:
        return self.manifest.parent.parent / "checkout"


BENCHMARKS = (
    Benchmark(
        name="hello_spec_kit",
        manifest=ROOT / "data/benchmarks/hello_spec_kit/runs/speckit-f002.yaml",
        labels=ROOT / "data/benchmarks/hello_spec_kit/gold/speckit-f002.labels.yaml",
        side_gold=ROOT / "data/benchmarks/hello_spec_kit/gold/side_metrics.yaml",
        run_key="hello_spec_kit.speckit.f002",
        vendored="hello_spec_kit",
    ),
    Benchmark(
        name="local_voice_assistant_claude",
        manifest=HERE / "local_voice_assistant_claude/runs/claude-f006.yaml",
        labels=HERE / "local_voice_assistant_claude/gold/claude-f006.labels.yaml",
        side_gold=HERE / "local_voice_assistant_claude/gold/side_metrics.yaml",
        run_key="lva_conversation_storage.claude-code.f006",
        mirror="0h-n0+local-voice-assistant-claude",
        pin="3362d48cba73eb982f5c15b40c7abf16d720141a",
    ),
    # The second run of the same benchmark (same PRD digest and frozen baseline, which its
    # manifest references in local_voice_assistant_claude/); rank_lva.py ranks the two.
    Benchmark(
        name="local_voice_assistant_codex",
        manifest=HERE / "local_voice_assistant_codex/runs/codex-f001.yaml",
        labels=HERE / "local_voice_assistant_codex/gold/codex-f001.labels.yaml",
        side_gold=HERE / "local_voice_assistant_codex/gold/side_metrics.yaml",
        run_key="lva_conversation_storage.codex.f001",
        mirror="0h-n0+local-voice-assistant-codex",
        pin="b4e61fdd38a33b21c4cbfa3bf10a6c63ec0f0b28",
    ),
    # Three agents, one PRD (lva_llm_service/): the same LLM-service request built by Claude
    # Code, Codex and Gemini CLI, judged by one frozen baseline written against the PRD. The
    # side metrics of these runs are not adjudicated (no side gold).
    *(
        Benchmark(
            name=f"lva_llm_service_{agent}",
            manifest=HERE / f"lva_llm_service/{agent}/runs/{run}.yaml",
            labels=HERE / f"lva_llm_service/{agent}/gold/{run}.labels.yaml",
            side_gold=None,
            run_key=run_key,
            mirror=f"0h-n0+local-voice-assistant-{agent}",
            pin=pin,
        )
        for agent, run, run_key, pin in (
            (
                "claude",
                "claude-f003",
                "lva_llm_service.claude-code.f003",
                "aa6d1e374d1088224811491e2430afed2bb3f7e2",
            ),
            (
                "codex",
                "codex-f001",
                "lva_llm_service.codex.f001",
                "b130de68664c75418a872db703206e8940266558",
            ),
            (
                "gemini",
                "gemini-f003",
                "lva_llm_service.gemini-cli.f003",
                "361573e99e5a4d6f4440eb83f90845b9e56258c7",
            ),
        )
    ),
    # One repository, one folder per SDD framework (task_planner/): the same brief built with
    # spec-kit and with the B-MAD Method side by side; each run is confined to its folder.
    *(
        Benchmark(
            name=f"task_planner_{framework}",
            manifest=HERE / f"task_planner/{framework}/runs/{framework}-demo.yaml",
            labels=HERE / f"task_planner/{framework}/gold/{framework}-demo.labels.yaml",
            side_gold=None,
            run_key=f"task_planner.{framework}.demo",
            mirror="chimera-defi+Etc-mono-repo",
            # The mirror lacks the committed node_modules' largest blobs; ai_experiments/
            # without node_modules/ at base b952e8f and head b149c0e is everything the PRD needs.
            pin="a292d4e63632b2973a4ae78e3c12c7abea33ddce",
            derive_paths=("ai_experiments", ":(exclude,glob)**/node_modules/**"),
            derive_commits=(
                "b952e8f396d6017a9a5f5e20ddb44d5d00e6d644",
                "b149c0e9f60ba5f5ab06126899ddb041f831f469",
            ),
        )
        for framework in ("speckit", "bmad")
    ),
    # Four coding agents, one brief, one folder each (papertrail/): use case 01 of
    # pyros-projects/agent-comparison; each run is confined to its agent's folder.
    *(
        Benchmark(
            name=f"papertrail_{short}",
            manifest=HERE / f"papertrail/{short}/runs/{short}.yaml",
            labels=HERE / f"papertrail/{short}/gold/{short}.labels.yaml",
            side_gold=None,
            run_key=f"papertrail.{framework}.r1",
            mirror="pyros-projects+agent-comparison",
            # The mirror lacks the largest blobs (chat replays, screenshots, data dumps); the use
            # case's folder without them at 07d67e2 (brief only) and ac39de9 (HEAD) is all the
            # PRD needs.
            pin="179c76c5532ad02e5579574379958395ad6b412e",
            derive_paths=(
                "01-research-scraper",
                ":(exclude,glob)**/*.chatreplay.json",
                ":(exclude,glob)**/data/**",
                ":(exclude,glob)**/*.png",
                ":(exclude,glob)**/node_modules/**",
            ),
            derive_commits=(
                "07d67e2091d6355dc8c6b89750f985bbb3da3e6b",
                "ac39de9d40fc55affa16124da48308277400fb10",
            ),
        )
        for short, framework in (
            ("gpt51codex", "copilot-gpt51codex"),
            ("opus45", "copilot-opus45"),
            ("sonnet45", "copilot-sonnet45"),
            ("kimik2", "cursor-kimik2"),
        )
    ),
)


def _evalflow(*args: str) -> str:
    """Run one evalflow command in a child process; its one-line error becomes ours."""
    env = {k: v for k, v in os.environ.items() if k not in ("EVALFLOW_JUDGE", "EVALFLOW_LABELS")}
    # A neutral working directory: `python -c` puts it first on sys.path, and the checkout's
    # own `evalflow/` must not shadow the interpreter's (a PYTHONPATH snapshot, when given).
    with tempfile.TemporaryDirectory(prefix="evalflow-validity-cwd-") as cwd:
        done = subprocess.run(
            [sys.executable, "-c", _CLI, *args],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env,
            check=False,
        )
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise InputError(
            f"evalflow {args[0]} failed: {lines[-1] if lines else 'exit ' + str(done.returncode)}"
        )
    return done.stdout


def _query(warehouse: Path, sql: str) -> list[dict[str, Any]]:
    return json.loads(_evalflow("query", sql, "--warehouse", str(warehouse), "--json"))


def _score(bench: Benchmark, warehouse: Path, judge: str, *extra: str) -> dict[str, Any]:
    """The leaderboard row of the benchmark's run as scored by `judge` (a warehouse keeps
    every judge's result of a run side by side: the row is chosen by run and judge)."""
    out = _evalflow(
        "score", str(bench.manifest), "--warehouse", str(warehouse), "--json", "--judge", judge,
        *extra,
    )  # fmt: skip
    rows = [
        r
        for r in json.loads(out)
        if r.get("run_key") == bench.run_key and r.get("judge_name") == judge
    ]
    if not rows:
        raise InputError(f"evalflow score printed no row for {bench.run_key} judged by {judge}")
    return rows[0]


def _of(run_key: str, judge: str) -> str:
    """The rows of one run as scored by one judge (docs/tables.md: filter on `judge_name`)."""
    return f"run_key = '{run_key}' AND judge_name = '{judge}'"


def _verdicts(warehouse: Path, run_key: str, judge: str) -> dict[str, dict[str, Any]]:
    """Majority verdict and run-1 evidence per check of `judge`, as stored by the product."""
    majority = _query(
        warehouse, f"SELECT check_id, majority FROM majority_vote WHERE {_of(run_key, judge)}"
    )
    evidence = _query(
        warehouse, f"SELECT check_id, evidence FROM scoring_run_1 WHERE {_of(run_key, judge)}"
    )
    by_id: dict[str, dict[str, Any]] = {
        row["check_id"]: {"status": row["majority"], "evidence": []} for row in majority
    }
    for row in evidence:
        raw = row["evidence"]
        items = json.loads(raw) if isinstance(raw, str) else (raw or [])
        if row["check_id"] in by_id:
            by_id[row["check_id"]]["evidence"] = items
    return by_id


def _side(warehouse: Path, run_key: str, judge: str) -> dict[str, Any]:
    scope = _query(warehouse, f"SELECT * FROM scope_summary WHERE {_of(run_key, judge)}")
    elic = _query(warehouse, f"SELECT * FROM elicitation_summary WHERE {_of(run_key, judge)}")
    s = scope[0] if scope else {}
    e = elic[0] if elic else {}
    skip = {"run_key", "fingerprint"}
    return {
        "scope_status": s.get("status"),
        "scope_verdict": s.get("verdict"),
        "e_status": e.get("status"),
        "e_recall": e.get("e_recall"),
        "e_precision": e.get("e_precision"),
        # Everything else the product stores (counts, reasons), for the JSON output.
        "scope_row": {k: v for k, v in s.items() if k not in skip},
        "elicitation_row": {k: v for k, v in e.items() if k not in skip},
    }


def _files(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The file ranges of a verdict's evidence (a `run` probe's evidence has none)."""
    return [e for e in evidence if e.get("kind") != "run" and "path" in e]


def _overlaps(judge: list[dict[str, Any]], gold: list[dict[str, Any]]) -> bool:
    for j in _files(judge):
        for g in gold:
            if j.get("path") == g["path"] and not (
                j["end_line"] < g["start_line"] or j["start_line"] > g["end_line"]
            ):
                return True
    return False


def compare(judge: dict[str, dict[str, Any]], gold: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Check-by-check comparison of the judge's verdicts with the gold ones."""
    missing = sorted(set(gold) - set(judge))
    if missing:
        raise InputError(f"the judge stored no verdict for {', '.join(missing)}")
    ids = sorted(gold)
    decided = [c for c in ids if judge[c]["status"] in ("MET", "UNMET")]
    agree = [c for c in decided if judge[c]["status"] == gold[c]["status"]]
    false_met = [c for c in decided if judge[c]["status"] == "MET" and gold[c]["status"] == "UNMET"]
    false_unmet = [
        c for c in decided if judge[c]["status"] == "UNMET" and gold[c]["status"] == "MET"
    ]
    both_met = [c for c in decided if judge[c]["status"] == gold[c]["status"] == "MET"]
    by_running = [c for c in both_met if not _files(judge[c]["evidence"])]
    evidence_off = [
        c
        for c in both_met
        if c not in by_running and not _overlaps(judge[c]["evidence"], gold[c]["evidence"])
    ]
    return {
        "checks": len(ids),
        "decided": len(decided),
        "decided_share": len(decided) / len(ids) if ids else None,
        "agreement": len(agree) / len(decided) if decided else None,
        "false_met": false_met,
        "false_unmet": false_unmet,
        "evidence_off": evidence_off,
        "by_running": by_running,
        "unscored": [c for c in ids if c not in decided],
        # What the judge cited where it went wrong, for the write-up.
        "judge_evidence": {
            c: [f"{e.get('path')}:{e.get('start_line')}" for e in _files(judge[c]["evidence"])]
            for c in false_met + evidence_off
        },
    }


def _gold_labels(path: Path) -> dict[str, dict[str, Any]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {
        v["check_id"]: {"status": v["status"], "evidence": v.get("evidence") or []}
        for v in data["verdicts"]
    }


def _prepare(bench: Benchmark, mirrors: dict[str, Path]) -> str | None:
    """Make the benchmark's clone; return a skip note when its source is not here."""
    if bench.vendored:
        vendored_checkout(bench.vendored)
        return None
    assert bench.mirror and bench.pin
    source = mirrors.get(bench.name)
    if source is None and os.environ.get(MIRRORS_ENV):
        source = Path(os.environ[MIRRORS_ENV]) / bench.mirror / "repo"
    if source is None or not source.exists():
        where = source or f"--mirror {bench.name}=GIT_DIR or {MIRRORS_ENV}"
        return f"skipped: no fetched mirror ({where}); see {bench.manifest.parent.parent}/fetch.md"
    if bench.derive_paths:
        if not bench.checkout().exists() or not has_commit(bench.checkout(), bench.pin):
            _, derived = derived_clone(
                source, bench.checkout(), commits=bench.derive_commits, paths=bench.derive_paths
            )
            if derived[-1] != bench.pin:
                raise InputError(f"{bench.name}: derived head {derived[-1]} is not {bench.pin}")
        return None
    safe_clone(source, bench.checkout(), pin=bench.pin)
    return None


def validate(bench: Benchmark, mirrors: dict[str, Path]) -> dict[str, Any]:
    note = _prepare(bench, mirrors)
    if note:
        return {"benchmark": bench.name, "skipped": note}
    gold = _gold_labels(bench.labels)
    side_gold = (
        yaml.safe_load(bench.side_gold.read_text(encoding="utf-8")) if bench.side_gold else None
    )
    with tempfile.TemporaryDirectory(prefix="evalflow-validity-") as tmp:
        heur_wh, gold_wh = Path(tmp) / "heuristic", Path(tmp) / "gold"
        heur = _score(bench, heur_wh, "heuristic")
        judge = _verdicts(heur_wh, bench.run_key, "heuristic")
        side = _side(heur_wh, bench.run_key, "heuristic")
        gold_row = _score(bench, gold_wh, "labels", "--labels", str(bench.labels))
    result: dict[str, Any] = {"benchmark": bench.name, "run_key": bench.run_key}
    result.update(compare(judge, gold))
    result["final"] = {
        "judge": heur.get("final"),
        "judge_lower": heur.get("final_lower"),
        "judge_upper": heur.get("final_upper"),
        "judge_complete": heur.get("complete"),
        "gold": gold_row.get("final"),
        "gold_complete": gold_row.get("complete"),
    }
    result["side_metrics"] = {
        "judge": side,
        "gold": {
            "scope_verdict": side_gold["scope"]["verdict"] if side_gold else None,
            "e_recall": side_gold["elicitation"]["e_recall"] if side_gold else None,
            "e_precision": side_gold["elicitation"]["e_precision"] if side_gold else None,
        },
    }
    return result


def _fmt(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def render(results: list[dict[str, Any]]) -> str:
    head = (
        "| benchmark | checks | decided | agreement | false MET | false UNMET | evidence off "
        "| by running "
        "| Final judge [bounds] | Final gold | S judge / gold | E_recall judge / gold "
        "| E_precision judge / gold |"
    )
    lines = [head, "|" + "---|" * 13]
    notes: list[str] = []
    for r in results:
        if "skipped" in r:
            lines.append(f"| {r['benchmark']} | {r['skipped']} |" + " |" * 11)
            continue
        f, s = r["final"], r["side_metrics"]
        sj, sg = s["judge"], s["gold"]
        lines.append(
            f"| {r['benchmark']} | {r['checks']} | {r['decided']} ({_fmt(r['decided_share'])}) "
            f"| {_fmt(r['agreement'])} | {len(r['false_met'])} | {len(r['false_unmet'])} "
            f"| {len(r['evidence_off'])} | {len(r['by_running'])} "
            f"| {_fmt(f['judge'])} [{_fmt(f['judge_lower'])}–{_fmt(f['judge_upper'])}] "
            f"| {_fmt(f['gold'])} "
            f"| {_fmt(sj['scope_verdict'])} ({_fmt(sj['scope_status'])}) / {sg['scope_verdict']} "
            f"| {_fmt(sj['e_recall'])} / {_fmt(sg['e_recall'])} "
            f"| {_fmt(sj['e_precision'])} / {_fmt(sg['e_precision'])} |"
        )
        for key, label in (
            ("false_met", "false MET"),
            ("false_unmet", "false UNMET"),
            ("evidence_off", "MET, evidence elsewhere"),
            ("unscored", "UNSCORED"),
        ):
            if r[key]:
                notes.append(f"{r['benchmark']}: {label}: {', '.join(r[key])}")
    return "\n".join(lines + (["", *notes] if notes else []))


def _parse_mirrors(values: list[str]) -> dict[str, Path]:
    known = {b.name for b in BENCHMARKS}
    out: dict[str, Path] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or name not in known:
            raise InputError(
                f"bad --mirror {value!r}", fix=f"use NAME=GIT_DIR, NAME one of {sorted(known)}"
            )
        out[name] = Path(path)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], help="benchmark name (repeat)")
    parser.add_argument("--mirror", action="append", default=[], help="NAME=GIT_DIR")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    try:
        mirrors = _parse_mirrors(args.mirror)
        chosen = [b for b in BENCHMARKS if not args.only or b.name in args.only]
        if not chosen:
            raise InputError(
                f"no benchmark named {args.only}", fix=f"one of {[b.name for b in BENCHMARKS]}"
            )
        results = [validate(b, mirrors) for b in chosen]
    except EvalflowError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    print(json.dumps(results, indent=2, sort_keys=True) if args.json else render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
