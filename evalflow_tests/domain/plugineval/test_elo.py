"""Elo against a corpus: both orders, disagreement flags, permutation mean, bootstrap CI;
the judged Elo with a scripted pairwise judge (no I/O)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import pytest

from evalflow.domain.plugineval.corpus import CorpusIndex, build_index, make_entry
from evalflow.domain.plugineval.elo import (
    CANDIDATE_FIRST,
    JUDGED,
    OPPONENT_FIRST,
    JudgeFailure,
    PairwiseSetup,
    SkillPair,
    compare_scores,
    judged_skill_elo,
    sample_opponents,
    skill_elo,
)
from evalflow.domain.ranking.elo import Match, sequential_elo

DIMS_GOOD = {"triggering_accuracy": 0.9, "orchestration_fitness": 0.9, "token_efficiency": 0.9}
DIMS_BAD = {"triggering_accuracy": 0.2, "orchestration_fitness": 0.3, "token_efficiency": 0.4}


def test_compare_scores() -> None:
    assert compare_scores(0.9, 0.8) == 1.0
    assert compare_scores(0.8, 0.9) == 0.0
    assert compare_scores(0.8, 0.8 + 1e-12) == 0.5


def test_single_match_in_both_orders_equals_hand_elo() -> None:
    # candidate beats one opponent on one dimension, judged in both orders:
    # A vs B: E = .5 → R_A = 1516, R_B = 1484
    # B vs A: E_B = 1/(1 + 10^((1516−1484)/400)) = 0.45402 → S_B = 0
    #   R_A = 1516 + 32 × 0.45402 = 1530.53 (either order gives the same result here
    #   because both matches have the same outcome for A)
    res = skill_elo({"triggering_accuracy": 0.9}, {"o": {"triggering_accuracy": 0.1}})
    expected = sequential_elo(
        [Match("candidate", "o", 1.0), Match("o", "candidate", 0.0)], ["candidate", "o"]
    )["candidate"]
    assert res.rating == pytest.approx(expected)
    assert res.rating == pytest.approx(1516 + 32 * (1 - 1 / (1 + 10 ** (-32 / 400))), abs=1e-6)
    assert res.matches == 2
    assert res.disagreements == 0
    assert res.corpus_percentile == 100.0


def test_rating_is_order_independent_mean_and_seeded() -> None:
    corpus = {"a": DIMS_BAD, "b": DIMS_GOOD, "c": {"triggering_accuracy": 0.5}}
    r1 = skill_elo(DIMS_GOOD | {"triggering_accuracy": 0.6}, corpus, seed=5)
    r2 = skill_elo(DIMS_GOOD | {"triggering_accuracy": 0.6}, dict(reversed(corpus.items())), seed=5)
    assert r1 == r2  # corpus iteration order does not matter
    assert r1.permutations == 100
    assert r1.bootstrap_samples == 500
    assert r1.ci_low <= r1.rating <= r1.ci_high
    # 3 + 3 + 1 dimension pairs, two orders each
    assert r1.matches == 14
    # wins vs a (3/3), draws vs b? b: .6 < .9 loses one, draws two → mean .333 → loss;
    # vs c: .6 > .5 → win → 2 wins of 3 opponents
    assert r1.corpus_percentile == pytest.approx(200 / 3)


def test_better_skill_rates_higher() -> None:
    corpus = {f"s{i}": {"triggering_accuracy": i / 11} for i in range(1, 11)}
    high = skill_elo({"triggering_accuracy": 0.95}, corpus)
    low = skill_elo({"triggering_accuracy": 0.05}, corpus)
    assert high.rating > 1500 > low.rating
    assert high.corpus_percentile == 100.0
    assert low.corpus_percentile == 0.0


def test_position_bias_is_flagged() -> None:
    def first_wins(a: float, b: float) -> float:
        return 1.0  # a comparator with total position bias

    res = skill_elo(DIMS_GOOD, {"o": DIMS_BAD}, comparator=first_wins)
    assert res.disagreements == 3


def test_not_computed_without_corpus_or_overlap() -> None:
    assert not skill_elo(DIMS_GOOD, {}).computed
    res = skill_elo({"robustness": 0.5}, {"o": {"triggering_accuracy": 0.5}})
    assert not res.computed
    assert "no dimension" in res.reason


def test_static_score_elo_is_unchanged_by_the_judged_elo() -> None:
    # Pinned from the implementation before the judged Elo existed (same call, same seed):
    # the offline rating must stay byte-identical.
    corpus = {"a": DIMS_BAD, "b": DIMS_GOOD, "c": {"triggering_accuracy": 0.5}}
    res = skill_elo(DIMS_GOOD | {"triggering_accuracy": 0.6}, corpus, seed=3)
    assert (res.rating, res.ci_low, res.ci_high) == (
        1567.315025973159,
        1493.6890942892614,
        1635.7917216350647,
    )
    assert res.kind == "static-score"
    assert res.left_out == ()
    assert res.judge is None


def test_an_opponent_named_candidate_is_not_the_candidate() -> None:
    res = skill_elo({"triggering_accuracy": 0.9}, {"candidate": {"triggering_accuracy": 0.1}})
    assert res.opponents == 1
    assert res.rating > 1500


def skill_md(name: str, good: bool) -> bytes:
    quality = "GOOD" if good else "weak"
    return f"---\nname: {name}\ndescription: Use when {name}.\n---\n# {quality}\n".encode()


def corpus_of(skills: dict[str, bytes]) -> CorpusIndex:
    return build_index(
        [
            make_entry(
                name=path,
                path=path,
                description=f"Use when {path}.",
                sha256=hashlib.sha256(raw).hexdigest(),
                dimensions={"triggering_accuracy": 0.5},
                anti_patterns=[],
                composite_quick=50.0,
            )
            for path, raw in skills.items()
        ],
        "plugins",
    )


class ScriptedJudge:
    """Answers by a rule over the shown texts; records every pair it was shown."""

    name = "scripted"

    def __init__(self, rule: str) -> None:
        self.rule = rule
        self.pairs: list[SkillPair] = []

    def prefer_all(self, pairs: Sequence[SkillPair]) -> list[str | JudgeFailure]:
        self.pairs += pairs
        out: list[str | JudgeFailure] = []
        for pair in pairs:
            if self.rule == "first":
                out.append("first")
            elif self.rule == "fail-broken" and "broken" in pair.first + pair.second:
                out.append(JudgeFailure("API failure: HTTP 529"))
            else:
                out.append("first" if "GOOD" in pair.first else "second")
        return out


CORPUS = {f"p/s{i}": skill_md(f"s{i}", good=False) for i in range(12)}
CANDIDATE = skill_md("cand", good=True).decode()
CANDIDATE_SHA = hashlib.sha256(CANDIDATE.encode()).hexdigest()


def judged(judge: ScriptedJudge, files: dict[str, bytes], n: int = 8, corpus=None):
    index = corpus or corpus_of(files)
    setup = PairwiseSetup(judge, files.get, n)
    return judged_skill_elo(CANDIDATE, CANDIDATE_SHA, index, setup)


def test_judged_elo_sends_both_orders_of_each_sampled_opponent() -> None:
    judge = ScriptedJudge("content")
    res = judged(judge, CORPUS)
    assert res.computed and res.kind == JUDGED and res.judge == "scripted"
    assert res.opponents == 8 and res.matches == 16
    assert len(judge.pairs) == 16
    for one, two in zip(judge.pairs[::2], judge.pairs[1::2], strict=True):
        assert one.opponent == two.opponent
        assert (one.order, two.order) == (CANDIDATE_FIRST, OPPONENT_FIRST)
        assert one.first == two.second == CANDIDATE
        assert one.second == two.first != CANDIDATE
    assert res.disagreements == 0
    assert res.corpus_percentile == 100.0
    assert res.rating > 1500
    assert "scripted" in res.basis


def test_a_judge_that_always_prefers_first_gives_only_counted_draws() -> None:
    res = judged(ScriptedJudge("first"), CORPUS)
    assert res.computed
    assert res.disagreements == res.opponents == 8
    assert res.rating == pytest.approx(1500.0)  # every match a draw against 1500 players
    assert res.corpus_percentile == 50.0


def test_changed_unreadable_and_failed_opponents_are_left_out_and_named() -> None:
    chosen = sample_opponents(corpus_of(CORPUS), CANDIDATE_SHA, 3, 0)
    indexed = {**CORPUS, chosen[2]: b"broken skill"}  # the judge fails on this one
    index = corpus_of(indexed)
    files = dict(indexed)
    files[chosen[0]] = b"---\nname: edited\n---\nGOOD now\n"  # sha256 no longer matches
    del files[chosen[1]]  # unreadable
    judge = ScriptedJudge("fail-broken")
    res = judged(judge, files, n=3, corpus=index)
    assert not res.computed
    reasons = dict(res.left_out)
    assert list(reasons) == chosen
    assert "sha256 differs" in reasons[chosen[0]]
    assert "cannot be read" in reasons[chosen[1]]
    assert reasons[chosen[2]] == "not judged: API failure: HTTP 529"
    assert "no corpus skill could be judged" in res.reason
    assert {p.opponent for p in judge.pairs} == {chosen[2]}  # a changed skill is never sent


def test_opponent_sample_is_seeded_shared_and_skips_the_candidate() -> None:
    index = corpus_of(CORPUS)
    first = sample_opponents(index, "0" * 64, 8, 0)
    assert first == sample_opponents(index, "0" * 64, 8, 0)
    assert len(set(first)) == 8 and first != sorted(first)
    own = next(e.sha256 for e in index.skills if e.path == first[2])
    # the candidate's own content is skipped; the others keep their place in the order
    assert sample_opponents(index, own, 8, 0)[:7] == [p for p in first if p != first[2]]
    assert sample_opponents(index, "0" * 64, 50, 0) == sample_opponents(index, "0" * 64, 12, 0)
