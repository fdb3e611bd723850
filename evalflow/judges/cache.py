"""A content-addressed cache of model responses, one JSON file per request, and its upkeep.

The key is sha256 over everything that can change the answer: model, prompt version, the
full request parameters (system, messages, tools, tool choice, max tokens, ...), the run
index (so the k independent runs of a check never share an entry) and the scope (the run key).
It is content-addressed by what the judge read, not by the commit: the first turn holds the
check, the baseline's context and the diff surface's paths; every later turn holds the tool
results (file lines, grep hits, listings) the judge saw. So a new commit re-asks a check from
the first turn whose tool results differ — a change in a file the judge never read (nor found
by a search) re-asks nothing, one in a file it read re-asks from that turn on, and a new
prompt version, model, baseline or diff surface re-asks everything. Each verdict records the
blob ids of the files it read (`Verdict.read_blobs`), the content its answer rests on.

Every answer the API gave is kept, also one that is of no use: a
response that stopped on `max_tokens` or `refusal`, or that later failed validation, is stored
with `meta.unusable` saying why (`mark_unusable`). So an unchanged re-run replays the same
answers, reaches the same outcome (an UNSCORED check with the same reason included) and sends
no request; an answer is asked again only when the operator says so (`--rejudge unscored`:
the judges re-send the unusable answers of the conversations that ended without a verdict,
and the new answer replaces the old one). Files live under
`<cache root>/<first 2 hex of key>/<key>.json` and are written atomically (temp file in the
same directory, then `os.replace`), so a crash never leaves a half-written entry.

Because each response is stored the moment it arrives, an interrupted scoring run resumes
for free: re-running it replays the stored turns (tool calls are re-executed locally against
the same snapshot) and pays only for the calls that were never answered.

Entries hold the response body and `meta` — model, prompt version, run key, run index,
whether the answer was paid at the Message Batches price and, for an answer of no use, why
(`unusable`) — never request headers, never
credentials. `meta` is what `prune` selects on and what prices a replay like the original.

The cache keeps its own counters in `<cache root>/stats.jsonl`, one line per event, appended
with a single `O_APPEND` write (safe across threads and processes): a hit (a response replayed
instead of paid, with the dollars the original call cost) or a miss (a response the API had to
be paid for). `cache_stats` sums them with the entries' count and bytes for `evalflow cache
stats`; `prune` and `clear` are `evalflow cache prune|clear`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


# Stop reasons whose answer is of no use: stored all the same, marked `unusable`.
UNCACHEABLE_STOPS = frozenset({"max_tokens", "refusal"})
# Run keys of entries that belong to no framework run: PluginEval's judge, Monte Carlo and
# pairwise layers (a skill is judged wherever it is used) and the baseline drafter. Pruning by
# registered runs never drops them: a live benchmark still replays them.
NOT_RUN_KEYS = ("plugineval", "draft:")
# How an LLM judge's UNSCORED reason starts when no answer decided the check (the budget
# stopped it, the API failed, the judge raised): nothing is stored to replay, so a later run
# of the same inputs resumes it. Every other UNSCORED reason is an answer's outcome, replayed.
NO_ANSWER_REASONS = ("budget stop", "API failure:", "judge error:")
STATS_FILE = "stats.jsonl"
_HEX = frozenset("0123456789abcdef")


def cache_key(
    model: str, prompt_version: str, params: dict[str, Any], run: int, scope: str = ""
) -> str:
    """sha256 hex of the canonical JSON of everything that determines the response."""
    material = {
        "model": model,
        "prompt_version": prompt_version,
        "params": params,
        "run": run,
        "scope": scope,
    }
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def unanswered(reason: str | None) -> bool:
    """Whether an UNSCORED verdict's reason says no answer decided it (`NO_ANSWER_REASONS`)."""
    return bool(reason) and str(reason).startswith(NO_ANSWER_REASONS)


class ResponseCache:
    """Files under `root` (e.g. `<warehouse>/cache/anthropic`)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def _entry(self, key: str) -> dict[str, Any] | None:
        path = self.path(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable cache entry %s: %s", path, exc)
            return None
        if not isinstance(entry, dict) or entry.get("key") != key:
            log.warning("ignoring cache entry %s: it does not belong to its key", path)
            return None
        return entry if isinstance(entry.get("response"), dict) else None

    def get(self, key: str) -> dict[str, Any] | None:
        entry = self._entry(key)
        return None if entry is None else entry["response"]

    def get_with_meta(self, key: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """`(response, meta)` of an entry; `meta` is {} for entries stored without it."""
        entry = self._entry(key)
        if entry is None:
            return None
        meta = entry.get("meta")
        return entry["response"], meta if isinstance(meta, dict) else {}

    def put(
        self, key: str, response: dict[str, Any], meta: Mapping[str, Any] | None = None
    ) -> None:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        entry: dict[str, Any] = {"key": key, "response": response}
        if meta:
            entry["meta"] = dict(meta)
        body = json.dumps(entry, sort_keys=True, indent=1)
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:8]}-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(body)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def mark_unusable(self, key: str, problem: str) -> None:
        """Record on an entry why its answer is of no use (kept, replayed, never re-paid
        unless re-asked on purpose)."""
        found = self.get_with_meta(key)
        if found is None or found[1].get("unusable") == problem:
            return
        response, meta = found
        self.put(key, response, {**meta, "unusable": problem})

    def __contains__(self, key: str) -> bool:
        return self.path(key).is_file()

    def record_hit(self, usd: float) -> None:
        """A response replayed instead of paid; `usd` is what the original call cost."""
        self._count({"event": "hit", "usd": usd})

    def record_miss(self) -> None:
        """A response the API had to be paid for (interactive or through a batch)."""
        self._count({"event": "miss"})

    def _count(self, event: dict[str, Any]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        line = (json.dumps(event, separators=(",", ":")) + "\n").encode()
        fd = os.open(self.root / STATS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


def cache_roots(cache_dir: Path) -> list[Path]:
    """The response caches under a warehouse's cache directory (`anthropic`, `openai`, ...)."""
    if not cache_dir.is_dir():
        return []
    return sorted(p for p in cache_dir.iterdir() if p.is_dir() and _is_cache_root(p))


