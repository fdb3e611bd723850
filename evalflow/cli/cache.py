"""`evalflow cache`: the judges' response caches under the warehouse (`<workdir>/cache/<backend>`).

`stats` shows, per backend, the entries and their bytes and the cache's own counters — hits
(responses replayed instead of paid), misses (responses paid for) and the dollars the hits
would have cost (`evalflow.judges.cache`). `prune` drops entries by age, by prompt version
(entries no current judge can hit any more) or by run (run keys no longer registered);
`clear` drops everything, counters and Message Batches state included, after a confirmation
unless `--yes`. A light command: it never imports Dagster or an SDK.
"""

from __future__ import annotations

from pathlib import Path

import click

from evalflow.cli.output import emit_json, emit_table
from evalflow.errors import InputError
from evalflow.io import settings
from evalflow.judges.cache import PruneResult, cache_roots, cache_stats, clear, prune

warehouse_option = click.option(
    "--warehouse",
    default=None,
    help="Warehouse root (path or URI). Default: $EVALFLOW_WAREHOUSE or data/warehouse.",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


def _cache_dir(root: str | None) -> Path:
    return settings.warehouse(root).workdir / "cache"


def current_prompt_versions() -> set[str]:
    """The prompt versions of every judge evalflow has today (their cache keys' version)."""
    from evalflow.judges.claude_mc import MC_PROMPT_VERSION
    from evalflow.judges.claude_plugin import PLUGIN_PROMPT_VERSION
    from evalflow.judges.claude_skill_pairwise import SKILL_PAIRWISE_PROMPT_VERSION
    from evalflow.judges.prompt import PROMPT_VERSION

    return {
        PROMPT_VERSION,
        PLUGIN_PROMPT_VERSION,
        MC_PROMPT_VERSION,
        SKILL_PAIRWISE_PROMPT_VERSION,
    }


@click.group("cache")
def cache_group() -> None:
    """The judges' response caches: stats, prune, clear."""


@cache_group.command("stats")
@warehouse_option
@json_option
def stats_command(warehouse: str | None, as_json: bool) -> None:
    """Entries, bytes, hits, misses and dollars saved per judge backend."""
    roots = cache_roots(_cache_dir(warehouse))
    rows = [cache_stats(root) for root in roots]
    if as_json:
        emit_json(
            [
                {
                    "backend": s.backend,
                    "entries": s.entries,
                    "bytes": s.bytes,
                    "hits": s.hits,
                    "misses": s.misses,
                    "hit_rate": s.hit_rate,
                    "saved_usd": s.saved_usd,
                }
                for s in rows
            ]
        )
        return
    if not rows:
        click.echo(f"no response cache yet under {_cache_dir(warehouse)}", err=True)
        return
    emit_table(
        ["backend", "entries", "bytes", "hits", "misses", "hit_rate", "saved_usd"],
        [[s.backend, s.entries, s.bytes, s.hits, s.misses, s.hit_rate, s.saved_usd] for s in rows],
        title="Response cache",
    )


def _emit_results(results: list[PruneResult], as_json: bool, verb: str) -> None:
    if as_json:
        emit_json(
            [
                {
                    "backend": r.backend,
                    "removed": r.removed,
                    "freed_bytes": r.freed_bytes,
                    "kept": r.kept,
                }
                for r in results
            ]
        )
        return
    for r in results:
        click.echo(
            f"{r.backend}: {verb} {r.removed} entries ({r.freed_bytes} bytes), kept {r.kept}"
        )
    if not results:
        click.echo("no response cache: nothing to do")


@cache_group.command("prune")
@warehouse_option
@click.option(
    "--older-than",
    "older_than",
    type=click.FloatRange(min=0),
    default=None,
    metavar="DAYS",
    help="Drop entries stored more than DAYS days ago.",
)
@click.option(
    "--other-prompt-versions",
    is_flag=True,
    help="Drop entries of prompt versions no current judge uses (they can never be hit).",
)
@click.option(
    "--unregistered-runs",
    is_flag=True,
    help="Drop entries of run keys that are no longer registered in the warehouse.",
)
@json_option
def prune_command(
    warehouse: str | None,
    older_than: float | None,
    other_prompt_versions: bool,
    unregistered_runs: bool,
    as_json: bool,
) -> None:
    """Drop cache entries by age, prompt version or run (any rule given matches)."""
    if older_than is None and not other_prompt_versions and not unregistered_runs:
        raise InputError(
            "evalflow cache prune needs a rule",
            fix="pass --older-than DAYS, --other-prompt-versions and/or --unregistered-runs "
            "(or use evalflow cache clear)",
        )
    registered = None
    if unregistered_runs:
        from evalflow.io.registry import registered_keys

        registered = registered_keys(settings.warehouse(warehouse))
    versions = current_prompt_versions() if other_prompt_versions else None
    results = [
        prune(
            root,
            older_than_days=older_than,
            keep_prompt_versions=versions,
            registered_runs=registered,
        )
        for root in cache_roots(_cache_dir(warehouse))
    ]
    _emit_results(results, as_json, "pruned")


@cache_group.command("clear")
@warehouse_option
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@json_option
def clear_command(warehouse: str | None, yes: bool, as_json: bool) -> None:
    """Drop every cache entry, the counters and the batch state (asks first unless --yes)."""
    roots = cache_roots(_cache_dir(warehouse))
    if roots and not yes:
        total = sum(cache_stats(root).entries for root in roots)
        click.confirm(
            f"Delete {total} cached responses under {_cache_dir(warehouse)}? Rerunning will pay "
            "for them again",
            abort=True,
            err=True,
        )
    _emit_results([clear(root) for root in roots], as_json, "cleared")
