"""`evalflow plugin … --judge anthropic / --mc-backend anthropic` against the fake API."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalflow.cli.plugin import plugin
from evalflow.judges.claude_mc import GRADE_TOOL_NAME, OUTPUT_TOOL_NAME, ROUTE_TOOL_NAME
from evalflow.judges.claude_plugin import REPORT_TOOL_NAME
from evalflow_tests.judges.fake_anthropic import TEST_KEY, FakeAnthropic, Reply, Turn, tool_use

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo" / "skills"
GOOD = DEMO / "speckit" / "spec-writer"
POOR = DEMO / "bmad" / "story-writer"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, warehouse_dir: Path) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    for name in ("MODEL", "MAX_TOKENS", "CONCURRENCY", "BATCH", "EFFORT", "MAX_TURNS"):
        monkeypatch.delenv(f"EVALFLOW_CLAUDE_{name}", raising=False)
    monkeypatch.delenv("EVALFLOW_MAX_COST_USD", raising=False)


def invoke(*args: object):
    return CliRunner().invoke(plugin, [str(a) for a in args])


def respond(turn: Turn) -> Reply:
    """Every Claude call the plugin commands make: judge report, routing, output, grade."""
    tool = turn.body["tools"][0]["name"]
    text = "\n".join(b.get("text", "") for b in turn.body["messages"][0]["content"])
    if tool == REPORT_TOOL_NAME:
        block = text.split("<test_prompts>", 1)[1].split("</test_prompts>", 1)[0]
        indices = [int(i) for i in re.findall(r"^(\d+)\. ", block, re.MULTILINE)]
        opus = turn.body["model"] == "claude-opus-4-6"
        payload = {
            "predictions": [
                {"index": i, "would_trigger": i <= (8 if opus else 9)} for i in indices
            ],
            "orchestration_fitness": 0.9,
            "output_quality": 0.8,
            "scope_calibration": 0.85,
            "rationale": "scripted",
        }
        return Reply([tool_use(REPORT_TOOL_NAME, payload, turn)])
    if tool == ROUTE_TOOL_NAME:
        first = re.search(r"^- (skill-\d+): ", text, re.MULTILINE)
        assert first is not None
        ids = dict(re.findall(r"^- (skill-\d+): (\S+) — ", text, re.MULTILINE))
        target = next((sid for sid, name in ids.items() if "spec-writer" in name), "none")
        return Reply([tool_use(ROUTE_TOOL_NAME, {"skill_id": target}, turn)])
    if tool == OUTPUT_TOOL_NAME:
        return Reply([tool_use(OUTPUT_TOOL_NAME, {"output": "spec.md"}, turn)], output_tokens=400)
    assert tool == GRADE_TOOL_NAME
    return Reply([tool_use(GRADE_TOOL_NAME, {"quality": 0.75}, turn)])


@pytest.mark.parametrize(
    "args",
    [
        ("score", GOOD, "--judge", "anthropic"),
        ("certify", GOOD, "--mc-backend", "anthropic"),
        ("compare", POOR, GOOD, "--judge", "anthropic"),
    ],
)
def test_anthropic_without_a_key_is_one_line_exit_2(args: tuple) -> None:
    res = invoke(*args)
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "ANTHROPIC_API_KEY is not set" in lines[0]
    assert "Traceback" not in res.output


def test_judge_options_need_the_anthropic_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    res = invoke("score", GOOD, "--judge-model", "claude-opus-4-6")
    assert res.exit_code == 2 and "need --judge anthropic" in res.stderr
    res = invoke("score", GOOD, "--judge", "anthropic", "--judges", "0")
    assert res.exit_code == 2 and "--judges must be at least 1" in res.stderr


def test_standard_score_with_the_claude_judge(
    monkeypatch: pytest.MonkeyPatch, warehouse_dir: Path
) -> None:
    with FakeAnthropic(respond) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
        res = invoke(
            "score", GOOD, "--depth", "standard", "--judge", "anthropic", "--output", "json"
        )
        assert res.exit_code == 0, res.output
        again = invoke("score", GOOD, "--judge", "anthropic", "--json")
        assert len(fake.requests) == 1  # the re-run is served from the warehouse cache
    out = json.loads(res.stdout)
    judge = out["layers"][1]
    assert judge["name"] == "judge" and judge["measured"] is True and judge["judges"] == 1
    # The F1 is graded on evalflow's labels, reported per prompt with its source.
    prompts = judge["prompts"]
    assert len(prompts) == 10 and {"prompt", "should_trigger", "source"} <= set(prompts[0])
    assert {p["source"] for p in prompts if p["should_trigger"]} <= {
        "description",
        "name",
        "heading",
    }
    assert all(p["source"].startswith("distractor:") for p in prompts if not p["should_trigger"])
    pairs = [
        (p["should_trigger"], p["would_trigger"]["anthropic:claude-sonnet-5-5"]) for p in prompts
    ]
    tp = sum(s and w for s, w in pairs)
    f1 = 2 * tp / (2 * tp + sum(w and not s for s, w in pairs) + sum(s and not w for s, w in pairs))
    assert judge["triggering"]["f1"] == round(f1, 4) and judge["triggering"]["reason"] is None
    assert judge["triggering"]["positives"] == 7 and judge["triggering"]["negatives"] == 3
    assert out["dimensions"]["triggering_accuracy"]["layers"]["judge"] == round(f1, 4)
    # evalflow draws its 7 positives first; the scripted model says yes to prompts 1-9, so
    # two of evalflow's negatives are false positives: F1 = 14 / 16, precision 7 / 9.
    assert judge["triggering"]["f1"] == 0.875
    assert judge["triggering"]["precision"] == round(7 / 9, 4)
    request = json.dumps(fake.requests[0])
    assert "should_trigger" not in request and "distractor:" not in request
    assert out["dimensions"]["scope_calibration"]["layers"]["judge"] == 0.85
    assert out["confidence"] == "assessed"
    assert "anthropic: 1 API call(s), 0 from cache" in res.stderr
    assert "anthropic: 0 API call(s), 1 from cache" in again.stderr
    assert json.loads(again.stdout)["dimensions"] == out["dimensions"]
    for path in warehouse_dir.rglob("*"):
        if path.is_file():
            assert TEST_KEY.encode() not in path.read_bytes(), path


def test_two_judge_models_give_kappa(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic(respond) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
        res = invoke(
            "score", GOOD, "--judge", "anthropic", "--judge-model", "claude-sonnet-5-5",
            "--judge-model", "claude-opus-4-6", "--json",
        )  # fmt: skip
    assert res.exit_code == 0, res.output
    judge = json.loads(res.stdout)["layers"][1]
    assert judge["judges"] == 2 and judge["kappa"] is not None
    assert {fake.requests[0]["model"], fake.requests[1]["model"]} == {
        "claude-sonnet-5-5",
        "claude-opus-4-6",
    }


def test_certify_with_the_claude_monte_carlo_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic(respond) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
        res = invoke("certify", GOOD, "--runs", "6", "--mc-backend", "anthropic", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    mc = out["layers"][2]
    assert mc["name"] == "monte_carlo" and mc["measured"] is True
    assert mc["simulated"] is False and mc["backend"] == "anthropic:claude-sonnet-5-5"
    assert out["layers"][1]["measured"] is False  # no --judge: layer 2 stays unmeasured


def test_compare_with_the_claude_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic(respond) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
        res = invoke("compare", POOR, GOOD, "--depth", "standard", "--judge", "anthropic", "--json")
    assert res.exit_code == 0, res.output
    assert len(fake.requests) == 2
    assert res.stderr.count("anthropic: 2 API call(s)") == 1


def test_claude_judge_and_claude_monte_carlo_certify(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic(respond) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
        res = invoke(
            "certify", GOOD, "--runs", "4", "--judge", "anthropic", "--mc-backend", "anthropic",
            "--json",
        )  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert [layer["measured"] for layer in out["layers"]] == [True, True, True]
    assert out["confidence"] == "certified"  # a real judge and a real Monte Carlo run


def respond_with_preference(turn: Turn) -> Reply:
    """`respond`, plus the judged Elo's skill-vs-skill question: the first shown skill wins."""
    from evalflow.judges.claude_skill_pairwise import PREFERENCE_TOOL_NAME

    if turn.body["tools"][0]["name"] == PREFERENCE_TOOL_NAME:
        payload = {"preference": "first", "reason": "scripted"}
        return Reply([tool_use(PREFERENCE_TOOL_NAME, payload, turn)])
    return respond(turn)


