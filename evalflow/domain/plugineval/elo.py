"""Elo of a skill against a gold corpus (SPEC §2, PLUGINEVAL fix 7), on top of `ranking.elo`.

Two kinds of rating (`EloResult.kind`), which every surface names:

* **static-score** (no pairwise judge): the candidate meets every corpus skill on every
  dimension both have a blended score for, each pair compared in BOTH orders (A vs B and
  B vs A) by `compare_scores`; a pair whose two verdicts do not mirror each other
  (S_ab + S_ba ≠ 1) is counted as a disagreement — 0 with this deterministic comparator
  unless a custom one is passed. `basis` names the depth and layers both sides were scored
  with (the caller guarantees they are the same).
* **judged** (`judged_skill_elo`, a `SkillPairwiseJudge` configured): the candidate's SKILL.md
  meets the SKILL.md of `PairwiseSetup.opponents` corpus skills, one match per opponent. The
  opponents are a seeded sample: one fixed permutation of the corpus paths (seed `seed`),
  walked in order skipping the candidate's own content, so every candidate of one corpus
  meets the same skills and their judged Elos are comparable. Each match is asked in both
  orders (candidate shown first, opponent shown first) under neutral positions; the two
  answers go through `ranking.matches.resolve_position_bias`, so an order disagreement is a
  draw and is counted. An opponent whose SKILL.md is unreadable or whose sha256 no longer
  matches the index, or whose judgement failed in either order, is left out and named in
  `left_out` — never scored.

Sequential Elo depends on match order, so the reported rating is the mean of the
candidate's rating over `permutations` seeded random orders (start 1500, K = 32); each
(opponent, unit) contributes its two orders as two matches. The 95 % CI is the 2.5/97.5
percentile of a seeded bootstrap (500 samples) that resamples those units with both orders
kept together. The corpus percentile is the pairwise win rate against corpus skills: per
opponent, the candidate's mean match score gives a win (> 0.5), draw (= 0.5) or loss; the
rate is (wins + draws / 2) / opponents × 100. Opponents play as `corpus:<path>`, so a corpus
skill whose path is "candidate" is never mistaken for the candidate.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

import numpy as np

from evalflow.domain.plugineval.composite import STATIC_SCORE
from evalflow.domain.plugineval.model import DIMENSIONS
from evalflow.domain.ranking.elo import ELO_K, ELO_START, Match, sequential_elo

if TYPE_CHECKING:
    from evalflow.domain.plugineval.corpus import CorpusIndex
    from evalflow.domain.ranking.matches import Preference

PERMUTATIONS = 100
BOOTSTRAP_SAMPLES = 500
CANDIDATE_ID = "candidate"
JUDGED = "judged"
DEFAULT_OPPONENTS = 8
CANDIDATE_FIRST = "candidate-first"
OPPONENT_FIRST = "opponent-first"
_OPPONENT_PREFIX = "corpus:"
_TIE_TOLERANCE = 1e-9

Comparator = Callable[[float, float], float]


def compare_scores(a: float, b: float) -> float:
    """1 if a is higher, 0 if lower, 0.5 within 1e-9."""
    if abs(a - b) <= _TIE_TOLERANCE:
        return 0.5
    return 1.0 if a > b else 0.0


@dataclass(frozen=True, slots=True)
class EloResult:
    """The candidate's Elo; `computed` False (with a reason) when there was nothing to play.

    `left_out` names the corpus skills a judged Elo could not play, with why; `judge` is the
    pairwise judge's name (judged only).
    """

    computed: bool
    reason: str | None = None
    rating: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    corpus_percentile: float | None = None
    opponents: int = 0
    matches: int = 0
    disagreements: int = 0
    permutations: int = 0
    bootstrap_samples: int = 0
    kind: str = STATIC_SCORE
    basis: str | None = None
    left_out: tuple[tuple[str, str], ...] = ()
    judge: str | None = None


@dataclass(frozen=True, slots=True)
class SkillPair:
    """One order of one judged match as the judge is shown it: two SKILL.md texts by position."""

    opponent: str
    order: str
    first: str
    second: str


@dataclass(frozen=True, slots=True)
class JudgeFailure:
    """A judgement that could not be obtained (API failure, invalid answer twice, budget)."""

    reason: str


class SkillPairwiseJudge(Protocol):
    """States, for each pair, which shown position better does what its description promises.

    Answers are aligned with `pairs`; a failure is a `JudgeFailure`, never a guess.
    """

    name: str

    def prefer_all(self, pairs: Sequence[SkillPair]) -> list[Preference | JudgeFailure]: ...


@dataclass(frozen=True)
class PairwiseSetup:
    """What a judged Elo needs: the judge, a reader of a corpus skill's SKILL.md bytes by its
    index path (None when it cannot be read), and how many opponents to play."""

    judge: SkillPairwiseJudge
    read_skill_md: Callable[[str], bytes | None]
    opponents: int = DEFAULT_OPPONENTS


def skill_elo(
    candidate: Mapping[str, float | None],
    corpus: Mapping[str, Mapping[str, float | None]],
    *,
    seed: int = 0,
    permutations: int = PERMUTATIONS,
    bootstrap_samples: int = BOOTSTRAP_SAMPLES,
    comparator: Comparator = compare_scores,
    basis: str | None = None,
) -> EloResult:
    """Play the candidate's blended dimension scores against each corpus skill's."""
    if not corpus:
        return EloResult(False, "the corpus is empty", basis=basis)
    units: list[tuple[Match, Match]] = []
    per_opponent: dict[str, list[float]] = {}
    disagreements = 0
    for opponent in sorted(corpus):
        scores = corpus[opponent]
        player = _OPPONENT_PREFIX + opponent
        for dim in DIMENSIONS:
            a, b = candidate.get(dim), scores.get(dim)
            if a is None or b is None:
                continue
            s_ab = comparator(a, b)
            s_ba = comparator(b, a)
            if abs(s_ab + s_ba - 1.0) > 1e-12:
                disagreements += 1
            units.append((Match(CANDIDATE_ID, player, s_ab), Match(player, CANDIDATE_ID, s_ba)))
            per_opponent.setdefault(player, []).extend((s_ab, 1.0 - s_ba))
    if not units:
        return EloResult(
            False, "no dimension is scored for both the skill and the corpus", basis=basis
        )
    return _rated(
        units,
        per_opponent,
        EloResult(False, disagreements=disagreements, basis=basis),
        seed=seed,
        permutations=permutations,
        bootstrap_samples=bootstrap_samples,
    )


def sample_opponents(corpus: CorpusIndex, exclude_sha256: str, n: int, seed: int) -> list[str]:
    """The first `n` corpus paths of one seeded permutation, the candidate's content skipped."""
    paths = sorted((e.path, e.sha256) for e in corpus.skills)
    order = np.random.default_rng(seed).permutation(len(paths))
    return [paths[i][0] for i in order if paths[i][1] != exclude_sha256][:n]


