"""The heuristic judge on small fixture repositories with known answers."""

from __future__ import annotations

from pathlib import Path

from evalflow.domain.models import BaselineAC, Check, Probe, Verdict
from evalflow.judges.base import JudgeRequest
from evalflow.judges.heuristic import HeuristicJudge
from evalflow.judges.validator import validate_verdict
from evalflow.repo.diff_surface import diff_surface
from evalflow.repo.git import resolve_commit
from evalflow.repo.snapshot import load_snapshot

APP = """\
from datetime import timedelta


def start_trial(conn, email):
    ends_at = now() + timedelta(days=14)
    save(conn, email, ends_at)
    return ends_at
"""
UNIT = """\
from app.trials import start_trial


def test_end_date():
    ends = start_trial(conn, "a@x")
    assert ends == NOW + timedelta(days=14)


def test_runs_without_asserting():
    start_trial(conn, "b@x")
    saved_status(conn) == "active"


def test_mock_only(mocker):
    save = mocker.patch("app.trials.save")
    start_trial(conn, "c@x")
    save.assert_called_once_with(conn, "c@x", ANY)
"""
E2E = """\
import sqlite3


def test_signup_persists(client, db):
    resp = client.post("/trials", json={"email": "a@x"})
    assert resp.status == 201
    assert db_row(db)["ends_at"] == "2026-01-15"
"""


def probe(kind: str, pattern: str, globs=("**",)) -> Probe:
    return Probe(kind=kind, pattern=pattern, path_globs=tuple(globs))


def score(
    repo: Path, *checks: Check, run: int = 1, ac_text: str = "x", portable: bool = True
) -> dict[str, Verdict]:
    """Verdicts for `checks`; `portable`: every probe is recorded as matching in other
    frameworks' runs (so a probe that finds nothing may prove absence), as in a baseline
    checked with `baseline lint --runs --record`."""
    head = resolve_commit(repo, "head")
    snap = load_snapshot(repo, head)
    diff = tuple(f.path for f in diff_surface(repo, resolve_commit(repo, "base"), head))
    ac = BaselineAC(id="AC1", text=ac_text, checks=checks)
    request = JudgeRequest(
        run_key="b.f.r",
        run=run,
        checks=tuple((ac, c) for c in checks),
        snapshot=snap,
        diff_paths=diff,
        portable=frozenset(
            (c.id, n) for c in checks for n in range(1, len(c.probes) + 1) if portable
        ),
    )
    return {
        v.check_id: validate_verdict(v, snap, set(diff)) for v in HeuristicJudge().score(request)
    }


def fixture(make_repo) -> Path:
    return make_repo(
        {"lib/legacy.py": "LEGACY_DAYS = 14\n"},
        {"app/trials.py": APP, "tests/unit/test_trials.py": UNIT, "tests/e2e/test_api.py": E2E},
    )


def test_met_cites_the_right_file_and_line(make_repo) -> None:
    repo = fixture(make_repo)
    check = Check(
        id="I1",
        kind="I",
        proposition="ends 14 days later",
        probes=(probe("impl", r"timedelta\(days=14\)"),),
    )
    v = score(repo, check)["I1"]
    assert v.status == "MET"
    assert [e.ref() for e in v.evidence] == ["app/trials.py:5"]
    assert v.evidence[0].quote == "ends_at = now() + timedelta(days=14)"
    assert v.searches[0].scope.startswith("diff surface")


def test_unmet_records_its_searches(make_repo) -> None:
    repo = fixture(make_repo)
    check = Check(
        id="I2", kind="I", proposition="refunds", probes=(probe("impl", r"def refund\("),)
    )
    v = score(repo, check)["I2"]
    assert v.status == "UNMET"
    assert [s.scope.split(":")[0] for s in v.searches] == ["diff surface", "repository"]
    assert all(s.pattern == r"def refund\(" and s.hits == 0 for s in v.searches)


def test_code_outside_the_diff_is_found_and_flagged(make_repo) -> None:
    repo = fixture(make_repo)
    check = Check(id="I3", kind="I", proposition="legacy", probes=(probe("impl", "LEGACY_DAYS"),))
    v = score(repo, check)["I3"]
    assert v.status == "MET" and "evidence-outside-diff-surface" in v.flags


