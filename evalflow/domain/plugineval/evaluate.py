"""One skill end to end: parse → static → (judge) → (Monte Carlo) → blend → composite → Elo.

Depth decides which layers are *requested* (quick: static; standard: + judge; deep: + Monte
Carlo and Elo); what enters the score is what the layers really *measured*. A requested
judge layer with no judge configured is reported unmeasured with its reason, never
invented. Deep uses the offline router (`router.py`) unless another Monte Carlo backend
factory is given. A simulated Monte Carlo layer never enters the composite, the badge, the
Elo or the confidence label: it is blended into a separate `SimulatedView` (what the score
would be if the simulation were a measurement), reported under its own `simulated` label,
so every certified number is the same for every seed when the sampled layers are simulated.

Elo is like for like: the candidate plays with the layers the corpus was scored with
(`CorpusIndex.depth`), never with more; a corpus needing a layer the candidate did not
measure gets no Elo (one-line reason). With no pairwise judge the Elo is a static-score Elo
(`EloResult.kind`), and its permutation/bootstrap seed is fixed (`ELO_SEED`): it is a
computation over deterministic scores, not a sample, so `--seed` does not move it. With a
pairwise judge (`EvalOptions.pairwise`) the Elo is a judged Elo instead (`elo.judged_skill_elo`):
the judge reads both SKILL.md texts, so no layer is mixed, and the opponent sample and the
permutations use `ELO_SEED` too, so every candidate of a corpus meets the same opponents.

File-system questions are injected (`resolve` says which link targets exist, `judge_input`
reads references for the judge), so this module does no I/O. The judge, Monte Carlo and
Elo modules (numpy, pydantic, scipy) are imported only when their layer runs, which keeps
the quick path light.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evalflow.domain.plugineval.composite import (
    LAYERS_FOR_DEPTH,
    Composite,
    DimensionScore,
    badge,
    blend_dimensions,
    composite_score,
    confidence_label,
)
from evalflow.domain.plugineval.model import Finding, SkillFiles
from evalflow.domain.plugineval.parser import ParsedSkill, parse_skill, read_skill_text
from evalflow.domain.plugineval.static import StaticResult, analyze_static

if TYPE_CHECKING:
    from evalflow.domain.plugineval.corpus import CorpusIndex
    from evalflow.domain.plugineval.elo import EloResult, PairwiseSetup
    from evalflow.domain.plugineval.judge_layer import JudgeInput, JudgeLayerResult, PluginJudge
    from evalflow.domain.plugineval.montecarlo import McBackend, McPrompt, McResult

ELO_SEED = 0

McFactory = Callable[
    [ParsedSkill, StaticResult, Sequence[tuple[str, str]], int, int],
    "tuple[McBackend, list[McPrompt]]",
]


@dataclass(frozen=True)
class EvalOptions:
    """How deep to go and with what; `corpus` enables Elo at deep depth."""

    depth: str = "quick"
    judges: Sequence[PluginJudge] = ()
    runs: int = 50
    seed: int = 0
    corpus: CorpusIndex | None = None
    negatives: Sequence[tuple[str, str]] = ()
    mc_factory: McFactory | None = None
    # "public": the static layer by the public tool's rules (`compat.py`), else evalflow's.
    compat: str | None = None
    # A pairwise judge makes the deep-depth Elo a judged Elo (needs `corpus`).
    pairwise: PairwiseSetup | None = None


@dataclass(frozen=True)
class SimulatedView:
    """The blend with the simulated Monte Carlo layer included: reported, never certified."""

    backend: str
    dimensions: dict[str, DimensionScore]
    composite: Composite


@dataclass(frozen=True)
class SkillEvaluation:
    """Everything measured for one skill; `report.py` renders it."""

    parsed: ParsedSkill
    sha256: str
    depth: str
    static: StaticResult
    judge: JudgeLayerResult | None
    monte_carlo: McResult | None
    elo: EloResult | None
    dimensions: dict[str, DimensionScore]
    composite: Composite
    badge: str
    confidence: str
    durations_ms: dict[str, float] = field(default_factory=dict)
    simulated: SimulatedView | None = None
    compat: str | None = None

    @property
    def measured_layers(self) -> tuple[str, ...]:
        """The layers whose data entered the composite (a simulation never does)."""
        out = ["static"]
        if self.judge is not None and self.judge.measured:
            out.append("judge")
        mc = self.monte_carlo
        if mc is not None and mc.measured and not mc.simulated:
            out.append("monte_carlo")
        return tuple(out)

    @property
    def findings(self) -> tuple[Finding, ...]:
        extra: list[Finding] = list(self.static.notes)
        if self.judge is not None:
            extra.extend(self.judge.findings)
        if self.monte_carlo is not None:
            extra.extend(self.monte_carlo.findings)
        return self.parsed.findings + tuple(extra)


def router_factory(
    skill: ParsedSkill,
    static: StaticResult,
    negatives: Sequence[tuple[str, str]],
    runs: int,
    seed: int,
) -> tuple[McBackend, list[McPrompt]]:
    """The default (simulated) Monte Carlo backend: the offline TF-IDF router."""
    from evalflow.domain.plugineval.router import build_router_backend

    base = (
        static.sub_scores["structural_completeness"] + static.sub_scores["orchestration_wiring"]
    ) / 2.0
    return build_router_backend(
        skill.name or skill.dir_name,
        skill.description,
        skill.text,
        base,
        negatives,
        runs=runs,
        seed=seed,
        headings=skill.headings,
    )


def _default_judge_input(skill: ParsedSkill, options: EvalOptions, sha: str) -> JudgeInput:
    """The skill and evalflow's labelled test prompts: positives from its own description,
    name and headings; negatives from the distractors, the plugin's other entries and the
    corpus (minus this skill), so the set is fixed by (skill bytes, corpus, seed)."""
    from evalflow.domain.plugineval.judge_layer import JudgeInput, judge_prompts

    name = skill.name or skill.dir_name
    others = [(f"other:{n}", n, d) for n, d in options.negatives]
    if options.corpus is not None:
        others += [
            (f"corpus:{e.path}", e.name, e.description)
            for e in options.corpus.skills
            if e.sha256 != sha
        ]
    prompts = judge_prompts(
        name, skill.description, seed=options.seed, headings=skill.headings, others=others
    )
    return JudgeInput(
        name=name, description=skill.description, skill_md=skill.text, prompts=prompts
    )


def evaluate_skill(
    files: SkillFiles,
    resolve: Callable[[ParsedSkill], frozenset[str]],
    options: EvalOptions,
    *,
    judge_input: Callable[[ParsedSkill, JudgeInput], JudgeInput] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> SkillEvaluation:
    """Run the layers `options.depth` requests on one skill and combine them."""
    if options.depth not in LAYERS_FOR_DEPTH:
        raise ValueError(f"unknown depth {options.depth!r}")
    requested = LAYERS_FOR_DEPTH[options.depth]
    durations: dict[str, float] = {}

    t0 = clock()
    if options.compat == "public":
        from evalflow.domain.plugineval.compat import analyze_static_public, public_facts

        facts = public_facts(read_skill_text(files))
        parsed = facts.skill
        static = analyze_static_public(facts, resolve(parsed))
    else:
        parsed = parse_skill(files)
        static = analyze_static(parsed, resolve(parsed))
    durations["static"] = (clock() - t0) * 1000.0
    sha = hashlib.sha256(files.skill_md).hexdigest()

    layer_scores: dict[str, dict[str, float]] = {"static": static.dimensions}
    layer_cis: dict[str, dict[str, tuple[float, float]]] = {}
    with_data = ["static"]

    judge = None
    if "judge" in requested:
        from evalflow.domain.plugineval.judge_layer import (
            aggregate_judges,
            run_judges,
        )

        t0 = clock()
        if options.judges:
            base_input = _default_judge_input(parsed, options, sha)
            judge_in = judge_input(parsed, base_input) if judge_input else base_input
            judge = run_judges(options.judges, judge_in, seed=options.seed)
        else:
            judge = aggregate_judges([], requested=0)
        durations["judge"] = (clock() - t0) * 1000.0
        if judge.measured:
            layer_scores["judge"] = judge.dimensions
            layer_cis["judge"] = judge.cis
            with_data.append("judge")

    negatives = list(options.negatives)
    if options.corpus is not None:
        negatives += options.corpus.negatives(exclude_sha256=sha)

    mc = None
    if "monte_carlo" in requested:
        from evalflow.domain.plugineval.montecarlo import run_monte_carlo

        t0 = clock()
        factory = options.mc_factory or router_factory
        backend, prompts = factory(parsed, static, negatives, options.runs, options.seed)
        mc = run_monte_carlo(backend, prompts, runs=options.runs, seed=options.seed)
        durations["monte_carlo"] = (clock() - t0) * 1000.0
        if mc.measured and not mc.simulated:
            layer_scores["monte_carlo"] = mc.dimensions
            layer_cis["monte_carlo"] = mc.cis
            with_data.append("monte_carlo")

    dims = blend_dimensions(layer_scores, layer_cis)
    comp = composite_score({d: s.score for d, s in dims.items()}, static.penalty)
    sim_view = None
    if mc is not None and mc.measured and mc.simulated:
        sim_dims = blend_dimensions(
            {**layer_scores, "monte_carlo": mc.dimensions},
            {**layer_cis, "monte_carlo": mc.cis},
        )
        sim_comp = composite_score({d: s.score for d, s in sim_dims.items()}, static.penalty)
        sim_view = SimulatedView(mc.backend, sim_dims, sim_comp)

    elo = None
    if options.depth == "deep":
        from evalflow.domain.plugineval.elo import EloResult, skill_elo

        t0 = clock()
        if options.corpus is None:
            elo = EloResult(
                False,
                "no corpus: pass --corpus-dir DIR built by `evalflow plugin init PLUGINS_DIR`",
            )
        elif options.pairwise is not None:
            from evalflow.domain.plugineval.elo import judged_skill_elo
            from evalflow.domain.plugineval.parser import decode_skill_md

            candidate_md = decode_skill_md(files.skill_md, parsed.location)[0]
            elo = judged_skill_elo(
                candidate_md, sha, options.corpus, options.pairwise, seed=ELO_SEED
            )
        else:
            elo = _like_for_like_elo(layer_scores, layer_cis, options.corpus, sha, skill_elo)
        durations["elo"] = (clock() - t0) * 1000.0

    rating = elo.rating if elo is not None and elo.computed else None
    return SkillEvaluation(
        parsed=parsed,
        sha256=sha,
        depth=options.depth,
        static=static,
        judge=judge,
        monte_carlo=mc,
        elo=elo,
        dimensions=dims,
        composite=comp,
        badge=badge(comp.score, rating),
        confidence=confidence_label(with_data),
        durations_ms=durations,
        simulated=sim_view,
        compat=options.compat,
    )


def _like_for_like_elo(
    layer_scores: dict[str, dict[str, float]],
    layer_cis: dict[str, dict[str, tuple[float, float]]],
    corpus: CorpusIndex,
    sha: str,
    skill_elo: Callable[..., EloResult],
) -> EloResult:
    """The candidate re-blended with exactly the corpus's layers, then played against it."""
    from evalflow.domain.plugineval.elo import EloResult

    needed = LAYERS_FOR_DEPTH[corpus.depth]
    missing = [layer for layer in needed if layer not in layer_scores]
    if missing:
        return EloResult(
            False,
            f"the corpus was scored at depth {corpus.depth} ({', '.join(needed)}) but this "
            f"skill has no measured {', '.join(missing)} layer; Elo never mixes depths",
        )
    same = blend_dimensions(
        {k: v for k, v in layer_scores.items() if k in needed},
        {k: v for k, v in layer_cis.items() if k in needed},
    )
    return skill_elo(
        {d: s.score for d, s in same.items()},
        corpus.scores_by_path(exclude_sha256=sha),
        seed=ELO_SEED,
        basis=f"{corpus.depth} depth ({', '.join(needed)})",
    )
