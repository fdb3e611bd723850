"""Benchmark PluginEval quick scoring: batch throughput and single-skill CLI wall time.

Generates 500 skills deterministically into a temp dir and reports (median of repeats):

* in-process batch quick scoring (read → parse → static → composite → JSON), skills/s,
  target ≥ 300/s, against a naive baseline that re-reads and re-parses SKILL.md for every
  sub-check (the same work done 7× per skill);
* one process per skill (how the public tool is used in a loop) vs one batch process;
* single-skill CLI wall time via subprocess, target < 0.5 s, for
  `python -m evalflow.cli.plugin` and, when installed beside the interpreter, `evalflow plugin`;
* with `--public-repo <checkout of wshobson/agents>` (docs/plugineval.md names the commit):
  quick scoring of every skill under its `plugins/`, CPU seconds in this process, evalflow
  (its own mode and `--compat public`) against the public tool's `EvalEngine` (imported from
  `plugins/plugin-eval/src`); prints the ratio, target ≥ 2× (issue 33).

Run: `.venv/bin/python benchmarks/bench_plugineval.py [--quick] [--smoke] [--public-repo DIR]`
(any interpreter with evalflow installed; subprocesses use the same one) from the repository
root.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from evalflow.domain.plugineval.antipatterns import anti_pattern_penalty, detect_anti_patterns
from evalflow.domain.plugineval.composite import blend_dimensions, composite_score
from evalflow.domain.plugineval.evaluate import EvalOptions
from evalflow.domain.plugineval.parser import parse_skill
from evalflow.domain.plugineval.report import batch_dict, report_dict
from evalflow.domain.plugineval.static import STATIC_TO_DIMENSION, SUB_CHECKS
from evalflow.io.plugineval import (
    discover_skills,
    evaluate_path,
    existing_targets,
    read_skill_files,
)

ROOT = Path(__file__).resolve().parents[1]
# The interpreter running this benchmark, and the console script installed beside it: a
# worktree or a checkout elsewhere has no `.venv` of its own.
PYTHON = Path(sys.executable)
EVALFLOW = PYTHON.with_name("evalflow")
DEMO_SKILL = ROOT / "data" / "demo" / "skills" / "speckit" / "spec-writer"

TOPICS = ("specs", "plans", "tasks", "reviews", "migrations", "tests", "releases", "docs")


def generate(root: Path, n: int, seed: int = 0) -> None:
    """n skills with varied length, sections, code, links, references and anti-patterns."""
    rng = np.random.default_rng(seed)
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        skill = root / f"plugin-{i % 25:02d}" / "skills" / f"skill-{i:03d}"
        skill.mkdir(parents=True)
        trigger = "Use when" if rng.random() < 0.7 else "Helps with"
        desc = f"{trigger} writing {topic}, when reviewing {topic}, or for planning work #{i}."
        lines = [f"---\nname: skill-{i:03d}\ndescription: {desc}\n---", f"# Skill {i}"]
        for s in range(int(rng.integers(2, 12))):
            lines.append(f"## Section {s} about {topic}")
            lines += [
                f"Line {s}.{k}: explain {topic} step {k}." for k in range(rng.integers(5, 60))
            ]
            if rng.random() < 0.5:
                lines += ["```python", f"print('{topic} {s}')", "```"]
            if rng.random() < 0.2:
                lines.append("You MUST do this. NEVER do that. ALWAYS check.")
        if rng.random() < 0.5:
            refs = skill / "references"
            refs.mkdir()
            (refs / "guide.md").write_text(f"# Guide to {topic}\n" * 20)
            lines.append("See [the guide](references/guide.md#start) and skills/skill-000.")
        if rng.random() < 0.1:
            lines.append("Broken [link](references/missing.md).")
        lines.append("## Related\nSee also the other skills.")
        (skill / "SKILL.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def batch_quick(root: Path) -> int:
    """What `plugin score DIR --depth quick --json` does, in process."""
    evaluations, _ = evaluate_path(root, EvalOptions(depth="quick"))
    json.dumps(batch_dict([report_dict(ev) for ev in evaluations], None))
    return len(evaluations)


def naive_quick(root: Path) -> int:
    """Baseline: every sub-check and the anti-pattern scan re-read and re-parse SKILL.md."""
    skill_dirs, _ = discover_skills(root)
    for skill_dir in skill_dirs:
        resolve = existing_targets(skill_dir)
        sub = {}
        for name, check in SUB_CHECKS.items():
            sub[name] = check(parse_skill(read_skill_files(skill_dir)))
        parsed = parse_skill(read_skill_files(skill_dir))
        anti, _ = detect_anti_patterns(parsed, resolve(parsed))
        dims = blend_dimensions({"static": {STATIC_TO_DIMENSION[k]: v for k, v in sub.items()}})
        composite_score({d: s.score for d, s in dims.items()}, anti_pattern_penalty(len(anti)))
    return len(skill_dirs)


def timed(fn: Callable[[Path], int], *args: Path) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def wall(cmd: list[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, cwd=ROOT, check=False)
    return time.perf_counter() - t0, proc.returncode


def cpu_median(fn: Callable[[], object], repeats: int) -> float:
    """Median CPU seconds of this process over `repeats` calls of `fn`, after one warm-up."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def against_public(repo: Path, repeats: int) -> None:
    """Quick scoring of the public repository's own skills: evalflow vs the public tool."""
    plugins = repo / "plugins"
    sys.path.insert(0, str(plugins / "plugin-eval" / "src"))
    from plugin_eval.engine import EvalEngine  # type: ignore[import-not-found]
    from plugin_eval.models import Depth, EvalConfig  # type: ignore[import-not-found]

    skills = sorted(p.parent for p in plugins.rglob("SKILL.md"))
    engine = EvalEngine(EvalConfig(depth=Depth.QUICK))
    public = cpu_median(lambda: [engine.evaluate_skill(s) for s in skills], repeats)
    ours = cpu_median(lambda: evaluate_path(plugins, EvalOptions(depth="quick")), repeats)
    compat = cpu_median(
        lambda: evaluate_path(plugins, EvalOptions(depth="quick", compat="public")), repeats
    )
    print(f"quick scoring of the public repository's {len(skills)} skills, CPU ({repeats} repeats)")
    print(f"  public tool (EvalEngine)  : {public:.3f} s")
    for label, seconds in (("evalflow", ours), ("evalflow --compat public", compat)):
        verdict = "met" if public / seconds >= 2 else "MISSED"
        print(f"  {label:26}: {seconds:.3f} s  ({public / seconds:.2f}x; target >= 2x: {verdict})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer repeats and skills")
    ap.add_argument("--smoke", action="store_true", help="50 skills, 1 repeat (CI)")
    ap.add_argument("--public-repo", type=Path, help="a checkout of wshobson/agents")
    args = ap.parse_args()
    n_skills = 50 if args.smoke else 500
    repeats = 1 if args.smoke else 3 if args.quick else 7
    cli_repeats = 1 if args.smoke else 3 if args.quick else 7
    per_process_n = 3 if args.smoke else 10 if args.quick else 25

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generate(root, n_skills)
        assert batch_quick(root) == n_skills  # warm the page cache and imports

        fast = [timed(batch_quick, root) for _ in range(repeats)]
        naive = [timed(naive_quick, root) for _ in range(repeats)]
        fast_med, naive_med = statistics.median(fast), statistics.median(naive)
        print(f"quick scoring, {n_skills} generated skills, one process ({repeats} repeats)")
        print(
            f"  evalflow batch : median {fast_med * 1000:8.1f} ms  -> "
            f"{n_skills / fast_med:7.0f} skills/s  (target >= 300/s)"
        )
        print(
            f"  naive baseline : median {naive_med * 1000:8.1f} ms  -> "
            f"{n_skills / naive_med:7.0f} skills/s  (re-read + re-parse per sub-check)"
        )
        print(f"  speed-up vs naive: {naive_med / fast_med:.2f}x")

        skill_dirs, _ = discover_skills(root)
        sample = skill_dirs[:per_process_n]
        t0 = time.perf_counter()
        for d in sample:
            subprocess.run(
                [
                    str(PYTHON),
                    "-m",
                    "evalflow.cli.plugin",
                    "score",
                    str(d),
                    "--depth",
                    "quick",
                    "--json",
                ],
                capture_output=True,
                cwd=ROOT,
                check=True,
            )
        per_proc = (time.perf_counter() - t0) / len(sample)
        batch_proc, rc = wall(
            [
                str(PYTHON),
                "-m",
                "evalflow.cli.plugin",
                "score",
                str(root),
                "--depth",
                "quick",
                "--json",
            ]
        )
        print(
            f"one process per skill ({len(sample)} skills): {per_proc * 1000:.0f} ms/skill "
            f"-> {1 / per_proc:.1f} skills/s"
        )
        print(
            f"one batch process ({n_skills} skills, rc={rc}): {batch_proc:.2f} s "
            f"-> {n_skills / batch_proc:.0f} skills/s  ({per_proc * n_skills / batch_proc:.0f}x)"
        )

    single = [str(DEMO_SKILL), "--depth", "quick", "--output", "json"]
    module_times = [
        wall([str(PYTHON), "-m", "evalflow.cli.plugin", "score", *single])
        for _ in range(cli_repeats)
    ]
    base = [wall([str(PYTHON), "-c", "pass"])[0] for _ in range(cli_repeats)]
    print(f"single-skill CLI wall time ({cli_repeats} runs, target < 0.5 s)")
    print(
        f"  python -m evalflow.cli.plugin score : median "
        f"{statistics.median(t for t, _ in module_times):.3f} s "
        f"(rc={module_times[0][1]}; bare interpreter {statistics.median(base):.3f} s)"
    )
    if not EVALFLOW.exists():
        print(f"  evalflow plugin score               : not available (no {EVALFLOW})")
    else:
        entry = [wall([str(EVALFLOW), "plugin", "score", *single]) for _ in range(cli_repeats)]
        status = f"rc={entry[0][1]}" if entry[0][1] else "median"
        print(
            f"  evalflow plugin score               : {status} "
            f"{statistics.median(t for t, _ in entry):.3f} s"
        )
    if args.public_repo is not None:
        against_public(args.public_repo, repeats)
    else:
        print("public tool: not compared (give --public-repo, a checkout of wshobson/agents)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