def test_every_probe_must_match(make_repo) -> None:
    repo = fixture(make_repo)
    check = Check(
        id="I4",
        kind="I",
        proposition="both",
        probes=(probe("impl", "timedelta"), probe("impl", "missing_thing")),
    )
    assert score(repo, check)["I4"].status == "UNMET"


def test_t_check_needs_an_assertion_line(make_repo) -> None:
    repo = fixture(make_repo)
    executed_only = Check(
        id="T1",
        kind="T",
        level="unit",
        proposition="status active",
        probes=(probe("test-assert", r'saved_status\(conn\) == "active"'),),
    )
    v = score(repo, executed_only)["T1"]
    assert v.status == "UNMET" and "without asserting" in v.rationale


def test_mock_only_does_not_prove_an_outcome(make_repo) -> None:
    repo = fixture(make_repo)
    outcome = Check(
        id="T2",
        kind="T",
        level="unit",
        outcome=True,
        proposition="saved",
        probes=(probe("test-assert", r"save\.assert_called_once_with"),),
    )
    v = score(repo, outcome)["T2"]
    assert v.status == "UNMET" and "mock-only" in v.rationale
    external = outcome.model_copy(update={"id": "T3", "external_call": True})
    assert score(repo, external)["T3"].status == "MET"


def test_higher_level_test_satisfies_a_unit_check(make_repo) -> None:
    repo = fixture(make_repo)
    unit = Check(
        id="T4",
        kind="T",
        level="unit",
        proposition="201",
        probes=(probe("test-assert", r"resp\.status == 201"),),
    )
    v = score(repo, unit)["T4"]
    assert v.status == "MET" and v.evidence[0].ref() == "tests/e2e/test_api.py:6"


def test_e2e_check_rejects_unit_only_evidence(make_repo) -> None:
    repo = fixture(make_repo)
    e2e = Check(
        id="T5",
        kind="T",
        level="e2e",
        proposition="14 days",
        probes=(probe("test-assert", r"timedelta\(days=14\)"),),
    )
    v = score(repo, e2e)["T5"]
    assert v.status == "UNMET" and "e2e test is required" in v.rationale


def test_both_levels_need_two_distinct_tests(make_repo) -> None:
    repo = fixture(make_repo)
    both = Check(
        id="T6",
        kind="T",
        level="both",
        proposition="201",
        probes=(probe("test-assert", r"resp\.status == 201"),),
    )
    assert score(repo, both)["T6"].status == "UNMET"
    both_ok = Check(
        id="T7",
        kind="T",
        level="both",
        proposition="dates",
        probes=(probe("test-assert", r"timedelta\(days=14\)|ends_at"),),
    )
    v = score(repo, both_ok)["T7"]
    assert v.status == "MET" and len(v.evidence) == 2


def test_without_probes_the_answer_is_unscored_not_a_guess(make_repo) -> None:
    repo = fixture(make_repo)
    check = Check(id="I9", kind="I", proposition="`start_trial` saves the trial")
    v = score(repo, check)["I9"]
    assert v.status == "UNSCORED"
    assert "start_trial at app/trials.py:4" in v.rationale
    assert v.searches


def test_runs_are_identical_by_construction(make_repo) -> None:
    repo = fixture(make_repo)
    check = Check(id="I1", kind="I", proposition="14", probes=(probe("impl", "days=14"),))
    one, two = score(repo, check, run=1)["I1"], score(repo, check, run=2)["I1"]
    assert one.model_copy(update={"run": 2}) == two


# -- scoped probes, file classes and matches that perform nothing (issue 14) ---------------

EVENTS = """\
from app.bus import bus


def start(user_id, ends_at):
    payload = {"userId": user_id}
    bus.emit("trial_started", payload)
    return {"trialEndsAt": ends_at}


start(1, 2)
"""
ROUTES = """\
from app.http import app
from app.hooks import verify


@app.route("POST", "/webhooks")
def receive(request):
    verify(request)
    return 200


def unrouted(request):
    verify(request)
"""
HOOKS = """\
def verify(request):
    return request.ok
"""


def impl(pattern: str, **fields) -> Check:
    return Check(
        id="I1",
        kind="I",
        proposition="p",
        probes=(Probe(kind="impl", pattern=pattern, **fields),),
    )


def judge_one(make_repo, files: dict[str, str], check: Check) -> Verdict:
    return score(make_repo({"README.md": "start\n"}, files), check)["I1"]


