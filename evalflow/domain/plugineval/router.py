"""The offline, deterministic Monte Carlo backend: a TF-IDF skill router. It is a SIMULATION.

No model is called. The router stands in for the agent's skill selection so `deep` runs
offline and reproducibly; every result it feeds is labelled `simulated: true` (JSON) and
"(simulated)" (Markdown), and it never raises the confidence label.

How it works:

* Catalogue — the skill under test plus negatives: a fixed set of unrelated distractor
  skills below, the corpus skills (when a corpus is given) and the plugin's agents. Each
  entry's routing text is its name (dashes as spaces) and its description — what a real
  agent sees when choosing a skill. Batch siblings are not added, so a skill scores the
  same alone or in a directory.
* Prompts — positives from the skill's own description and trigger phrases (split at
  "use when", commas, "or" and sentence ends) and from its task-like section headings
  (body topics: what the skill does, which the description should cover); negatives from
  other catalogue entries' phrases; put into fixed templates; 70 % positives, picked with
  `numpy.random.default_rng(seed)`. `labelled_prompts` also says where each prompt came from
  (`LabelledPrompt.source`: "description", "name", "heading", or the other entry's id), so
  the judge layer can grade a model's `would_trigger` against labels the model never saw.
* Routing — each prompt goes to the catalogue entry with the highest TF-IDF cosine
  (tf = 1 + log count, idf = log((1 + N) / (1 + df)) + 1, ties to the lowest id); no
  overlap at all routes nowhere. "activated" = routed to the skill under test.
* Quality of an activated should-trigger run = base × (0.85 + 0.15 × cosine(prompt,
  skill)), base = mean of the static structural_completeness and orchestration_wiring
  scores; the run "failed" when that quality is below 0.30. Off-topic activations have no
  quality.
* Tokens of an activated run = ceil(len(SKILL.md) / 4) + ceil(len(prompt) / 4) +
  150 + round(350 × quality) (≈ 4 characters per token); runs that did not activate the
  skill have no tokens (the skill never entered the context). The router never errors.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evalflow.domain.plugineval.montecarlo import Invocation, McPrompt

BACKEND_NAME = "offline-tfidf-router"
POSITIVE_SHARE = 0.7
FAIL_BELOW = 0.30

DISTRACTORS: tuple[tuple[str, str], ...] = (
    ("git-commit-messages", "Write conventional commit messages from a staged git diff."),
    ("sql-query-tuning", "Use when a SQL query is slow: read EXPLAIN plans and add indexes."),
    ("docker-compose-setup", "Use when containerising a service with Docker and compose files."),
    ("css-layout-fixes", "Fix CSS flexbox and grid layout bugs in web pages."),
    ("python-debugging", "Use when a Python program raises an exception or hangs; bisect it."),
    ("release-notes", "Draft release notes and changelogs from merged pull requests."),
    ("kubernetes-deploy", "Use when deploying to Kubernetes: manifests, rollouts, probes."),
    ("data-visualisation", "Plot charts from CSV or dataframes with matplotlib."),
    ("security-audit", "Use when auditing code for injection, secrets and unsafe dependencies."),
    ("api-client-codegen", "Generate typed API clients from an OpenAPI document."),
    ("email-drafting", "Write polite professional emails and meeting follow-ups."),
    ("regex-builder", "Build and explain regular expressions with test strings."),
)

_TOKEN_RE = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    {
        *("a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "when"),
        *("use", "this", "skill", "is", "are", "be", "it", "its", "as", "at", "by", "from"),
        *("that", "these", "those", "your", "you", "me", "my", "i", "we", "our", "can"),
        *("do", "does", "should", "would", "will", "into", "about", "how", "what"),
        *("which", "who", "whenever", "after", "before"),
    }
)
_TRIGGER_PREFIX_RE = re.compile(
    r"^\s*(?:use\s+(?:this\s+skill\s+)?(?:proactively\s+)?(?:when|whenever|for|to|after|before)"
    r"|use\s+proactively|trigger(?:s)?\s+(?:when|on)|when|whenever|while|during|for)\b",
    re.IGNORECASE,
)
_GENERIC_HEADING_WORDS = frozenset(
    {
        *("example", "examples", "troubleshooting", "related", "notes", "note", "input"),
        *("inputs", "output", "outputs", "format", "usage", "faq", "procedure", "overview"),
        *("steps", "step", "checklist", "glossary", "limits", "style", "reference"),
        *("references", "common", "issues", "edge", "cases", "quick", "start", "see", "also"),
    }
)
_SPLIT_RE = re.compile(r"[.;:!?\n]+|,|\bor\b|\band\b", re.IGNORECASE)
TEMPLATES: tuple[str, ...] = (
    "Can you help me with {p}?",
    "I need help {p}.",
    "Please take care of {p} for my project.",
    "What is the best way to handle {p}?",
    "Walk me through {p}.",
)


def tokenize(text: str) -> list[str]:
    return [t for t in _TOKEN_RE.findall(text.lower()) if t not in _STOPWORDS]


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    """One routable skill: a stable id, its name and its description."""

    skill_id: str
    name: str
    description: str

    @property
    def routing_text(self) -> str:
        return f"{self.name.replace('-', ' ').replace('_', ' ')} {self.description}"


class TfidfRouter:
    """Routes a prompt to the catalogue entry with the highest TF-IDF cosine."""

    def __init__(self, entries: Sequence[CatalogueEntry]) -> None:
        self.entries = tuple(entries)
        docs = [Counter(tokenize(e.routing_text)) for e in self.entries]
        n = len(docs)
        df: Counter[str] = Counter()
        for d in docs:
            df.update(d.keys())
        self.idf = {t: math.log((1 + n) / (1 + c)) + 1.0 for t, c in df.items()}
        self.vectors = [self._vector(d) for d in docs]

    def _vector(self, counts: Counter[str]) -> dict[str, float]:
        vec = {t: (1.0 + math.log(c)) * self.idf[t] for t, c in counts.items() if t in self.idf}
        norm = math.sqrt(sum(v * v for v in vec.values()))
        return {t: v / norm for t, v in vec.items()} if norm > 0 else {}

    def similarities(self, text: str) -> list[float]:
        q = self._vector(Counter(tokenize(text)))
        return [sum(w * v.get(t, 0.0) for t, w in q.items()) for v in self.vectors]

    def route(self, text: str) -> tuple[str | None, list[float]]:
        sims = self.similarities(text)
        best = max(sims, default=0.0)
        if best <= 0.0:
            return None, sims
        winners = [e.skill_id for e, s in zip(self.entries, sims, strict=True) if s == best]
        return min(winners), sims


def _sourced_phrases(name: str, description: str) -> list[tuple[str, str]]:
    """(phrase, "description" | "name"): the description's clauses first, then the name."""
    phrases: list[tuple[str, str]] = []
    for part in _SPLIT_RE.split(description):
        phrase = _TRIGGER_PREFIX_RE.sub("", part).strip(" -—()\"'")
        if len(tokenize(phrase)) >= 2 and phrase.lower() not in (p.lower() for p, _ in phrases):
            phrases.append((phrase, "description"))
    name_phrase = name.replace("-", " ").replace("_", " ").strip()
    if name_phrase and tokenize(name_phrase):
        phrases.append((name_phrase, "name"))
    return phrases


