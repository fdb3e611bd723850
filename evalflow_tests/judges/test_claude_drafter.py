"""The Claude drafter against the local fake Anthropic server (no network): seed-002 rules in
its prompt, a strict tool, each check marked with its rule, proposed probes verified against
the repository (kept only when they match code or an asserting test), cached (a re-run sends
nothing and writes the same bytes), costed, budgeted (a budget stop falls back to the offline
rules, marked), reads the benchmark's calibration anchors, and `baseline draft --drafter claude`
never overwrites a frozen baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from evalflow.domain.baseline_draft import render_draft
from evalflow.domain.models import Baseline
from evalflow.domain.prd import parse_prd
from evalflow.judges.anthropic_judge import ClaudeSettings
from evalflow.judges.claude_drafter import DRAFT_TOOL_NAME, ClaudeDrafter
from evalflow.repo.snapshot import RepoSnapshot, SourceFile
from evalflow_tests.cli.test_baseline_cli import run_cli
from evalflow_tests.conftest import DEMO
from evalflow_tests.judges.fake_anthropic import TEST_PRICES, FakeAnthropic, Reply, Turn, tool_use

PRD = """\
# PRD: Trials

## Story S1: Start a trial (P0)

Acceptance criteria:
- S1-AC1: When a trial starts, the system emits a `trial_started` event linked to the user and the trial end date.

## Story S2: Later (P2)