def test_payload_of_ignores_a_field_on_another_object(make_repo) -> None:
    files = {"app/trials.py": EVENTS, "app/bus.py": "bus = object()\n"}
    # Without a scope the returned (HTTP-like) object satisfies the probe: the old false MET.
    assert judge_one(make_repo, files, impl(r'"trialEndsAt"\s*:')).status == "MET"
    v = judge_one(make_repo, files, impl(r'"trialEndsAt"\s*:', within={"payload_of": "emit"}))
    assert v.status == "UNMET"
    assert "payload_of: 'emit'" in v.searches[0].scope
    met = judge_one(make_repo, files, impl(r'"userId"\s*:', within={"payload_of": "emit"}))
    assert met.status == "MET"
    assert [e.ref() for e in met.evidence] == ["app/trials.py:5"]
    # `return` is the pseudo-callee of a returned payload.
    returned = impl(r'"trialEndsAt"\s*:', within={"payload_of": "return"})
    assert judge_one(make_repo, files, returned).status == "MET"


def test_payload_of_in_typescript_inline_and_through_a_variable(make_repo) -> None:
    src = """\
import { bus } from "./bus";

export function start(userId: string, endsAt: string) {
  bus.publish("trial_started", { userId, trialEndsAt: endsAt });
  const reply = { planId: "p1" };
  console.log(reply);
  return 1;
}
start("u", "e");
"""
    files = {"src/trials.ts": src, "src/bus.ts": "export const bus = { publish() {} };\n"}
    inline = impl(r"trialEndsAt\s*:", within={"payload_of": "publish"})
    assert judge_one(make_repo, files, inline).status == "MET"
    other = impl(r"planId\s*:", within={"payload_of": "publish"})
    assert judge_one(make_repo, files, other).status == "UNMET"


def test_call_and_function_scopes(make_repo) -> None:
    files = {"app/trials.py": EVENTS, "app/bus.py": "bus = object()\n"}
    in_emit = impl(r'"trial_started"', within={"call": "emit|publish"})
    assert judge_one(make_repo, files, in_emit).status == "MET"
    wrong_call = impl(r'"trial_started"', within={"call": "enqueue"})
    assert judge_one(make_repo, files, wrong_call).status == "UNMET"
    in_start = impl(r"bus\.emit\(", within={"function": "start"})
    assert judge_one(make_repo, files, in_start).status == "MET"
    # Names match whole: `sta` is not `start`.
    assert judge_one(make_repo, files, impl(r"bus\.emit\(", within={"function": "sta"})).status == (
        "UNMET"
    )


def test_handler_of_follows_route_registration(make_repo) -> None:
    files = {"app/routes.py": ROUTES, "app/hooks.py": HOOKS, "app/http.py": "app = None\n"}
    v = judge_one(make_repo, files, impl(r"verify\(request\)", within={"handler_of": "route"}))
    assert v.status == "MET"
    assert [e.ref() for e in v.evidence] == ["app/routes.py:7"]
    js = """\
import { router } from "./http";
import { verify } from "./hooks";

router.post("/webhooks", async (req) => {
  verify(req);
});

function handleRefund(req) {
  verify(req);
}
app.addRoute("POST", "/refunds", handleRefund);

function orphan(req) {
  verify(req);
}
orphan(null);
"""
    jsfiles = {"src/routes.js": js, "src/http.js": "export const router = {};\n"}
    jsfiles["src/hooks.js"] = "export function verify(r) {\n  return r.ok;\n}\n"
    callback = impl(r"verify\(req\)", within={"handler_of": "post"})
    assert [e.ref() for e in judge_one(make_repo, jsfiles, callback).evidence] == [
        "src/routes.js:5"
    ]
    named = impl(r"verify\(req\)", within={"handler_of": "addRoute"})
    assert [e.ref() for e in judge_one(make_repo, jsfiles, named).evidence] == ["src/routes.js:9"]
    assert judge_one(
        make_repo, jsfiles, impl(r"verify\(req\)", within={"handler_of": "get"})
    ).status == ("UNMET")


