"""A content-addressed cache of model responses, one JSON file per request.

The key is sha256 over everything that can change the answer: model, prompt version, the
full request parameters (system, messages, tools, tool choice, max tokens, ...), the run
index (so the k independent runs of a check never share an entry) and the scope — the run key
and the repository commit the conversation reads — so an answer given about one commit is
never replayed for another. Only answers worth replaying are kept: a response that stopped on
`max_tokens` or `refusal` is never stored, and an answer that later fails validation is
removed (`discard`), so a rejected answer cannot be replayed forever. Files live under
`<cache root>/<first 2 hex of key>/<key>.json` and are written atomically (temp file in the
same directory, then `os.replace`), so a crash never leaves a half-written entry.

Because each response is stored the moment it arrives, an interrupted scoring run resumes
for free: re-running it replays the stored turns (tool calls are re-executed locally against
the same snapshot) and pays only for the calls that were never answered.

Entries hold the response body only: never request headers, never credentials.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


UNCACHEABLE_STOPS = frozenset({"max_tokens", "refusal"})


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


class ResponseCache:
    """Files under `root` (e.g. `<warehouse>/cache/anthropic`)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
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
        response = entry.get("response")
        return response if isinstance(response, dict) else None

    def put(self, key: str, response: dict[str, Any]) -> None:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        body = json.dumps({"key": key, "response": response}, sort_keys=True, indent=1)
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:8]}-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(body)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def discard(self, key: str) -> None:
        """Forget an entry (an answer that failed validation)."""
        self.path(key).unlink(missing_ok=True)

    def __contains__(self, key: str) -> bool:
        return self.path(key).is_file()
