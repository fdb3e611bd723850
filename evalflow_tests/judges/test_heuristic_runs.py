"""The heuristic judge takes a check's executed `run` probes in (SPEC §5 behavioural evidence),
and the shared validator keeps that evidence."""

from __future__ import annotations

from pathlib import Path

from evalflow.domain.acceptance import Observation, decided, not_run
from evalflow.domain.models import BaselineAC, Check, RunEvidence
from evalflow.io.evaluation import verdicts_frame
from evalflow.judges.base import JudgeRequest
from evalflow.judges.heuristic import HeuristicJudge
from evalflow.judges.validator import validate_verdict
from evalflow.repo.diff_surface import diff_surface
from evalflow.repo.git import resolve_commit
from evalflow.repo.snapshot import load_snapshot
from evalflow_tests.judges.test_heuristic import fixture, probe

RUN = {"command": "python -m app start a@x", "expect": {"exit_code": 0, "stdout": ["14 days"]}}
CHECK = Check(
    id="I1",
    kind="I",
    proposition="a trial ends 14 days after sign-up",
    probes=(probe("impl", r"timedelta\(days=14\)", ["app/**"]),),
    run=(RUN,),
)
UNPROBED = CHECK.model_copy(update={"id": "I2", "probes": ()})


def _score(repo: Path, *runs) -> dict:
    head = resolve_commit(repo, "head")
    snap = load_snapshot(repo, head)
    diff = tuple(f.path for f in diff_surface(repo, resolve_commit(repo, "base"), head))
    ac = BaselineAC(id="AC1", text="x", checks=(CHECK, UNPROBED))
    request = JudgeRequest(
        run_key="b.f.r",
        run=1,
        checks=((ac, CHECK), (ac, UNPROBED)),
        snapshot=snap,
        diff_paths=diff,
        acceptance=tuple(runs),
    )
    verdicts = HeuristicJudge().score(request)
    return {v.check_id: validate_verdict(v, snap, set(diff)) for v in verdicts}


def _ran(check: Check, stdout: str):
    return decided(check.id, 1, check.run[0], Observation(exit_code=0, stdout=stdout), stdout)


def test_a_passing_run_is_met_with_the_run_beside_file_line(make_repo) -> None:
    verdicts = _score(fixture(make_repo), _ran(CHECK, "ends in 14 days"), _ran(UNPROBED, "14 days"))
    met = verdicts["I1"]
    assert met.status == "MET" and met.flags == ()
    assert isinstance(met.evidence[0], RunEvidence)
    assert met.evidence[1].ref() == "app/trials.py:5"
    # Behaviour alone proves a check no search probe pins.
    assert verdicts["I2"].status == "MET"
    row = verdicts_frame("b.f.r", [met]).iloc[0]
    assert row["evidence_refs"].startswith("run `python -m app start a@x` ⇒ exit 0; stdout ⊇")
    # The verdict cites what is the same on every evaluation; the output stays in the table.
    assert row["evidence"][0]["output"] == "exit 0, expectation met"


def test_a_failing_run_is_unmet_although_the_search_probe_matched(make_repo) -> None:
    verdicts = _score(fixture(make_repo), _ran(CHECK, "ends in 30 days"))
    assert verdicts["I1"].status == "UNMET"
    assert "stdout lacks '14 days'" in verdicts["I1"].rationale
    assert verdicts["I1"].searches[-1].pattern == "run `python -m app start a@x`"


def test_a_run_not_run_keeps_the_search_verdict(make_repo) -> None:
    stopped = not_run("I1", 1, CHECK.run[0], "the dependency setup did not pass")
    verdicts = _score(fixture(make_repo), stopped)
    assert verdicts["I1"].status == "MET"
    assert "run probe 1 not run: the dependency setup did not pass" in verdicts["I1"].rationale
    assert verdicts["I2"].status == "UNSCORED"
    assert "no acceptance run recorded" in verdicts["I2"].rationale