def trigger_phrases(name: str, description: str) -> list[str]:
    """Short task phrases from a description (trigger clauses first), else from the name."""
    return [phrase for phrase, _ in _sourced_phrases(name, description)]


def body_topics(headings: Sequence[str]) -> list[str]:
    """Task-like headings (≥ 2 words once generic section words are dropped)."""
    topics: list[str] = []
    for heading in headings:
        text = re.sub(r"^\d+[.)]\s*", "", heading).strip()
        words = [t for t in tokenize(text) if t not in _GENERIC_HEADING_WORDS]
        if len(words) >= 2 and text.lower() not in (t.lower() for t in topics):
            topics.append(text)
    return topics


@dataclass(frozen=True, slots=True)
class LabelledPrompt:
    """A generated prompt, evalflow's label for it, and the phrase's origin (for audits)."""

    text: str
    should_trigger: bool
    source: str


def labelled_prompts(
    target: CatalogueEntry,
    others: Sequence[CatalogueEntry],
    n: int,
    *,
    seed: int = 0,
    topics: Sequence[str] = (),
) -> list[LabelledPrompt]:
    """`n` prompts: 70 % about the target (its trigger phrases and body topics), labelled
    should-trigger; the rest from other entries' phrases, labelled should-not-trigger and
    sourced to that entry's id."""
    rng = np.random.default_rng(seed)
    positives = [
        *_sourced_phrases(target.name, target.description),
        *((t, "heading") for t in topics),
    ] or [(target.skill_id, "id")]
    negatives = [(p, o.skill_id) for o in others for p in trigger_phrases(o.name, o.description)]
    n_pos = n if not negatives else round(n * POSITIVE_SHARE)
    prompts: list[LabelledPrompt] = []
    for i in range(n):
        positive = i < n_pos
        pool = positives if positive else negatives
        phrase, source = pool[int(rng.integers(len(pool)))]
        template = TEMPLATES[int(rng.integers(len(TEMPLATES)))]
        prompts.append(LabelledPrompt(template.format(p=phrase.lower()), positive, source))
    return prompts


