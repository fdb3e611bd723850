"""Judge selection by name, including the LLM judges' key requirement."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalflow.errors import InputError
from evalflow.judges.anthropic_judge import ClaudeJudge
from evalflow.judges.cost import Budget
from evalflow.judges.heuristic import HeuristicJudge
from evalflow.judges.hybrid import HybridJudge
from evalflow.judges.labels import LABELS_ENV, LabelsJudge
from evalflow.judges.registry import JUDGE_NAMES, make_judge
from evalflow_tests.judges.fake_anthropic import TEST_KEY


def test_names() -> None:
    assert JUDGE_NAMES == ("heuristic", "anthropic", "openai", "hybrid", "labels")
    assert isinstance(make_judge("heuristic"), HeuristicJudge)
    with pytest.raises(InputError, match="unknown judge 'gpt'"):
        make_judge("gpt")


@pytest.mark.parametrize("name", ["anthropic", "hybrid"])
def test_llm_judges_need_the_key(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(InputError, match="ANTHROPIC_API_KEY is not set") as err:
        make_judge(name)
    assert "--judge heuristic" in str(err.value)


def test_llm_judges_with_key_and_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.delenv("EVALFLOW_CLAUDE_MODEL", raising=False)
    claude = make_judge("anthropic", cache_dir=tmp_path / "cache")
    assert isinstance(claude, ClaudeJudge)
    assert claude.cache is not None and claude.cache.root == tmp_path / "cache" / "anthropic"
    budget = Budget(1.5)
    hybrid = make_judge("hybrid", cache_dir=tmp_path, budget=budget)
    assert isinstance(hybrid, HybridJudge) and hybrid.claude.budget is budget


def test_labels_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "gold.yaml"
    path.write_text("verdicts: []\n")
    assert isinstance(make_judge("labels", labels_path=path), LabelsJudge)
    monkeypatch.setenv(LABELS_ENV, str(path))
    assert make_judge("labels").judge_id == "labels:gold"


def test_every_claude_backed_judge_needs_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built directly (not through `make_judge` or a command's early check), each of the
    five still stops with the same one line at construction, before any request."""
    from evalflow.judges.claude_drafter import ClaudeDrafter
    from evalflow.judges.claude_mc import ClaudeMcFactory
    from evalflow.judges.claude_plugin import ClaudePluginJudge, make_plugin_judges
    from evalflow.judges.claude_skill_pairwise import ClaudeSkillPairwiseJudge

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for build in (
        lambda: ClaudeJudge(cache_dir=tmp_path),
        lambda: ClaudeDrafter(cache_dir=tmp_path),
        lambda: ClaudeMcFactory(cache_dir=tmp_path),
        lambda: ClaudePluginJudge(cache_dir=tmp_path),
        lambda: make_plugin_judges(["claude-sonnet-5-5"], 2, cache_dir=tmp_path),
        lambda: ClaudeSkillPairwiseJudge(cache_dir=tmp_path),
    ):
        with pytest.raises(InputError) as err:
            build()
        assert err.value.one_line().startswith("Claude client: ANTHROPIC_API_KEY is not set")
        assert "\n" not in err.value.one_line()


def test_replicas_share_one_transport(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalflow.judges.claude_plugin import make_plugin_judges

    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    judges = make_plugin_judges(["claude-sonnet-5-5"], 3, cache_dir=tmp_path)
    assert [j.replica for j in judges] == [1, 2, 3]
    assert len({id(j.transport) for j in judges}) == 1