def _is_cache_root(path: Path) -> bool:
    return (path / STATS_FILE).is_file() or any(_is_shard(p) for p in path.iterdir())


def _is_shard(path: Path) -> bool:
    return path.is_dir() and len(path.name) == 2 and set(path.name) <= _HEX


def entry_files(root: Path) -> Iterator[Path]:
    """Every entry file of one cache root (not its stats or batch state)."""
    if not root.is_dir():
        return
    for shard in sorted(p for p in root.iterdir() if _is_shard(p)):
        yield from sorted(shard.glob("*.json"))


@dataclass(frozen=True)
class CacheStats:
    """One cache root's figures; the counters are None (unmeasured, never 0) for a cache
    that has no counters file — nothing was counted there (yet)."""

    backend: str
    entries: int
    bytes: int
    hits: int | None
    misses: int | None
    saved_usd: float | None

    @property
    def hit_rate(self) -> float | None:
        """Hits over counted lookups; None before any (not 0)."""
        if self.hits is None or self.misses is None or not self.hits + self.misses:
            return None
        return self.hits / (self.hits + self.misses)


def cache_stats(root: Path) -> CacheStats:
    files = list(entry_files(root))
    stats = root / STATS_FILE
    if not stats.is_file():
        return CacheStats(
            root.name, len(files), sum(f.stat().st_size for f in files), None, None, None
        )
    hits = misses = 0
    saved = 0.0
    for line in stats.read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a line cut by a crash: the counters stay honest, it is dropped
        if event.get("event") == "hit":
            hits += 1
            saved += float(event.get("usd") or 0.0)
        elif event.get("event") == "miss":
            misses += 1
    return CacheStats(
        backend=root.name,
        entries=len(files),
        bytes=sum(f.stat().st_size for f in files),
        hits=hits,
        misses=misses,
        saved_usd=saved,
    )


@dataclass(frozen=True)
class PruneResult:
    backend: str
    removed: int
    freed_bytes: int
    kept: int


def prune(
    root: Path,
    *,
    older_than_days: float | None = None,
    keep_prompt_versions: Iterable[str] | None = None,
    registered_runs: Iterable[str] | None = None,
    now: float | None = None,
) -> PruneResult:
    """Remove the entries that match any given rule: stored more than `older_than_days`
    ago; of a prompt version not in `keep_prompt_versions`; of a run key not in
    `registered_runs` (entries of PluginEval and the drafter, `NOT_RUN_KEYS`, belong to no
    run and are kept by that rule). An entry stored without `meta` has no known prompt
    version or run key, so the last two rules remove it (nothing could replay it with today's
    keys)."""
    cutoff = None if older_than_days is None else (now or time.time()) - older_than_days * 86400
    versions = None if keep_prompt_versions is None else set(keep_prompt_versions)
    runs = None if registered_runs is None else set(registered_runs)
    removed = freed = kept = 0
    for path in entry_files(root):
        try:
            size, stored = path.stat().st_size, path.stat().st_mtime
            meta = json.loads(path.read_text(encoding="utf-8")).get("meta") or {}
        except (OSError, ValueError, AttributeError):
            meta, size, stored = {}, 0, 0.0
        drop = (
            (cutoff is not None and stored < cutoff)
            or (versions is not None and meta.get("prompt_version") not in versions)
            or (
                runs is not None
                and meta.get("run_key") not in runs
                and not str(meta.get("run_key") or "").startswith(NOT_RUN_KEYS)
            )
        )
        if drop:
            path.unlink(missing_ok=True)
            removed, freed = removed + 1, freed + size
        else:
            kept += 1
    return PruneResult(root.name, removed, freed, kept)


def clear(root: Path) -> PruneResult:
    """Remove every entry, the counters and the batch state of one cache root."""
    before = cache_stats(root)
    if root.is_dir():
        shutil.rmtree(root)
    return PruneResult(root.name, before.entries, before.bytes, 0)