def generate_prompts(
    target: CatalogueEntry,
    others: Sequence[CatalogueEntry],
    n: int,
    *,
    seed: int = 0,
    topics: Sequence[str] = (),
) -> list[McPrompt]:
    """`labelled_prompts` as Monte Carlo prompts (the same draws, without the source)."""
    return [
        McPrompt(p.text, should_trigger=p.should_trigger)
        for p in labelled_prompts(target, others, n, seed=seed, topics=topics)
    ]


@dataclass
class RouterBackend:
    """`McBackend` over a `TfidfRouter`; see the module docstring for every derived number."""

    router: TfidfRouter
    target_id: str
    base_quality: float
    skill_tokens: int
    name: str = BACKEND_NAME
    simulated: bool = True

    def invoke(self, prompt: McPrompt, run_index: int) -> Invocation:
        routed, sims = self.router.route(prompt.text)
        if routed != self.target_id:
            return Invocation(activated=False, quality=None, failed=False, tokens=None)
        prompt_tokens = math.ceil(len(prompt.text) / 4)
        if not prompt.should_trigger:
            return Invocation(True, None, False, self.skill_tokens + prompt_tokens + 150)
        target_index = next(
            i for i, e in enumerate(self.router.entries) if e.skill_id == self.target_id
        )
        quality = max(0.0, min(1.0, self.base_quality * (0.85 + 0.15 * sims[target_index])))
        tokens = self.skill_tokens + prompt_tokens + 150 + round(350 * quality)
        return Invocation(True, quality, quality < FAIL_BELOW, tokens)


TARGET_ID = "candidate"


def build_router_backend(
    name: str,
    description: str,
    skill_text: str,
    base_quality: float,
    negatives: Sequence[tuple[str, str]],
    *,
    runs: int,
    seed: int = 0,
    headings: Sequence[str] = (),
) -> tuple[RouterBackend, list[McPrompt]]:
    """Catalogue = the skill + DISTRACTORS + `negatives` (name, description); prompts for it.

    `headings` (the skill's own section titles) add body topics to the positive prompts, so
    a description that does not cover what the body does routes those prompts elsewhere.
    """
    target = CatalogueEntry(TARGET_ID, name, description)
    others = [CatalogueEntry(f"distractor:{n}", n, d) for n, d in DISTRACTORS]
    others += [CatalogueEntry(f"other:{i:04d}:{n}", n, d) for i, (n, d) in enumerate(negatives)]
    router = TfidfRouter([target, *others])
    backend = RouterBackend(
        router=router,
        target_id=TARGET_ID,
        base_quality=base_quality,
        skill_tokens=math.ceil(len(skill_text) / 4),
    )
    prompts = generate_prompts(target, others, runs, seed=seed, topics=body_topics(headings))
    return backend, prompts