def test_deep_score_with_the_claude_judge_gives_a_judged_elo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    assert invoke("init", DEMO, "--corpus-dir", corpus).exit_code == 0
    args = ("score", GOOD, "--depth", "deep", "--runs", "4", "--corpus-dir", corpus)
    with FakeAnthropic(respond_with_preference) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
        res = invoke(*args, "--judge", "anthropic", "--pairwise-opponents", "2", "--json")
        assert res.exit_code == 0, res.output
        sent = len(fake.requests)
        assert sent == 1 + 2 * 2  # the judge layer, then two opponents in both orders
        md = invoke(*args, "--judge", "anthropic", "--pairwise-opponents", "2")
        assert len(fake.requests) == sent  # replayed from the response cache
    elo = json.loads(res.stdout)["elo"]
    assert elo["computed"] and elo["kind"] == "judged" and elo["label"] == "Judged Elo"
    assert elo["opponents"] == 2 and elo["matches"] == 4
    assert elo["order_disagreements"] == 2  # "first" in both orders: draws, counted
    assert elo["rating"] == 1500.0 and elo["left_out"] == [] and elo["note"] is None
    assert json.loads(res.stdout)["composite"]["badge_basis"] == "composite and judged Elo"
    assert "Judged Elo 1500.0" in md.stdout and "2 order disagreement(s)" in md.stdout