def test_impl_probes_never_match_docs_or_generated_output(make_repo) -> None:
    files = {
        "README.md": "Refunds: `def refund(` lives in app/refunds.py\n",
        "docs/plan.txt": "def refund(\n",
        "dist/bundle.min.js": "function refund(x) { return x; }\n",
        "package-lock.json": '{"refund(": 1}\n',
    }
    v = judge_one(make_repo, files, impl(r"refund\("))
    assert v.status == "UNMET"
    assert v.searches[0].scope.startswith("diff surface: production code files")
    docs = judge_one(make_repo, files, impl(r"def refund\(", files="docs"))
    assert docs.status == "MET"
    assert [e.ref() for e in docs.evidence] == ["README.md:1"]


def test_dead_code_is_unscored_and_a_reference_makes_it_live(make_repo) -> None:
    dead = "def normalise(email):\n    return email.lower()\n"
    v = judge_one(make_repo, {"app/accounts.py": dead}, impl(r"\.lower\(\)"))
    assert v.status == "UNSCORED"
    assert "dead code: `normalise` (line 1) is never referenced" in v.rationale
    live = dead + "\n\ndef create(email):\n    return normalise(email)\n"
    assert judge_one(make_repo, {"app/accounts.py": live}, impl(r"\.lower\(\)")).status == "MET"
    decorated = "@app.get('/x')\n" + dead
    assert judge_one(make_repo, {"app/a.py": decorated}, impl(r"\.lower\(\)")).status == "MET"


def test_a_call_of_a_stub_or_of_an_undefined_name_is_unscored(make_repo) -> None:
    files = {
        "app/mail.py": 'def send_welcome(address):\n    """Later."""\n    pass\n',
        "app/accounts.py": (
            "from app.mail import send_welcome\n\n\ndef create(a):\n    send_welcome(a)\n"
            "    notify_crm(a)\n\n\ncreate(1)\n"
        ),
    }
    stub = judge_one(make_repo, files, impl(r"send_welcome\(a\)"))
    assert stub.status == "UNSCORED"
    assert "`send_welcome` is only defined as a stub (app/mail.py:1)" in stub.rationale
    undefined = judge_one(make_repo, files, impl(r"notify_crm\("))
    assert undefined.status == "UNSCORED"
    assert "`notify_crm` is defined and imported nowhere" in undefined.rationale
    files["app/mail.py"] = "def send_welcome(address):\n    outbox.append(address)\n"
    assert judge_one(make_repo, files, impl(r"send_welcome\(a\)")).status == "MET"


def test_a_message_in_an_error_path_is_unscored(make_repo) -> None:
    src = """\
import logging

log = logging.getLogger(__name__)


def pick(channel):
    if channel != "email":
        raise ValueError("channel in_app is not supported")
    log.warning("falling back from in_app")
    return channel


pick("email")
"""
    v = judge_one(make_repo, {"app/channels.py": src}, impl(r"in_app"))
    assert v.status == "UNSCORED"
    assert "raise/throw" in v.rationale and "log call" in v.rationale
    js = 'export default function pick(c) {\n  throw new Error("in_app is not supported");\n}\n'
    assert judge_one(make_repo, {"src/pick.js": js}, impl(r"in_app")).status == "UNSCORED"


def test_a_docstring_is_no_evidence_and_the_code_below_it_is(make_repo) -> None:
    documented = """\
def check(node):
    \"\"\"Report missing-raises when a function raises without documenting it.\"\"\"
    if node.raises and not node.documented:
        return Finding("missing-raises")
    return None


check(None)
"""
    v = judge_one(make_repo, {"app/rules.py": documented}, impl(r"missing-raises"))
    assert v.status == "MET"
    assert [e.ref() for e in v.evidence] == ["app/rules.py:4"]
    only_prose = '"""The module reports missing-raises."""\n\n\ndef check(node):\n    return node\n'
    v = judge_one(make_repo, {"app/rules.py": only_prose}, impl(r"missing-raises"))
    assert v.status == "UNSCORED"
    assert "docstring" in v.rationale


def test_a_declared_outcome_value_is_unscored_but_an_allowed_set_is_not(make_repo) -> None:
    enum = 'from enum import StrEnum\n\n\nclass Status(StrEnum):\n    ACTIVE = "active"\n'
    v = judge_one(make_repo, {"app/status.py": enum}, impl(r'"active"'))
    assert v.status == "UNSCORED"
    assert "declared outcome value" in v.rationale
    const = 'STATUS_ACTIVE = "active"\n'
    assert judge_one(make_repo, {"app/status.py": const}, impl(r'"active"')).status == "UNSCORED"
    ts = 'export enum Status {\n  Active = "active",\n}\n'
    assert judge_one(make_repo, {"src/status.ts": ts}, impl(r'"active"')).status == "UNSCORED"
    allowed = 'CHANNELS = ("email", "in_app")\n'
    assert judge_one(make_repo, {"app/config.py": allowed}, impl(r'"in_app"')).status == "MET"
    configured = "TRIAL_DAYS = 14\n"
    assert judge_one(make_repo, {"app/c.py": configured}, impl(r"TRIAL_DAYS = 14")).status == "MET"


