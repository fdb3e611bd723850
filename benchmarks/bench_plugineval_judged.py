"""Benchmark PluginEval's judged layers (triggering F1 judge, judged Elo) on real skills.

Runs what a user runs, one `evalflow plugin certify SKILL` process per skill, against the
public PluginEval repository's own skills (`wshobson/agents` at 367cb6a, MIT, extracted to
`--plugins`; its text is only read, never run):

1. `evalflow plugin init PLUGINS --corpus-dir CORPUS` (timed);
2. for a seeded sample of `--skills M` skills, `certify SKILL --corpus-dir CORPUS --judge
   anthropic --json` with ANTHROPIC_BASE_URL pointed at `FakeAnthropic` (the test package's
   local fake Messages API), a cold response cache (a fresh warehouse per repeat);
3. the same skills offline (`certify` without a judge: static-score Elo) as the baseline, in
   the same repeat, and the judged run again with the warm cache (the replay);
4. the whole corpus in one batch `certify PLUGINS` process (2 opponents, 1 Monte Carlo run),
   cold and replayed, to find any skill the judged path crashes on, refuses or leaves out.

The fake answers from the request text, deterministically: the plugin report says
would_trigger when a test prompt shares a word of 5+ letters with the skill's description,
rubric scores 0.5; the skill-vs-skill judge prefers the shorter SKILL.md, except for pairs
whose content hash falls in one quarter, where it always answers "first" (position bias, so
order disagreements are exercised). The Monte Carlo layer stays offline (`--mc-backend`
default). So the figures measure mechanics, request counts, cost accounting, the response
cache and determinism on real text sizes, not judge quality.

Checked, exit 1 on failure: every certify exits 0, the calls (sent + answered from the
cache) are 1 + 2 × opponents per skill, the CLI's reported $ equals the fake's usages priced
by hand, the replay sends 0 requests and prints the same JSON (layer `duration_ms` aside),
every cold repeat prints the same JSON, and in the whole-corpus pass every skill has a
measured F1 and a judged Elo with no opponent left out.

Run: `.venv/bin/python benchmarks/bench_plugineval_judged.py [--skills M] [--repeats R]`
from the repository root, after extracting the snapshot (`mkdir -p /tmp/s4_agents`, then
`git --git-dir=/work/.mirror/wshobson+agents/repo archive 367cb6a plugins | tar -x -C
/tmp/s4_agents`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the fake API lives in the test package

from evalflow.judges.claude_plugin import REPORT_TOOL_NAME  # noqa: E402
from evalflow.judges.claude_skill_pairwise import PREFERENCE_TOOL_NAME  # noqa: E402
from evalflow.judges.cost import load_prices  # noqa: E402
from evalflow.judges.prompt import UNTRUSTED_CLOSE, UNTRUSTED_OPEN  # noqa: E402
from evalflow_tests.judges.fake_anthropic import (  # noqa: E402
    TEST_KEY,
    FakeAnthropic,
    Reply,
    Turn,
    tool_use,
)

# The console script installed beside this interpreter: a worktree has no `.venv` of its own.
EVALFLOW = Path(sys.executable).with_name("evalflow")
DEFAULT_PLUGINS = Path("/tmp/s4_agents/plugins")

_WORD = re.compile(r"[a-z]{5,}")
_USAGE = re.compile(r"anthropic: (\d+) API call\(s\), (\d+) from cache, \$([0-9.]+) spent")
_SKILL_TEXT = re.compile(
    re.escape(UNTRUSTED_OPEN) + r"\n(.*?)\n" + re.escape(UNTRUSTED_CLOSE), re.DOTALL
)


def _first_text(turn: Turn) -> str:
    return "\n".join(b.get("text", "") for b in turn.body["messages"][0]["content"])


def _between(text: str, open_tag: str, close_tag: str) -> str:
    return text.split(open_tag, 1)[1].split(close_tag, 1)[0]


def respond(turn: Turn) -> Reply:
    """The deterministic stand-in for Claude (module docstring)."""
    tool = turn.body["tools"][0]["name"]
    text = _first_text(turn)
    if tool == REPORT_TOOL_NAME:
        words = set(_WORD.findall(_between(text, "<description>", "</description>").lower()))
        # The prompts come last: rsplit, so a skill quoting the tag cannot shift the block.
        block = text.rsplit("<test_prompts>", 1)[1].split("</test_prompts>", 1)[0]
        prompts = re.findall(r"^(\d+)\. (.*)$", block, re.MULTILINE)
        payload = {
            "predictions": [
                {"index": int(i), "would_trigger": bool(words & set(_WORD.findall(p.lower())))}
                for i, p in prompts
            ],
            "orchestration_fitness": 0.5,
            "output_quality": 0.5,
            "scope_calibration": 0.5,
            "rationale": "scripted",
        }
        return Reply([tool_use(REPORT_TOOL_NAME, payload, turn)])
    assert tool == PREFERENCE_TOOL_NAME, tool
    first, second = _SKILL_TEXT.findall(text)
    pair = hashlib.sha256("\0".join(sorted((first, second))).encode()).digest()
    if pair[0] % 4 == 0:
        preference = "first"  # position bias: the two orders disagree
    elif len(first) == len(second):
        preference = "tie"
    else:
        preference = "first" if len(first) < len(second) else "second"
    payload = {"preference": preference, "reason": "scripted"}
    return Reply([tool_use(PREFERENCE_TOOL_NAME, payload, turn)])


@dataclass
class Pass:
    """One pass over the sample: wall time, what the fake saw, what the CLI reported."""

    seconds: float = 0.0
    requests: int = 0
    api_calls: int = 0
    from_cache: int = 0
    usd: float = 0.0
    hand_usd: float = 0.0
    reports: dict[str, Any] = field(default_factory=dict)
    # Per skill, each layer's duration_ms, kept out of `reports` (timings are not results).
    durations: dict[str, list[int]] = field(default_factory=dict)
    largest_request_chars: int = 0
    # Prompt-cache tokens the fake's cache model billed (reads, writes), over the pass.
    prompt_cache: tuple[int, int] = (0, 0)


def run_cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(EVALFLOW), "plugin", *args], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        sys.exit(f"FAIL: evalflow plugin {' '.join(args)} -> rc {proc.returncode}\n{proc.stderr}")
    return proc


def certify_pass(
    sample: list[Path], corpus: Path, env: dict[str, str], extra: list[str], fake: FakeAnthropic
) -> Pass:
    out = Pass()
    sent, usages = len(fake.requests), len(fake.usages)
    prices = load_prices()
    for skill in sample:
        t0 = time.perf_counter()
        proc = run_cli(["certify", str(skill), "--corpus-dir", str(corpus), "--json", *extra], env)
        out.seconds += time.perf_counter() - t0
        out.reports[skill.as_posix()] = json.loads(proc.stdout)
        out.durations[skill.as_posix()] = [
            layer.pop("duration_ms") for layer in out.reports[skill.as_posix()]["layers"]
        ]
        if extra:
            match = _USAGE.search(proc.stderr)
            if match is None:
                sys.exit(f"FAIL: no usage line from certify {skill}\n{proc.stderr}")
            out.api_calls += int(match.group(1))
            out.from_cache += int(match.group(2))
            out.usd += float(match.group(3))
    out.requests = len(fake.requests) - sent
    billed = fake.usages[usages:]
    out.prompt_cache = (
        sum(u["cache_read_input_tokens"] for u in billed),
        sum(u["cache_creation_input_tokens"] for u in billed),
    )
    out.largest_request_chars = max(
        (len(json.dumps(body, ensure_ascii=False)) for body in fake.requests[sent:]), default=0
    )
    for body, usage in zip(fake.requests[sent:], fake.usages[usages:], strict=True):
        out.hand_usd += prices.usd(
            body["model"],
            input_tokens=usage["input_tokens"],
            output_tokens=usage["output_tokens"],
            cache_read_tokens=usage["cache_read_input_tokens"],
            cache_write_tokens=usage["cache_creation_input_tokens"],
        )
    return out


def summarise(reports: dict[str, Any]) -> dict[str, Any]:
    """Totals over the sample of what the judged JSON says (judge layer and Elo)."""
    trig = [
        next(layer for layer in r["layers"] if layer["name"] == "judge")["triggering"]
        for r in reports.values()
    ]
    elos = [r["elo"] for r in reports.values()]

    def measured(key: str) -> list[float]:
        return [t[key] for t in trig if t[key] is not None]

    return {
        "positives": sum(t["positives"] for t in trig),
        "negatives": sum(t["negatives"] for t in trig),
        "f1": measured("f1"),
        "precision": measured("precision"),
        "recall": measured("recall"),
        "unmeasured": [
            f"{Path(path).name}: {t['reason']}"
            for path, t in zip(reports, trig, strict=True)
            if t["f1"] is None
        ],
        "kinds": sorted({e["kind"] for e in elos}),
        "opponents": sum(e["opponents"] for e in elos),
        "disagreements": sum(e["order_disagreements"] for e in elos),
        "left_out": [x for e in elos for x in e["left_out"]],
    }


WHOLE_OPPONENTS = 2  # the whole-corpus pass: every skill judged, a short Elo each
WHOLE_RUNS = 1  # and the offline Monte Carlo kept minimal (it is not what is measured)


def whole_corpus(
    plugins: Path, corpus: Path, env: dict[str, str], fake: FakeAnthropic
) -> list[str]:
    """Every skill in one batch `certify` process, cold then replayed: any crash, refused
    skill, left-out opponent, unmeasured layer or nondeterminism is returned as a failure."""
    args = ["certify", str(plugins), "--corpus-dir", str(corpus), "--output", "json-lines",
            "--runs", str(WHOLE_RUNS), "--judge", "anthropic",
            "--pairwise-opponents", str(WHOLE_OPPONENTS)]  # fmt: skip
    runs = []
    for label in ("cold", "replay"):
        sent = len(fake.requests)
        t0 = time.perf_counter()
        proc = run_cli(args, env)
        seconds = time.perf_counter() - t0
        reports = [json.loads(line) for line in proc.stdout.splitlines()]
        for report in reports:
            for layer in report["layers"]:
                layer.pop("duration_ms")
        runs.append((reports, len(fake.requests) - sent))
        print(
            f"whole corpus, one batch process ({label}): {len(reports)} skills in {seconds:.2f} s"
            f", {len(fake.requests) - sent} requests; {_USAGE.search(proc.stderr)[0]}"
        )
    (reports, _), (replayed, replay_sent) = runs
    failures = [] if replayed == reports else ["whole corpus: the replay's JSON differs"]
    if replay_sent:
        failures.append(f"whole corpus: the replay sent {replay_sent} requests")
    for report in reports:
        judge = next(layer for layer in report["layers"] if layer["name"] == "judge")
        elo = report["elo"]
        if not judge["measured"] or judge["triggering"]["f1"] is None:
            failures.append(f"{report['skill']['path']}: judge layer {judge['triggering']}")
        if elo["kind"] != "judged" or elo["left_out"] or elo["opponents"] != WHOLE_OPPONENTS:
            failures.append(f"{report['skill']['path']}: Elo {elo}")
    return failures


def _demo_plugins(tmp: Path) -> Path:
    """The demo's skills (`data/demo/skills/<plugin>/<skill>`) laid out as a plugins/
    snapshot (`<plugin>/skills/<skill>`): offline, in the repository, for the smoke run."""
    plugins = tmp / "plugins"
    for skill in sorted((ROOT / "data" / "demo" / "skills").glob("*/*/SKILL.md")):
        target = plugins / skill.parent.parent.name / "skills" / skill.parent.name
        shutil.copytree(skill.parent, target)
    return plugins


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plugins", type=Path, default=DEFAULT_PLUGINS, help="plugins/ snapshot")
    ap.add_argument("--skills", type=int, default=12, help="sampled real skills (M)")
    ap.add_argument("--opponents", type=int, default=8, help="--pairwise-opponents")
    ap.add_argument("--repeats", type=int, default=3, help="passes of each kind (medians)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the skill sample")
    ap.add_argument(
        "--smoke", action="store_true", help="the demo's skills, 2 opponents, 1 pass (CI)"
    )
    args = ap.parse_args()
    if args.smoke:
        args.plugins = _demo_plugins(Path(tempfile.mkdtemp(prefix="evalflow-bench-")))
        args.skills, args.opponents, args.repeats = 3, 2, 1
    skills = sorted(p.parent for p in args.plugins.glob("*/skills/*/SKILL.md"))
    if len(skills) < args.skills:
        sys.exit(f"FAIL: {len(skills)} skills under {args.plugins}; extract the snapshot first")
    rng = np.random.default_rng(args.seed)
    sample = [skills[i] for i in sorted(rng.choice(len(skills), args.skills, replace=False))]
    sizes = [(s / "SKILL.md").stat().st_size for s in sample]
    failures: list[str] = []
    load_before = _uptime()

    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic(respond) as fake:
        base_env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "EVALFLOW_CLAUDE_", "EVALFLOW_MAX_COST"))
        }
        base_env |= {"ANTHROPIC_API_KEY": TEST_KEY, "ANTHROPIC_BASE_URL": fake.base_url}
        corpus = Path(tmp) / "corpus"
        t0 = time.perf_counter()
        init = run_cli(["init", str(args.plugins), "--corpus-dir", str(corpus)], base_env)
        init_s = time.perf_counter() - t0
        print(f"plugin init {args.plugins}: {init.stdout.strip()} in {init_s:.2f} s")
        print(
            f"sample: {len(sample)} of {len(skills)} skills (seed {args.seed}), SKILL.md "
            f"{min(sizes)}-{max(sizes)} bytes (median {statistics.median(sizes):.0f})"
        )
        judged = ["--judge", "anthropic", "--pairwise-opponents", str(args.opponents)]
        offline, cold, warm = [], [], []
        for r in range(args.repeats):
            env = base_env | {"EVALFLOW_WAREHOUSE": str(Path(tmp) / f"warehouse-{r}")}
            offline.append(certify_pass(sample, corpus, env, [], fake))
            cold.append(certify_pass(sample, corpus, env, judged, fake))
            warm.append(certify_pass(sample, corpus, env, judged, fake))
        whole = whole_corpus(args.plugins, corpus, base_env | {"EVALFLOW_WAREHOUSE": tmp}, fake)

    expected = len(sample) * (1 + 2 * args.opponents)
    first = cold[0]
    for r, (c, w, o) in enumerate(zip(cold, warm, offline, strict=True), 1):
        # A cold pass may already hit the cache: two sampled skills that are also each
        # other's opponents share a match (same texts, same order) in the one warehouse.
        if c.api_calls + c.from_cache != expected or c.requests != c.api_calls:
            failures.append(
                f"repeat {r}: {c.requests} requests sent, CLI says {c.api_calls} calls + "
                f"{c.from_cache} cached, expected {expected} in all"
            )
        if abs(c.usd - c.hand_usd) > 1e-4 * len(sample):
            failures.append(f"repeat {r}: CLI ${c.usd:.4f} != priced usages ${c.hand_usd:.4f}")
        if w.requests != 0 or w.api_calls != 0 or w.from_cache != expected:
            failures.append(
                f"repeat {r}: replay sent {w.requests} requests "
                f"({w.api_calls} calls, {w.from_cache} from cache)"
            )
        if w.reports != c.reports:
            failures.append(f"repeat {r}: the replay's JSON differs from the cold run's")
        if c.reports != first.reports:
            failures.append(f"repeat {r}: cold JSON differs from repeat 1 (nondeterminism)")
        if {e["kind"] for e in (x["elo"] for x in o.reports.values())} != {"static-score"}:
            failures.append(f"repeat {r}: the offline Elo is not static-score")

    failures += whole
    s = summarise(first.reports)
    med = {name: statistics.median(p.seconds for p in ps) for name, ps in
           (("offline", offline), ("cold", cold), ("warm", warm))}  # fmt: skip
    print(f"certify over {len(sample)} skills, one process each, median of {args.repeats}:")
    n = len(sample)
    print(
        f"  offline (static-score Elo)  : {med['offline']:7.2f} s  "
        f"({med['offline'] / n:.2f} s/skill)"
    )
    print(
        f"  judged, cold cache          : {med['cold']:7.2f} s  ({med['cold'] / n:.2f} s/skill, "
        f"{med['cold'] / med['offline']:.2f}x offline)"
    )
    print(
        f"  judged, replay (warm cache) : {med['warm']:7.2f} s  ({med['warm'] / n:.2f} s/skill, "
        f"{med['warm'] / med['cold']:.2f}x cold, {med['warm'] / med['offline']:.2f}x offline)"
    )
    print(
        f"  requests per cold pass: {first.requests} sent + {first.from_cache} from cache "
        f"(expected {expected} in all); replay: "
        f"{[w.requests for w in warm]} sent, {warm[0].from_cache} from cache"
    )
    print(
        f"  cost per cold pass: ${first.usd:.4f} reported (usages priced by hand "
        f"${first.hand_usd:.4f}), ${first.usd / len(sample):.4f}/skill at list prices; "
        f"prompt cache {first.prompt_cache[0]} tokens read, {first.prompt_cache[1]} written"
    )
    print(
        f"  labels: {s['positives']} positive, {s['negatives']} negative; medians over "
        f"{len(s['f1'])} skills: F1 {_median(s['f1'])} (range {min(s['f1'], default=None)}-"
        f"{max(s['f1'], default=None)}), precision {_median(s['precision'])}, recall "
        f"{_median(s['recall'])}; F1 unmeasured: {s['unmeasured'] or 'none'}"
    )
    print(
        f"  Elo kind {s['kinds']}, opponents {s['opponents']}, order disagreements "
        f"{s['disagreements']}, left out {s['left_out'] or 'none'}"
    )
    names = [layer["name"] for layer in next(iter(first.reports.values()))["layers"]]
    per_layer = zip(*first.durations.values(), strict=True)
    print(
        "  in-process layer time, median per skill: "
        + ", ".join(
            f"{n} {statistics.median(ms):.0f} ms" for n, ms in zip(names, per_layer, strict=True)
        )
    )
    print(
        f"  largest request: {first.largest_request_chars} characters of JSON "
        f"(~{first.largest_request_chars // 4} tokens)"
    )
    print(f"  load before: {load_before}")
    print(f"  load after : {_uptime()}")
    for failure in failures:
        print(f"FAIL: {failure}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