def test_judged_elo_refuses_an_index_without_its_plugins_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    assert invoke("init", DEMO, "--corpus-dir", corpus).exit_code == 0
    index = json.loads((corpus / "index.json").read_text())
    del index["plugins_dir"]  # as written before the field existed
    (corpus / "index.json").write_text(json.dumps(index))
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    res = invoke("certify", GOOD, "--corpus-dir", corpus, "--judge", "anthropic")
    assert res.exit_code == 2
    assert len(res.stderr.strip().splitlines()) == 1
    assert "re-run `evalflow plugin init" in res.stderr
    offline = invoke("certify", GOOD, "--corpus-dir", corpus, "--json")  # no judge: still fine
    assert offline.exit_code == 0
    assert json.loads(offline.stdout)["elo"]["kind"] == "static-score"


def test_every_judge_answer_invalid_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    def invalid(turn: Turn) -> Reply:
        return Reply([tool_use(REPORT_TOOL_NAME, {"nonsense": 1}, turn)])

    with FakeAnthropic(invalid) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
        res = invoke("score", GOOD, "--judge", "anthropic", "--json")
        cmp = invoke("compare", POOR, GOOD, "--depth", "standard", "--judge", "anthropic")
    assert cmp.exit_code == 2, cmp.output
    assert [x[:3] for x in cmp.stderr.splitlines()[1:]] == ["A: ", "B: "]
    assert res.exit_code == 2, res.output
    usage, line = res.stderr.splitlines()
    assert usage.startswith("anthropic: ")
    assert line.startswith("judge layer unmeasured: none of the 1 requested judge(s) gave a ")
    out = json.loads(res.stdout)  # the report is still printed, its judge layer null
    assert out["layers"][1]["measured"] is False
    assert out["composite"]["score"] is not None


def test_concurrency_reaches_every_claude_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    # --concurrency is the public tool's "max concurrent LLM calls": every Claude transport
    # the command builds (judges, pairwise Elo judge, Monte Carlo) gets it; the environment
    # the judges read it through is restored afterwards.
    from evalflow.cli.plugin import _llm

    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.setenv("EVALFLOW_CLAUDE_CONCURRENCY", "2")
    llm = _llm(
        "anthropic", ("claude-opus-4-6", "claude-sonnet-4-5"), 1, "anthropic", 0, concurrency=7
    )
    assert len(llm.transports) == 4
    assert {t.settings.concurrency for t in llm.transports} == {7}
    assert os.environ["EVALFLOW_CLAUDE_CONCURRENCY"] == "2"
    default = _llm("anthropic", (), 1, "offline", 0)
    assert {t.settings.concurrency for t in default.transports} == {2}


@pytest.mark.parametrize("value", ["0", "65", "-1"])
def test_concurrency_out_of_range_is_one_line_exit_2(value: str) -> None:
    res = invoke("score", GOOD, "--depth", "quick", "--concurrency", value)
    assert res.exit_code == 2, res.output
    assert "--concurrency must be between 1 and 64" in res.stderr
    assert "Traceback" not in res.output