def test_a_live_match_outside_the_diff_wins_over_a_dead_one_inside(make_repo) -> None:
    repo = make_repo(
        {"app/old.py": "def used(x):\n    return x.lower()\n\n\nused(1)\n"},
        {"app/new.py": "def unused(x):\n    return x.lower()\n"},
    )
    v = score(repo, impl(r"\.lower\(\)"))["I1"]
    assert v.status == "MET"
    assert [e.ref() for e in v.evidence] == ["app/old.py:2"]
    assert [s.hits for s in v.searches] == [1, 1]


def test_a_scope_in_a_file_without_grammar_is_unscored(make_repo) -> None:
    go = 'package main\n\nfunc start() {\n\tbus.Emit("e", map[string]any{"userId": 1})\n}\n'
    v = judge_one(make_repo, {"main.go": go}, impl(r'"userId"', within={"payload_of": "Emit"}))
    assert v.status == "UNSCORED"
    assert "no grammar to check within" in v.rationale
    # Without a scope a Go file is code like any other.
    assert judge_one(make_repo, {"main.go": go}, impl(r'"userId"')).status == "MET"


def test_within_is_validated_and_runs_on_re2() -> None:
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="within"):
        Probe(kind="impl", pattern="x", within={"call": r"(a)\1"})
    with pytest.raises(ValidationError, match="within needs one of"):
        Probe(kind="impl", pattern="x", within={})
    with pytest.raises(ValidationError, match="to impl probes"):
        Probe(kind="test-assert", pattern="x", within={"call": "emit"})
    with pytest.raises(ValidationError, match="files: docs"):
        Probe(kind="impl", pattern="x", files="docs", within={"call": "emit"})
    with pytest.raises(ValidationError):
        Probe(kind="impl", pattern="x", within={"callee": "emit"})


def test_a_t_check_asserted_only_by_a_pre_existing_test_is_unscored(make_repo) -> None:
    old_test = "def test_legacy():\n    assert legacy_days() == 14\n"
    repo = make_repo(
        {"lib/legacy.py": "def legacy_days():\n    return 14\n", "tests/test_legacy.py": old_test},
        {"app/trials.py": APP},
    )
    check = Check(
        id="T9",
        kind="T",
        level="unit",
        proposition="a unit test asserts the 14-day trial",
        probes=(probe("test-assert", r"== 14"),),
    )
    v = score(repo, check)["T9"]
    assert v.status == "UNSCORED"
    assert "outside the diff surface" in v.rationale and "tests/test_legacy.py" in v.rationale
    assert not v.evidence


def test_a_probe_scoped_away_from_the_changed_code_cannot_prove_absence(make_repo) -> None:
    # A second agent put the same service under backend/app/ while the baseline's probes,
    # written for another run, look under backend/src/ (seen on a real repository).
    service = "def save_message(conversation_id, text):\n    return store(conversation_id, text)\n"
    test = "def test_saves():\n    assert save_message('c1', 'hi') == 'c1'\n"
    away = make_repo(
        {"README.md": "start\n"},
        {"backend/app/storage.py": service, "backend/tests/test_storage.py": test},
    )
    scoped = impl(r"def save_message\(", path_globs=("backend/src/**",))
    v = score(away, scoped)["I1"]
    assert v.status == "UNSCORED"
    assert "none matching backend/src/**" in v.rationale and v.searches
    t_check = Check(
        id="T1",
        kind="T",
        level="unit",
        proposition="a test asserts the stored message",
        probes=(probe("test-assert", r"save_message", ("backend/src/tests/**",)),),
    )
    assert score(away, t_check)["T1"].status == "UNSCORED"
    # Where the change did touch code under the probe's globs, finding nothing is an UNMET.
    near = make_repo(
        {"README.md": "start\n"},
        {"backend/src/other.py": "def other():\n    return 1\n", "backend/app/storage.py": service},
    )
    assert score(near, scoped)["I1"].status == "UNMET"
    # And the probe's own globs still find the code where it is.
    assert (
        score(away, impl(r"def save_message\(", path_globs=("backend/**",)))["I1"].status == "MET"
    )