Acceptance criteria:
- S2-AC1: Nothing scored.
"""  # noqa: E501

CODE = {
    "app/trials.py": (
        "def start(bus, user_id, ends_at):\n"
        '    payload = {"userId": user_id, "trialEndsAt": ends_at}\n'
        '    bus.emit("trial_started", payload)\n'
    ),
    "tests/test_trials.py": (
        "def test_start(bus):\n"
        "    start(bus, 7, 'x')\n"
        '    assert bus.events[0].payload["userId"] == 7\n'
    ),
    "README.md": "The payload has trialEndsAt.\n",
}


def _snapshot() -> RepoSnapshot:
    return RepoSnapshot("c0ffee", {p: SourceFile(p, t) for p, t in CODE.items()})


def _check(kind: str, rule: str, prop: str, level: str = "none", **kw: Any) -> dict[str, Any]:
    return {"kind": kind, "rule": rule, "proposition": prop, "level": level,
            "outcome": False, "wiring": False, "probes": [], **kw}  # fmt: skip


ANSWER = {
    "interpretation": "Payload rule: userId and trialEndsAt on the constructed payload.",
    "checks": [
        _check("I", "clause", "Starting a trial emits `trial_started`.", probes=[
            {"kind": "impl", "pattern": r'bus\.emit\("trial_started"', "path_globs": ["app/**"]}]),
        _check("I", "conjunction/payload", "The payload carries userId.", probes=[
            {"kind": "impl", "pattern": r'"userId":', "path_globs": []}]),
        _check("I", "conjunction/payload", "The payload carries trialEndsAt.", probes=[
            {"kind": "impl", "pattern": r"trialEndsAt", "path_globs": ["README.md"]},
            {"kind": "impl", "pattern": r"never_anywhere", "path_globs": ["**"]}]),
        _check("T", "conjunction/payload on T-checks", "A test asserts the payload's userId.",
               "unit", probes=[
            {"kind": "test-assert", "pattern": r'payload\["userId"\]', "path_globs": ["tests/**"]},
            {"kind": "impl", "pattern": r"userId", "path_globs": ["app/**"]}]),
    ],
}  # fmt: skip


def answer(turn: Turn) -> Reply:
    return Reply([tool_use(DRAFT_TOOL_NAME, ANSWER, turn)], "tool_use", 300)


def _drafter(fake: FakeAnthropic, cache: Path | None, **settings: Any) -> ClaudeDrafter:
    return ClaudeDrafter(
        ClaudeSettings(timeout_s=20.0, **settings),
        runs=(("app", _snapshot()),),
        cache_dir=cache,
        base_url=fake.base_url,
        prices=TEST_PRICES,
    )


def test_rules_in_prompt_strict_tool_marked_rules_and_verified_probes(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    prd = parse_prd(PRD, "prd.md")
    with FakeAnthropic(answer) as fake:
        drafter = _drafter(fake, tmp_path / "cache")
        acs = drafter.draft(prd, "trials")
        usage = drafter.drain_usage()
    assert len(fake.requests) == 1  # one call per weighted AC; the P2 story is not asked
    request = fake.requests[0]
    system = request["system"][0]["text"]
    for rule in ("conjunction/payload", "disjunction", "wiring", "level policy", "T-outcome",
                 "product-controlled", "without a code"):  # fmt: skip
        assert rule in system
    assert request["tools"][0]["strict"] is True
    assert "<untrusted_repository_data>" in request["messages"][0]["content"][0]["text"]
    assert usage and usage[0].usd > 0 and not usage[0].cached
    ac, roadmap = acs  # the P2 story by the offline rules, no call: roadmap readiness
    assert roadmap.id == "S2-AC1" and "Claude" not in roadmap.checks[0].rule
    checks = {c.id: c for c in ac.checks}
    assert list(checks) == ["S1-AC1-I1", "S1-AC1-I2", "S1-AC1-I3", "S1-AC1-T1"]
    assert checks["S1-AC1-I2"].rule == "conjunction/payload (Claude drafter)"
    # Kept: matches production code / an asserting test line. Dropped: docs only, nothing,
    # the wrong probe kind for the check.
    assert [p.pattern for p in checks["S1-AC1-I1"].probes] == [r'bus\.emit\("trial_started"']
    assert checks["S1-AC1-I2"].probes[0].path_globs == ("**",)
    assert checks["S1-AC1-I3"].probes == ()
    assert "'trialEndsAt' matches documentation only (README.md)" in checks["S1-AC1-I3"].note
    assert "'never_anywhere' matches nothing" in checks["S1-AC1-I3"].note
    assert [p.kind for p in checks["S1-AC1-T1"].probes] == ["test-assert"]
    assert "impl probe on a T-check" in checks["S1-AC1-T1"].note
    text = render_draft(acs, "trials", drafter=drafter.name)
    draft = Baseline.model_validate(yaml.safe_load(text))
    assert draft.acs[0].checks[0].probes[0].pattern == r'bus\.emit\("trial_started"'
    assert "# rule: conjunction/payload (Claude drafter)" in text
    assert "pattern: 'bus\\.emit\\(\"trial_started\"'" in text  # single-quoted, no doubling

    # Cached: the same draft again sends nothing, costs nothing, writes the same bytes.
    with FakeAnthropic(answer) as again:
        drafter = _drafter(again, tmp_path / "cache")
        replay = render_draft(drafter.draft(prd, "trials"), "trials", drafter=drafter.name)
        assert again.requests == []
        assert all(u.cached for u in drafter.drain_usage())
    assert replay == text


def test_invalid_answers_and_budget_stops_fall_back_to_the_offline_rules(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    prd = parse_prd(PRD, "prd.md")

    def invalid(turn: Turn) -> Reply:  # T-checks missing: refused twice
        return Reply([tool_use(DRAFT_TOOL_NAME, {**ANSWER, "checks": ANSWER["checks"][:1]}, turn)])

    with FakeAnthropic(invalid) as fake:
        ac, _ = _drafter(fake, None).draft(prd, "trials")
    assert len(fake.requests) == 2  # the one retry, then the fallback
    assert all("offline fallback" in c.rule for c in ac.checks)
    assert any("conjunction/payload" in c.rule for c in ac.checks)
    with FakeAnthropic(answer) as fake:
        ac, _ = _drafter(fake, None, max_cost_usd=0.000001).draft(prd, "trials")
    assert fake.requests == []  # nothing sent that the budget cannot pay
    assert all("offline fallback: budget stop" in c.rule for c in ac.checks)


def test_an_unusable_draft_is_replayed_free_and_re_asked_only_on_rejudge(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    prd = parse_prd(PRD, "prd.md")

    def refused(turn: Turn) -> Reply:
        return Reply([{"type": "text", "text": "no"}], stop_reason="refusal")

    drafts = []
    with FakeAnthropic(refused) as fake:
        for rejudge in (False, False, True):
            ac, _ = _drafter(fake, tmp_path, rejudge=rejudge).draft(prd, "trials")
            drafts.append((len(fake.requests), ac))
    assert [n for n, _ in drafts] == [1, 1, 2]  # replayed once free, re-asked on rejudge
    assert drafts[0][1] == drafts[1][1]
    assert all("offline fallback: the model refused" in c.rule for c in drafts[1][1].checks)


def test_cli_claude_draft_writes_verified_probes_and_never_a_frozen_baseline(
    make_repo, tmp_path: Path, capsys, monkeypatch
) -> None:
    repo = make_repo({}, CODE)
    (tmp_path / "prd.md").write_text(PRD)
    out = tmp_path / "_ac-baseline.yaml"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("EVALFLOW_WAREHOUSE", str(tmp_path / "wh"))
    with FakeAnthropic(answer) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        args = ["baseline", "draft", str(tmp_path / "prd.md"), "--benchmark", "trials",
                "--drafter", "claude", "--repo", str(repo),
                "--anchors-from", str(DEMO / "_ac-baseline.yaml")]  # fmt: skip
        code, stdout, err = run_cli(capsys, *args)
        assert code == 0, err
        # The benchmark's calibration anchors are part of the question, borderline marked.
        asked = " ".join(b["text"] for b in fake.requests[0]["messages"][0]["content"])
        assert "S1-AC3-T2: UNMET, borderline. Example:" in asked
        assert "Claude drafter: 1 call(s), 0 from the cache" in stdout
        assert "3 verified probe(s)" in stdout
        assert "(Claude drafter, claude-sonnet-5-5)" in out.read_text()
        code, stdout, err = run_cli(capsys, "baseline", "freeze", str(out))
        assert code == 0, err
        code, _, err = run_cli(capsys, *args, "--force")
        assert code == 2 and "frozen" in err
    assert len(fake.requests) == 1


# A second implementation of the same PRD, in its own idiom: it publishes, it does not emit.
OTHER = {
    "app/trials.py": (
        "def begin(events, uid, end):\n"
        '    data = {"userId": uid, "trialEndsAt": end}\n'
        '    events.publish("trial_started", data)\n'
    ),
    "tests/test_trials.py": "def test_begin(events):\n    begin(events, 7, 'x')\n",
}
TWO_RUNS = {
    "interpretation": "",
    "checks": [
        _check("I", "clause", "Starting a trial emits `trial_started`.", probes=[
            {"kind": "impl", "pattern": r'"trial_started"', "path_globs": ["app/**"]},
            {"kind": "impl", "pattern": r'bus\.emit\("trial_started"', "path_globs": ["app/**"]}]),
        _check("T", "level policy: unit", "A test asserts the trial start.", "unit"),
    ],
}  # fmt: skip


def test_cli_claude_draft_verifies_probes_in_every_run_and_records_them(
    make_repo, tmp_path: Path, capsys, monkeypatch
) -> None:
    """A probe that counts in one run of two fits that run's naming: written `proposed: true`
    (freeze refuses it until a person accepts it), not as a plain probe; the draft records
    both runs and where each probe matched, as `baseline lint --runs --record` does."""
    run_a, run_b = make_repo({}, CODE), make_repo({}, OTHER)
    (tmp_path / "prd.md").write_text(PRD)
    out = tmp_path / "_ac-baseline.yaml"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("EVALFLOW_WAREHOUSE", str(tmp_path / "wh"))

    def two_runs(turn: Turn) -> Reply:
        return Reply([tool_use(DRAFT_TOOL_NAME, TWO_RUNS, turn)], "tool_use", 300)

    with FakeAnthropic(two_runs) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        code, stdout, err = run_cli(capsys, "baseline", "draft", str(tmp_path / "prd.md"),
                                    "--benchmark", "trials", "--drafter", "claude",
                                    "--repo", str(run_a), "--repo", str(run_b))  # fmt: skip
    assert code == 0, err
    asked = fake.requests[0]["messages"][0]["content"][0]["text"]
    assert f"##### Run {run_a.name}" in asked and f"##### Run {run_b.name}" in asked
    assert "1 verified probe(s), 1 proposed (one run only)" in stdout
    text = out.read_text()
    assert f"counts in run {run_a.name} only" in text
    assert "verified in at least 2 of 2 runs" in text
    draft = Baseline.model_validate(yaml.safe_load(text))
    portable, one_run = draft.acs[0].checks[0].probes
    assert (portable.pattern, portable.proposed) == (r'"trial_started"', False)
    assert (one_run.pattern, one_run.proposed) == (r'bus\.emit\("trial_started"', True)
    record = draft.checked_against
    assert record is not None
    assert [r.run for r in record.runs] == sorted([run_a.name, run_b.name])
    assert all(len(r.head) == 40 for r in record.runs)
    assert record.matched["S1-AC1-I1"] == (tuple(sorted([run_a.name, run_b.name])), (run_a.name,))
    code, _, err = run_cli(capsys, "baseline", "freeze", str(out))
    assert code == 2 and "proposed" in err  # a person accepts or refuses it first
    # Accepted: it freezes, warning that the record names folders, not the runs' keys.
    out.write_text(out.read_text().replace(", proposed: true", ""))
    code, stdout, err = run_cli(capsys, "baseline", "freeze", str(out))
    assert code == 0, err
    assert f"checked_against names runs by folder, not run key ({run_a.name})" in stdout
    # A run is named by its repository's folder: two runs may not share one name.
    code, _, err = run_cli(capsys, "baseline", "draft", str(tmp_path / "prd.md"), "--benchmark",
                           "trials", "--drafter", "claude", "--out", str(tmp_path / "b.yaml"),
                           "--repo", str(run_a), "--repo", str(run_a))  # fmt: skip
    assert code == 2 and "same name" in err
