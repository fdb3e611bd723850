"""The offline TF-IDF router: deterministic, labelled simulated, routes by description."""

from __future__ import annotations

import math

import pytest

from evalflow.domain.plugineval.montecarlo import McPrompt, run_monte_carlo
from evalflow.domain.plugineval.router import (
    TARGET_ID,
    CatalogueEntry,
    TfidfRouter,
    body_topics,
    build_router_backend,
    generate_prompts,
    labelled_prompts,
    trigger_phrases,
)

SPEC_DESC = (
    "Use this skill when writing a feature specification, when drafting acceptance "
    "criteria, or when turning a PRD into requirements."
)


def test_trigger_phrases_strip_trigger_words() -> None:
    phrases = trigger_phrases("spec-writer", SPEC_DESC)
    assert phrases[0] == "writing a feature specification"
    assert "drafting acceptance criteria" in phrases
    assert phrases[-1] == "spec writer"


def test_router_picks_the_most_similar_description() -> None:
    router = TfidfRouter(
        [
            CatalogueEntry("spec", "spec-writer", SPEC_DESC),
            CatalogueEntry("sql", "sql-tuning", "Use when a SQL query is slow; add indexes."),
        ]
    )
    assert router.route("help me draft acceptance criteria")[0] == "spec"
    assert router.route("my sql query is slow")[0] == "sql"
    assert router.route("zzz qqq")[0] is None


def test_prompts_are_seeded_and_split_70_30() -> None:
    target = CatalogueEntry(TARGET_ID, "spec-writer", SPEC_DESC)
    others = [CatalogueEntry("o", "sql-tuning", "Use when a SQL query is slow.")]
    a = generate_prompts(target, others, 50, seed=7)
    assert a == generate_prompts(target, others, 50, seed=7)
    assert a != generate_prompts(target, others, 50, seed=8)
    assert sum(p.should_trigger for p in a) == 35
    assert all(not p.should_trigger for p in a[35:])
    # with no other skills every prompt is a positive
    assert all(p.should_trigger for p in generate_prompts(target, [], 10))


def test_labelled_prompts_say_where_each_phrase_came_from() -> None:
    target = CatalogueEntry("candidate", "spec-writer", SPEC_DESC)
    others = [CatalogueEntry("distractor:sql", "sql-tuning", "Use when a SQL query is slow.")]
    topics = ["Writing user stories"]
    labelled = labelled_prompts(target, others, 40, seed=2, topics=topics)
    # the same draws as the Monte Carlo prompts, with a source added
    plain = generate_prompts(target, others, 40, seed=2, topics=topics)
    assert [McPrompt(p.text, p.should_trigger) for p in labelled] == plain
    sources = {(p.should_trigger, p.source) for p in labelled}
    assert sources == {
        (True, "description"),
        (True, "name"),
        (True, "heading"),
        (False, "distractor:sql"),
    }
    heading = next(p for p in labelled if p.source == "heading")
    assert "writing user stories" in heading.text


def test_router_backend_is_simulated_and_derives_quality_and_tokens() -> None:
    text = "x" * 400
    backend, prompts = build_router_backend(
        SPEC_DESC and "spec-writer", SPEC_DESC, text, 0.8, [], runs=50, seed=0
    )
    assert backend.simulated is True
    assert len(prompts) == 50
    inv = backend.invoke(McPrompt("writing a feature specification"), 0)
    assert inv.activated
    assert 0.8 * 0.85 <= inv.quality <= 0.8
    assert not inv.failed
    prompt_tokens = math.ceil(len("writing a feature specification") / 4)
    assert inv.tokens == 100 + prompt_tokens + 150 + round(350 * inv.quality)
    off = backend.invoke(McPrompt("my sql query is slow and needs an index"), 1)
    assert (off.activated, off.quality, off.tokens) == (False, None, None)


def test_low_base_quality_fails() -> None:
    backend, _ = build_router_backend("spec-writer", SPEC_DESC, "t", 0.2, [], runs=1)
    inv = backend.invoke(McPrompt("writing a feature specification"), 0)
    assert inv.failed


def test_full_simulated_run_is_reproducible() -> None:
    backend, prompts = build_router_backend("spec-writer", SPEC_DESC, "t" * 800, 0.7, [], runs=50)
    r1 = run_monte_carlo(backend, prompts, runs=50, seed=0)
    r2 = run_monte_carlo(backend, prompts, runs=50, seed=0)
    assert r1 == r2
    assert r1.simulated
    assert r1.measured
    assert r1.stats["activation_rate"] == pytest.approx(1.0)
    assert r1.stats["false_activation_rate"] == pytest.approx(0.0)


def test_body_topics_skip_generic_headings() -> None:
    headings = ["Spec Writer", "Examples", "3. Write acceptance scenarios", "Output format"]
    assert body_topics(headings) == ["Spec Writer", "Write acceptance scenarios"]


def test_description_that_misses_the_body_routes_poorly() -> None:
    headings = ["Write acceptance scenarios", "Extract user stories", "Number the requirements"]
    vague, prompts = build_router_backend(
        "helper", "Helps.", "t", 0.7, [], runs=50, headings=headings
    )
    clear, prompts2 = build_router_backend(
        "helper",
        "Use when writing acceptance scenarios, user stories or numbered requirements.",
        "t",
        0.7,
        [],
        runs=50,
        headings=headings,
    )
    vague_rate = run_monte_carlo(vague, prompts, runs=50).stats["activation_rate"]
    clear_rate = run_monte_carlo(clear, prompts2, runs=50).stats["activation_rate"]
    assert vague_rate < 0.8 < clear_rate