# -- UNMET only with a portable proof of absence (SPEC §5, issue 24 item 2) -----------------

ROUTE_APP = """\
from app.http import router


@router.post("/add")
def add(request):
    return request.x + request.y
"""


def test_a_silent_probe_without_a_portable_proof_leaves_the_check_unscored(make_repo) -> None:
    # The behaviour exists, written in another idiom than the probe's: silence proves nothing.
    repo = make_repo({"README.md": "x\n"}, {"app/api.py": ROUTE_APP})
    check = impl(r'@app\.route\(\s*"/api/add"')
    v = score(repo, check, ac_text="When the user clicks Add, the sum is shown.", portable=False)
    assert v["I1"].status == "UNSCORED"
    assert "no portable proof of absence" in v["I1"].rationale
    assert v["I1"].flags == ("no-portable-proof",)


def test_an_identifier_the_ac_fixes_absent_from_the_run_proves_unmet(make_repo) -> None:
    repo = make_repo({"README.md": "x\n"}, {"app/api.py": ROUTE_APP})
    check = impl(r'"Invalid input"')
    v = score(repo, check, ac_text='Objects are rejected with "Invalid input".', portable=False)
    assert v["I1"].status == "UNMET" and v["I1"].flags == ("absence-proven",)
    assert "'Invalid input', fixed by AC1, occurs in no production code file" in v["I1"].rationale
    absence = [s for s in v["I1"].searches if s.scope.startswith("repository: every")]
    assert [(s.pattern, s.hits) for s in absence] == [(r"invalid\ input", 0)]


def test_a_route_the_ac_fixes_counts_as_present_when_its_segments_are(make_repo) -> None:
    # The route is registered as "/add" under a router prefix: every fixed segment occurs, so
    # the probe's own idiom finding nothing is no proof.
    prefixed = make_repo(
        {"README.md": "x\n"}, {"app/api.py": ROUTE_APP, "app/main.py": 'PREFIX = "/api"\n'}
    )
    check = impl(r'@app\.route\(\s*"/api/add"')
    text = "`POST /api/add` answers the sum."
    assert score(prefixed, check, ac_text=text, portable=False)["I1"].status == "UNSCORED"
    bare = make_repo({"README.md": "x\n"}, {"app/api.py": "def health():\n    return 1\n"})
    v = score(bare, check, ac_text=text, portable=False)["I1"]
    assert v.status == "UNMET" and "'/api/add', fixed by AC1" in v.rationale


def test_a_level_verdict_needs_a_run_whose_tests_the_level_policy_can_tell_apart(
    make_repo,
) -> None:
    # Every test of this run is "unit" by the benchmark's layout-based policy, so "asserted
    # only in unit tests" describes the policy, not the run (a real second agent's layout).
    unit_only = make_repo(
        {"README.md": "x\n"},
        {"app/trials.py": APP, "tests/test_api.py": E2E.replace("import sqlite3\n", "")},
    )
    check = Check(
        id="T1",
        kind="T",
        level="e2e",
        proposition="an e2e test asserts the 201",
        probes=(probe("test-assert", r"assert resp\.status == 201"),),
    )
    v = score(unit_only, check, portable=False)["T1"]
    assert v.status == "UNSCORED" and "classifies no test of this run as e2e" in v.rationale
    # Where the policy does see e2e tests, the unit-only assertion is a real gap.
    both = fixture(make_repo)
    unit_check = check.model_copy(update={"probes": (probe("test-assert", r"assert ends == NOW"),)})
    assert score(both, unit_check, portable=False)["T1"].status == "UNMET"


# -- T-checks: one test case proves one proposition (issue 24 item 5) -----------------------


def _t_check(level: str, *probes: Probe) -> Check:
    return Check(id="T1", kind="T", level=level, proposition="p", probes=probes)


