"""Model families for the self-preference rule (SPEC core rule 4: evaluator ≠ author).

Pure and dependency-free, so the offline pipeline can apply the rule without loading an SDK.
"""

from __future__ import annotations

import re

_DATED = re.compile(r"-\d{8}$")
_PROVIDER_PREFIX = re.compile(r"^(?:[a-z]{2}\.)?(?:anthropic[./]|openai/|google/|vertex_ai/)")


def bare_model(model: str) -> str:
    return _DATED.sub("", _PROVIDER_PREFIX.sub("", model.strip().lower()))


def model_family(model: str) -> str:
    """The vendor family of a model id, for the self-preference rule (SPEC core rule 4).

    claude-* → anthropic; gpt-* (gpt-oss too), o1/o3/o4… (any `o<digits>`), chatgpt-*, codex-*
    → openai; gemini-*/gemma-* → google; grok-* → xai; llama-* → meta;
    mistral/mixtral/codestral/devstral/magistral-* → mistral; deepseek-* → deepseek;
    qwen*/qwq-* → alibaba; kimi-*/moonshot-* → moonshot; glm-* → zhipu. Provider prefixes
    (`anthropic/`, `bedrock` style `anthropic.`, `openai/`), date suffixes and the organisation
    of a hub id as local servers name models (`meta-llama/Llama-3.1-8B-Instruct`,
    `Qwen/Qwen2.5-Coder-32B`, Gemini's `models/gemini-2.5-pro`) are ignored, and so is an
    Ollama tag (`llama3.1:8b`). Anything else is its own family: the first dash-separated
    token of the bare id.
    """
    bare = bare_model(model).rsplit("/", 1)[-1]
    rules: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("anthropic", ("claude",)),
        ("openai", ("gpt", "chatgpt", "codex")),
        ("google", ("gemini", "gemma")),
        ("xai", ("grok",)),
        ("meta", ("llama",)),
        ("mistral", ("mistral", "mixtral", "codestral", "devstral", "magistral")),
        ("deepseek", ("deepseek",)),
        ("alibaba", ("qwen", "qwq")),
        ("moonshot", ("kimi", "moonshot")),
        ("zhipu", ("glm",)),
    )
    head = re.split(r"[-_.:/ ]", bare, maxsplit=1)[0]
    if re.fullmatch(r"o\d+", head):
        return "openai"
    for family, prefixes in rules:
        if any(head == p or (len(p) > 2 and head.startswith(p)) for p in prefixes):
            return family
    return head


def same_family(judge_model: str, author_model: str | None) -> bool:
    """True when the judging model and the code's author model share a vendor family
    (claude-* vs claude-*, gpt-* vs o3, ...); False when the author is unknown."""
    if not author_model or not author_model.strip():
        return False
    return model_family(judge_model) == model_family(author_model)


# Judge backends whose verdict ids are `<backend>:<model>` with a model that has a family.
LLM_BACKENDS = ("anthropic", "openai")


def judge_family(judge_id: str) -> str | None:
    """The model family behind a verdict's `judge_id` (`anthropic:claude-…` → anthropic,
    `openai:gpt-…` → openai); None for judges without a model (heuristic, labels)."""
    backend, _, model = judge_id.partition(":")
    return model_family(model) if backend in LLM_BACKENDS and model else None


AUTHOR_UNKNOWN = "author unknown: rule 4 not verifiable"


def author_unknown_note(judge_model: object, author_model: object) -> str | None:
    """The Assumptions line when a model judges code whose author model is not recorded
    (SPEC §5): the self-preference rule can neither be applied nor ruled out. None when the
    author is known or no model judges (heuristic, labels)."""
    known = isinstance(author_model, str) and author_model.strip()
    if known or not (isinstance(judge_model, str) and judge_model.strip()):
        return None
    return (
        f"{AUTHOR_UNKNOWN} (SPEC core rule 4): the manifest has no author_model, so whether "
        f"the judge {judge_model} shares the author's model family is unknown; set "
        "author_model to the model that wrote the code."
    )