def judged_skill_elo(
    candidate_md: str,
    candidate_sha256: str,
    corpus: CorpusIndex,
    setup: PairwiseSetup,
    *,
    seed: int = 0,
    permutations: int = PERMUTATIONS,
    bootstrap_samples: int = BOOTSTRAP_SAMPLES,
) -> EloResult:
    """Play the candidate's SKILL.md against a seeded sample of corpus skills (module doc)."""
    from evalflow.domain.plugineval.parser import decode_skill_md
    from evalflow.domain.ranking.matches import PairwiseVerdicts, resolve_position_bias

    judge = setup.judge.name
    basis = f"judged by {judge} on both SKILL.md texts, in both orders"
    sha_by_path = {e.path: e.sha256 for e in corpus.skills}
    left_out: list[tuple[str, str]] = []
    texts: dict[str, str] = {}
    for path in sample_opponents(corpus, candidate_sha256, setup.opponents, seed):
        raw = setup.read_skill_md(path)
        if raw is None:
            left_out.append((path, "SKILL.md cannot be read under the corpus's plugins directory"))
        elif hashlib.sha256(raw).hexdigest() != sha_by_path[path]:
            left_out.append(
                (path, "SKILL.md changed since the corpus was indexed (sha256 differs)")
            )
        else:
            texts[path] = decode_skill_md(raw, path)[0]
    pairs = [
        pair
        for path, text in texts.items()
        for pair in (
            SkillPair(path, CANDIDATE_FIRST, candidate_md, text),
            SkillPair(path, OPPONENT_FIRST, text, candidate_md),
        )
    ]
    answers = setup.judge.prefer_all(pairs) if pairs else []
    if len(answers) != len(pairs):
        raise ValueError(f"{judge} answered {len(answers)} of {len(pairs)} pairs")
    verdicts: list[PairwiseVerdicts] = []
    for index, path in enumerate(texts):
        first, second = answers[2 * index], answers[2 * index + 1]
        failed = [a.reason for a in (first, second) if isinstance(a, JudgeFailure)]
        if failed:
            left_out.append((path, "not judged: " + "; ".join(dict.fromkeys(failed))))
            continue
        verdicts.append(
            PairwiseVerdicts(
                a=CANDIDATE_ID,
                b=_OPPONENT_PREFIX + path,
                unit_ids=["skill"],
                a_first=[first],
                b_first=[second],
            )
        )
    shell = EloResult(False, kind=JUDGED, basis=basis, left_out=tuple(left_out), judge=judge)
    if not verdicts:
        why = "; ".join(f"{p}: {r}" for p, r in left_out) or "the corpus has no other skill"
        return replace(shell, reason=f"no corpus skill could be judged ({why})")
    judged = resolve_position_bias(verdicts)
    units: list[tuple[Match, Match]] = []
    per_opponent: dict[str, list[float]] = {}
    for player, score in zip(judged.table["b"], judged.table["score_a"], strict=True):
        s = float(score)
        units.append((Match(CANDIDATE_ID, player, s), Match(player, CANDIDATE_ID, 1.0 - s)))
        per_opponent[str(player)] = [s, s]
    return _rated(
        units,
        per_opponent,
        replace(shell, disagreements=judged.n_position_bias),
        seed=seed,
        permutations=permutations,
        bootstrap_samples=bootstrap_samples,
    )