def test_all_patterns_of_a_t_check_must_hold_in_one_test_case(make_repo) -> None:
    repo = fixture(make_repo)
    apart = _t_check(
        "unit",
        probe("test-assert", r"assert ends == NOW"),  # test_end_date
        probe("test-assert", r"assert resp\.status == 201"),  # test_signup_persists
    )
    v = score(repo, apart)["T1"]
    assert v.status == "UNMET" and "no single test case asserts all" in v.rationale
    together = _t_check(
        "unit",
        probe("test-assert", r"assert resp\.status == 201"),
        probe("test-assert", r'assert db_row\(db\)\["ends_at"\]'),
    )
    v = score(repo, together)["T1"]
    assert v.status == "MET"
    assert [e.ref() for e in v.evidence] == ["tests/e2e/test_api.py:6", "tests/e2e/test_api.py:7"]


def test_a_test_assert_probe_pinned_to_a_test_case_ignores_others(make_repo) -> None:
    repo = fixture(make_repo)
    pinned_probe = Probe(kind="test-assert", pattern=r"assert ", within={"test": "test_signup_.*"})
    v = score(repo, _t_check("unit", pinned_probe))["T1"]
    assert v.status == "MET" and v.evidence[0].path == "tests/e2e/test_api.py"
    elsewhere = Probe(kind="test-assert", pattern=r"assert ends", within={"test": "test_signup_.*"})
    v = score(repo, _t_check("unit", elsewhere))["T1"]
    assert v.status == "UNMET" and "not named 'test_signup_.*'" in v.rationale


def test_within_test_belongs_to_test_assert_probes_only() -> None:
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="within: test applies to test-assert"):
        Probe(kind="impl", pattern="x", within={"test": "t"})
    with pytest.raises(ValidationError, match="within: test applies to test-assert"):
        Probe(kind="test-assert", pattern="x", within={"function": "f"})


def test_a_run_without_any_test_file_proves_every_t_check_absent(make_repo) -> None:
    repo = make_repo({"README.md": "x\n"}, {"app/trials.py": APP})
    check = _t_check("unit", probe("test-assert", r"assert start_trial\("))
    v = score(repo, check, portable=False)["T1"]
    assert v.status == "UNMET" and "the run has no test file at all" in v.rationale


def test_a_t_check_without_probes_in_a_run_without_any_test_file_is_unmet(make_repo) -> None:
    repo = make_repo({"README.md": "x\n"}, {"app/trials.py": APP})
    v = score(repo, _t_check("unit"))["T1"]
    assert v.status == "UNMET" and "no test file at all" in v.rationale
    assert "absence-proven" in v.flags
    # With a test file (of any language) the same check is no longer decided without probes.
    repo = make_repo({"README.md": "x\n"}, {"app/trials.py": APP, "tests/TrialTests.cs": "x\n"})
    assert score(repo, _t_check("unit"))["T1"].status == "UNSCORED"


CSHARP_TEST = """\
public class TrialTests {
    [Fact] public void Starts() { Assert.Equal(14, Trials.StartTrial().Days); }
}
"""


def test_tests_in_a_language_evalflow_does_not_read_prove_nothing_absent(make_repo) -> None:
    # A C# test suite: evalflow's inventory reads Python/JS/TS only. Before, the run "had no
    # test file at all" (every T-check UNMET) and the test file counted as production code.
    repo = make_repo(
        {"README.md": "x\n"},
        {"src/Trials.cs": "public static class Trials { }\n", "tests/TrialTests.cs": CSHARP_TEST},
    )
    t = score(repo, _t_check("unit", probe("test-assert", r"Assert\.Equal\(14")))["T1"]
    assert t.status == "UNSCORED" and "language evalflow does not read" in t.rationale
    assert "tests/TrialTests.cs" in t.rationale
    i = score(repo, impl(r"StartTrial\(\)"))["I1"]
    assert i.status != "MET", "a call in a test file is not production code"


def test_a_test_the_gates_report_failing_proves_no_t_check(make_repo) -> None:
    from dataclasses import replace

    from evalflow.repo.test_inventory import FailedTest

    repo = fixture(make_repo)
    check = _t_check("e2e", probe("test-assert", r"assert resp\.status == 201"))
    assert score(repo, check)["T1"].status == "MET"
    head = resolve_commit(repo, "head")
    snap = load_snapshot(repo, head)
    diff = tuple(f.path for f in diff_surface(repo, resolve_commit(repo, "base"), head))
    ac = BaselineAC(id="AC1", text="x", checks=(check,))
    request = JudgeRequest(
        run_key="b.f.r", run=1, checks=((ac, check),), snapshot=snap, diff_paths=diff
    )
    failing = frozenset({FailedTest("tests/e2e/test_api.py", ("test_signup_persists",))})
    (v,) = HeuristicJudge().score(replace(request, failing=failing))
    assert v.status == "UNMET" and "failing at head" in v.rationale


def test_the_k_scoring_runs_of_one_commit_share_one_index(make_repo) -> None:
    repo = fixture(make_repo)
    head = resolve_commit(repo, "head")

    def request(snap):
        return JudgeRequest(run_key="b.f.r", run=1, checks=(), snapshot=snap, diff_paths=())

    first = HeuristicJudge()._index_for(request(load_snapshot(repo, head)))
    again = HeuristicJudge()._index_for(request(load_snapshot(repo, head)))
    assert again is first
    other = HeuristicJudge()._index_for(request(load_snapshot(repo, resolve_commit(repo, "base"))))
    assert other is not first


def test_evidence_only_in_python_no_entry_point_imports_is_unscored(make_repo) -> None:
    app = "from fastapi import FastAPI\nfrom .ingest import ingest\napp = FastAPI()\n"
    stub = "def ingest(url):\n    return {'paper_id': '123'}\n"
    real = "import arxiv\n\n\ndef ingest(url):\n    return arxiv.Search(query=url)\n"
    files = {
        "pt/backend/__init__.py": "",
        "pt/backend/main.py": app,
        "pt/backend/ingest.py": stub,
        "pt/pt/backend/__init__.py": "",
        "pt/pt/backend/ingest.py": real,  # a nested copy nothing imports
    }
    check = impl(r"arxiv\.Search\(")
    v = judge_one(make_repo, files, check)
    assert v.status == "UNSCORED" and not v.evidence
    assert (
        "evidence only in code no application entry point imports: pt/pt/backend/ingest.py"
        in v.rationale
    )
    # The same code once the application imports it is evidence.
    files["pt/backend/main.py"] = app.replace(".ingest", "pt.backend.ingest")
    assert judge_one(make_repo, files, check).status == "MET"
    # A library (no application, no CLI, no __main__ guard): the rule does not apply.
    del files["pt/backend/main.py"]
    files["pt/pt/backend/__init__.py"] = "from .ingest import ingest\n"
    assert judge_one(make_repo, files, check).status == "MET"


def test_evidence_in_a_frontend_whose_entry_fails_to_load_is_unscored(make_repo) -> None:
    files = {
        "web/index.html": '<script type="module" src="/src/main.jsx"></script>\n',
        "web/src/main.jsx": "import App from './App.jsx'\nrender(App)\n",
        "web/src/App.jsx": (
            "import { Detail } from './views/Detail'\n"
            "import { Dashboard } from './views/Dashboard'\n"
            "export default function App() { return [Detail, Dashboard] }\n"
        ),
        "web/src/views/Detail.jsx": "export const Detail = (p) => p.summary === '<summary>'\n",
    }
    check = impl("'<summary>'")
    v = judge_one(make_repo, files, check)
    assert v.status == "UNSCORED" and not v.evidence
    assert "entry point fails to load (web/src/App.jsx imports './views/Dashboard'" in v.rationale
    files["web/src/views/Dashboard.jsx"] = "export const Dashboard = 1\n"
    assert judge_one(make_repo, files, check).status == "MET"


def test_a_class_that_only_flips_a_flag_is_no_worker(make_repo) -> None:
    worker = "class BackfillWorker:\n    def start(self):\n        self.running = True\n"
    files = {
        "app/main.py": (
            "from fastapi import FastAPI\nfrom app.w import BackfillWorker\n"
            "app = FastAPI()\nBackfillWorker().start()\n"
        ),
        "app/w.py": worker,
        "app/__init__.py": "",
    }
    check = impl(r"class\s+\w*Backfill")
    v = judge_one(make_repo, files, check)
    assert v.status == "UNSCORED"
    assert "class `BackfillWorker` (line 1) only logs and sets or returns constants" in v.rationale
    files["app/w.py"] = worker.replace("self.running = True", "self.task = fill_placeholders()")
    files["app/w.py"] = "from app.llm import fill_placeholders\n" + files["app/w.py"]
    files["app/llm.py"] = "def fill_placeholders():\n    return complete('x')\n"
    assert judge_one(make_repo, files, check).status == "MET"