def _rated(
    units: list[tuple[Match, Match]],
    per_opponent: dict[str, list[float]],
    shell: EloResult,
    *,
    seed: int,
    permutations: int,
    bootstrap_samples: int,
) -> EloResult:
    """Permutation-mean rating, bootstrap CI and corpus percentile of the played units;
    `shell` brings the fields the caller decided (kind, basis, disagreements, left out)."""
    players = [CANDIDATE_ID, *sorted(per_opponent)]
    matches = [m for unit in units for m in unit]
    rng = np.random.default_rng(seed)
    ratings = [
        sequential_elo(
            [matches[i] for i in rng.permutation(len(matches))],
            players,
            start=ELO_START,
            k=ELO_K,
        )[CANDIDATE_ID]
        for _ in range(permutations)
    ]
    boot: list[float] = []
    for _ in range(bootstrap_samples):
        picked = rng.integers(0, len(units), len(units))
        sample = [m for i in picked for m in units[i]]
        boot.append(sequential_elo(sample, players, start=ELO_START, k=ELO_K)[CANDIDATE_ID])
    lo, hi = (float(x) for x in np.percentile(boot, [2.5, 97.5]))

    outcomes: list[float] = []
    for opp_scores in per_opponent.values():
        mean = sum(opp_scores) / len(opp_scores)
        outcomes.append(1.0 if mean > 0.5 else 0.5 if mean == 0.5 else 0.0)
    return replace(
        shell,
        computed=True,
        rating=float(np.mean(ratings)),
        ci_low=lo,
        ci_high=hi,
        corpus_percentile=100.0 * sum(outcomes) / len(outcomes),
        opponents=len(per_opponent),
        matches=len(matches),
        permutations=permutations,
        bootstrap_samples=bootstrap_samples,
    )
